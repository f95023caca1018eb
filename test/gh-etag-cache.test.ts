// The conditional fetch keeps JSON answers only: a re-read of a JSON resource carries its ETag (a
// 304 is served from the cache), while a plain-text answer (a job's log, megabytes) is passed
// through and never kept, so its next read is a plain GET.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConditionalFetch } from "../server/gh/etag-cache.js";

test("JSON answers are kept and re-read conditionally; plain text is never kept", async () => {
  const sent: Array<{ url: string; ifNoneMatch: string | null }> = [];
  const inner: typeof fetch = async (input, init) => {
    const url = String(input);
    const ifNoneMatch = new Headers(init?.headers).get("if-none-match");
    sent.push({ url, ifNoneMatch });
    if (ifNoneMatch) return new Response(null, { status: 304, headers: { etag: ifNoneMatch } });
    const json = url.endsWith("/run");
    return new Response(json ? '{"id":1}' : "line 1\nline 2\n", {
      status: 200,
      headers: { etag: '"v1"', "content-type": json ? "application/json; charset=utf-8" : "text/plain; charset=utf-8" },
    });
  };
  const conditional = new ConditionalFetch({ fetch: inner });
  for (let i = 0; i < 2; i += 1) {
    assert.equal(await (await conditional.fetch("http://127.0.0.1:1/run")).text(), '{"id":1}');
    assert.equal(await (await conditional.fetch("http://127.0.0.1:1/logs")).text(), "line 1\nline 2\n");
  }
  assert.deepEqual(
    sent.map((s) => `${s.url.slice(s.url.lastIndexOf("/"))} ${s.ifNoneMatch ?? "-"}`),
    ["/run -", "/logs -", '/run "v1"', "/logs -"],
  );
  assert.equal(conditional.stats().cached, 1);
  assert.equal(conditional.stats().notModified, 1);
});
