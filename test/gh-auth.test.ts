// Slugs, token resolution, GITHUB_API_URL, redaction, and the error mapping, each through
// real parts: a real `gh` stand-in on PATH, a real HTTP server on 127.0.0.1 answering the way
// GitHub does, and the real client built by createClient.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatSlug, parseSlug } from "../server/gh/slug.js";
import { apiBaseUrl, redact, resolveToken } from "../server/gh/auth.js";
import { createClient, silentLogger } from "../server/gh/octokit.js";
import { ForgeError, UsageError } from "../server/gh/errors.js";
import { ConditionalFetch } from "../server/gh/etag-cache.js";

const TOKEN = "ghp_0123456789abcdefTOKENVALUE";

test("slugs: owner/name and remote URLs parse; everything else is refused naming the form", () => {
  const good: [string, string][] = [
    ["octocat/hello-world", "octocat/hello-world"],
    ["  afk/demo  ", "afk/demo"],
    ["a/b.c_d-e", "a/b.c_d-e"],
    ["Org-1/.github", "Org-1/.github"],
    ["https://github.com/octocat/hello-world", "octocat/hello-world"],
    ["https://github.com/octocat/hello-world.git", "octocat/hello-world"],
    ["https://github.com/octocat/hello-world/", "octocat/hello-world"],
    ["git@github.com:octocat/hello-world.git", "octocat/hello-world"],
    ["ssh://git@github.com/octocat/hello-world.git", "octocat/hello-world"],
    ["https://ghe.example.com/team/repo.git", "team/repo"],
    ["http://127.0.0.1:4567/afk/demo.git", "afk/demo"],
    [`${"o".repeat(39)}/${"n".repeat(100)}`, `${"o".repeat(39)}/${"n".repeat(100)}`],
  ];
  for (const [input, expected] of good) assert.equal(formatSlug(parseSlug(input)), expected, input);

  const bad = [
    "",
    "octocat",
    "octocat/",
    "/hello",
    "a/b/c",
    "-octocat/repo",
    "octo cat/repo",
    "octo_cat/repo",
    `${"o".repeat(40)}/repo`,
    "octocat/.",
    "octocat/..",
    `octocat/${"n".repeat(101)}`,
    "octocat/re po",
    "octocat/repo;rm -rf",
    "ftp://github.com/o/n",
    "https://github.com/onlyowner",
  ];
  for (const input of bad) {
    assert.throws(
      () => parseSlug(input),
      (error: unknown) => {
        assert.ok(error instanceof UsageError, `${JSON.stringify(input)} → UsageError`);
        assert.match(error.message, /"owner\/name"/, "names the expected form");
        return true;
      },
    );
  }
  assert.throws(
    () => parseSlug(`https://x-access-token:${TOKEN}@github.com/-bad/n`),
    (error: unknown) => {
      assert.ok(error instanceof UsageError);
      assert.ok(!error.message.includes(TOKEN), "a token in a URL is never echoed");
      return true;
    },
  );
});

test("token: GITHUB_TOKEN, then GH_TOKEN, then `gh auth token`, else a refusal naming all three", async (t) => {
  const bin = await mkdtemp(join(tmpdir(), "afk-gh-"));
  t.after(() => rm(bin, { recursive: true, force: true }));
  const empty = join(bin, "empty");
  const withGh = join(bin, "with-gh");
  await mkdir(empty);
  await mkdir(withGh);
  const gh = join(withGh, "gh");
  await writeFile(gh, `#!/bin/sh\n[ "$1 $2" = "auth token" ] && echo "gho_fromGhCli1234" && exit 0\nexit 1\n`);
  await chmod(gh, 0o755);

  assert.deepEqual(await resolveToken({ env: { GITHUB_TOKEN: "a1234", GH_TOKEN: "b1234", PATH: withGh } }), { token: "a1234", source: "GITHUB_TOKEN" });
  assert.deepEqual(await resolveToken({ env: { GITHUB_TOKEN: "  ", GH_TOKEN: "b1234", PATH: withGh } }), { token: "b1234", source: "GH_TOKEN" });
  assert.deepEqual(await resolveToken({ env: { PATH: withGh } }), { token: "gho_fromGhCli1234", source: "gh auth token" });

  await assert.rejects(resolveToken({ env: { PATH: empty } }), (error: unknown) => {
    assert.ok(error instanceof UsageError);
    assert.match(error.message, /GITHUB_TOKEN/);
    assert.match(error.message, /GH_TOKEN/);
    assert.match(error.message, /gh auth login/);
    return true;
  });
  await assert.rejects(resolveToken({ env: { GITHUB_TOKEN: "abc\ndef" } }), UsageError, "a token with a newline could inject a header");
});

