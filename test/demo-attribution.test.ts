// The demo bench's split of the fleet's requests: what went to designed failures (issues that did
// not land, PRs closed unmerged, attempt labels) and what is shared (lists), from the forge's answers.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { attribute } from "../bench/demo-attribution.js";
import type { ResponseRecord } from "../server/forge-emulator/index.js";

const R = "/repos/afk/demo";
const sha = (c: string): string => c.repeat(40);

function rec(method: string, path: string, body: unknown = null, extra: Partial<ResponseRecord> = {}): ResponseRecord {
  return { method, path: `${R}${path}`, rawPath: `${R}${path}`, status: method === "POST" ? 201 : 200, body, login: "afk-bot", counted: true, ...extra };
}

describe("demo request attribution", () => {
  it("charges failed attempts, unlanded issues and attempt labels to failures; lists stay shared", () => {
    const records: ResponseRecord[] = [
      rec("GET", "/issues", []), // shared
      rec("POST", "/pulls", { number: 10, head: { ref: "afk/1-one", sha: sha("a") } }), // #1 lands
      rec("POST", "/pulls", { number: 11, head: { ref: "afk/2-two", sha: sha("b") } }), // #2: attempt 1 fails
      rec("GET", `/commits/${sha("b")}/check-runs`, { check_runs: [] }),
      rec("POST", "/issues/2/labels", []),
      rec("PATCH", "/pulls/11", { number: 11 }),
      rec("POST", "/pulls", { number: 12, head: { ref: "afk/2-two", sha: sha("c") } }), // #2: attempt 2 lands
      rec("GET", "/pulls", [{ number: 12, head: { ref: "afk/2-two", sha: sha("d") } }]), // its synced head, seen in the list (shared)
      rec("GET", `/commits/${sha("d")}/check-runs`, { check_runs: [] }),
      rec("PUT", "/pulls/10/merge", { merged: true }),
      rec("PUT", "/pulls/12/merge", { merged: true }),
      rec("PATCH", "/issues/1", {}),
      rec("POST", "/issues/3/comments", {}), // #3 escalated
      rec("GET", `/commits/${sha("d")}/check-runs`, null, { status: 304, counted: false }), // free: not counted at all
      rec("GET", "/issues", [], { login: "ci" }), // another login: not the fleet's
    ];
    const spent = attribute(records, "afk-bot", new Set([1, 2]));
    assert.deepEqual(spent, { counted: 13, failures: 5, shared: 2 });
  });
});