test("GITHUB_API_URL: default, trailing slash stripped, bad values refused", () => {
  assert.equal(apiBaseUrl({}), "https://api.github.com");
  assert.equal(apiBaseUrl({ GITHUB_API_URL: "https://ghe.example.com/api/v3/" }), "https://ghe.example.com/api/v3");
  assert.equal(apiBaseUrl({ GITHUB_API_URL: "http://127.0.0.1:3000" }), "http://127.0.0.1:3000");
  assert.throws(() => apiBaseUrl({ GITHUB_API_URL: "not a url" }), UsageError);
  assert.throws(() => apiBaseUrl({ GITHUB_API_URL: "ftp://x" }), UsageError);
  assert.throws(
    () => apiBaseUrl({ GITHUB_API_URL: `https://u:${TOKEN}@x` }),
    (error: unknown) => error instanceof UsageError && !error.message.includes(TOKEN),
  );
});

test("redact removes the token in every form it travels in", () => {
  const basic = Buffer.from(`x-access-token:${TOKEN}`).toString("base64");
  const text = `token ${TOKEN}; header Authorization: Basic ${basic}; url ?t=${encodeURIComponent(TOKEN)}`;
  const out = redact(text, [TOKEN, null, undefined, ""]);
  assert.ok(!out.includes(TOKEN));
  assert.ok(!out.includes(basic));
  assert.equal(out, "token ***; header Authorization: Basic ***; url ?t=***");
});

// A server that answers like GitHub does for each scenario, counting what it receives.
async function scriptedGitHub(t: { after(fn: () => Promise<void>): void }, handle: (req: IncomingMessage, res: ServerResponse, hits: number) => void) {
  const hits = new Map<string, number>();
  const server = createServer((req, res) => {
    const key = `${req.method} ${req.url}`;
    const n = (hits.get(key) ?? 0) + 1;
    hits.set(key, n);
    handle(req, res, n);
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  t.after(() => new Promise<void>((done) => server.close(() => done())));
  const port = (server.address() as AddressInfo).port;
  return { baseUrl: `http://127.0.0.1:${port}`, hits };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(JSON.stringify(body));
}

async function failure(promise: Promise<unknown>, what: string, toError: (e: unknown, w: string) => ForgeError): Promise<ForgeError> {
  try {
    await promise;
  } catch (error) {
    return toError(error, what);
  }
  assert.fail(`${what} should have failed`);
}

test("error mapping: every GitHub failure becomes one typed ForgeError without the token", async (t) => {
  const reset = Math.floor(Date.now() / 1000) + 42;
  const { baseUrl, hits } = await scriptedGitHub(t, (req, res) => {
    const url = req.url ?? "";
    if (url.startsWith("/401")) return json(res, 401, { message: "Bad credentials", documentation_url: "https://docs.github.com/rest" });
    if (url.startsWith("/403-primary"))
      return json(
        res,
        403,
        { message: "API rate limit exceeded for user ID 1." },
        { "x-ratelimit-remaining": "0", "x-ratelimit-limit": "5000", "x-ratelimit-reset": String(reset), "x-ratelimit-used": "5000" },
      );
    if (url.startsWith("/403-perm")) return json(res, 403, { message: "Resource not accessible by personal access token" });
    if (url.startsWith("/404")) return json(res, 404, { message: "Not Found" });
    if (url.startsWith("/405")) return json(res, 405, { message: "Pull Request is not mergeable" });
    if (url.startsWith("/409")) return json(res, 409, { message: "Head branch was modified. Review and try the merge again." });
    if (url.startsWith("/422"))
      return json(res, 422, {
        message: "Validation Failed",
        errors: [{ resource: "Label", code: "invalid", field: "color" }, { message: "name is too long" }],
      });
    if (url.startsWith("/502")) return json(res, 502, { message: "Server Error" });
    return json(res, 200, {});
  });
  const client = createClient({ token: TOKEN, baseUrl, fast: true, logger: silentLogger, retries: 2 });
  const call = (path: string) => client.octokit.request(`GET ${path}`);
  const toError = client.toError;

  const auth = await failure(call("/401"), "read /401", toError);
  assert.equal(auth.kind, "auth");
  assert.match(auth.hint, /GITHUB_TOKEN/);

  const limited = await failure(call("/403-primary"), "read /403-primary", toError);
  assert.equal(limited.kind, "rate_limited");
  assert.match(limited.message, /rate limit exceeded\. Retry after 4[0-3]s/);
  assert.ok(limited.retryAfterSeconds !== null && limited.retryAfterSeconds >= 40 && limited.retryAfterSeconds <= 43);
  assert.equal(client.rateLimit()?.remaining, 0, "the latest x-ratelimit-* headers are kept");
  assert.equal(client.rateLimit()?.reset, reset);

  assert.equal((await failure(call("/403-perm"), "read", toError)).kind, "forbidden");
  assert.equal((await failure(call("/404"), "read", toError)).kind, "not_found");
  const notMergeable = await failure(call("/405"), "merge #1", toError);
  assert.equal(notMergeable.kind, "not_mergeable");
  assert.match(notMergeable.message, /^merge #1: not mergeable \(405 Pull Request is not mergeable\)/);
  assert.equal((await failure(call("/409"), "merge #1", toError)).kind, "conflict");
  const invalid = await failure(call("/422"), "create label", toError);
  assert.equal(invalid.kind, "validation");
  assert.match(invalid.message, /Validation Failed: Label\.color invalid; name is too long/);
  const server = await failure(call("/502"), "read", toError);
  assert.equal(server.kind, "server");

  // Answers are not retried; a 5xx is (2 retries here).
  for (const path of ["/401", "/403-perm", "/404", "/405", "/409", "/422"]) assert.equal(hits.get(`GET ${path}`), 1, `${path} is not retried`);
  assert.equal(hits.get("GET /502"), 3, "a 502 is retried");
  for (const error of [auth, limited, notMergeable, invalid, server]) {
    assert.ok(!error.message.includes(TOKEN) && !error.hint.includes(TOKEN));
    assert.ok(error instanceof ForgeError);
  }
});

test("conditional fetch: one ETag per URL (query included) and per credential; a 304 replays body and headers", async (t) => {
  const seen: { url: string; inm: string | undefined; auth: string | undefined }[] = [];
  const { baseUrl } = await scriptedGitHub(t, (req, res) => {
    seen.push({ url: req.url ?? "", inm: req.headers["if-none-match"] as string | undefined, auth: req.headers.authorization });
    const page = new URL(req.url ?? "/", "http://x").searchParams.get("page") ?? "1";
    const etag = `W/"page-${page}"`;
    const headers = { etag, link: `<${baseUrl}/items?page=2>; rel="next"`, "x-ratelimit-limit": "5000", "x-ratelimit-remaining": String(4000 + seen.length) };
    if (req.headers["if-none-match"] === etag) {
      res.writeHead(304, headers);
      return res.end();
    }
    json(res, 200, [{ page }], headers);
  });
  const cf = new ConditionalFetch();
  const get = (path: string, token: string) => cf.fetch(`${baseUrl}${path}`, { headers: { authorization: `token ${token}` } });

  const first = await get("/items?page=1", "tokenAAAA");
  assert.deepEqual(await first.json(), [{ page: "1" }]);
  const again = await get("/items?page=1", "tokenAAAA");
  assert.equal(again.status, 200, "a 304 comes back as the 200 it stands for");
  assert.deepEqual(await again.json(), [{ page: "1" }]);
  assert.match(again.headers.get("link") ?? "", /rel="next"/, "the link header survives, so pagination goes on");
  assert.equal(again.headers.get("x-ratelimit-remaining"), "4002", "fresh rate-limit headers from the 304");
  await (await get("/items?page=2", "tokenAAAA")).json();
  await (await get("/items?page=1", "tokenBBBB")).json();

  assert.deepEqual(
    seen.map((s) => s.inm ?? null),
    [null, 'W/"page-1"', null, null],
    "page 2 and another token start unconditional",
  );
  assert.deepEqual(cf.stats(), { total: 4, notModified: 1, counted: 3, failed: 0, cached: 3 });
  assert.equal(cf.rateLimit()?.remaining, 4004);
});
