// The text a client shows of status (several show the model only the text): one renderer from
// the structured result, its head held to an exact snapshot, and each field that matters to a
// human or a model said in it — registration, births paused and why, merges, last and next
// tick, where the plan comes from.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { renderStatusHead } from "../server/tools/render.js";
import { renderTakeover } from "../server/tools/takeover.js";
import type { StatusResult } from "../server/host/api.js";

const paused: StatusResult = {
  scope: "worker",
  registration: {
    repo: "afk/demo",
    instance: "23xrntgsfx9t",
    target: 3,
    worker_command: "exit 3",
    base: "main",
    auto_merge: false,
    merges: "held",
    started_at: "2026-12-01T18:57:24.643Z",
  },
  plan: null,
  issue: null,
  workers: [],
  births: { paused: true, reason: "circuit breaker tripped after 3 fast worker deaths: fix the worker command, then project_reset", until: null },
  last_tick: "2026-12-01T18:57:29.279Z: 0 in flight; 0 worker(s); 8 ready; births held: births are paused",
  registrations: [],
  daemon: null,
  next_tick: "2026-12-01T19:22:29.499Z",
  source: { from: "fleet_tick", at: "2026-12-01T18:57:29.279Z", age_seconds: 15.6 },
};

describe("status text", () => {
  it("a paused fleet: the snapshot of its head", () => {
    assert.equal(
      renderStatusHead(paused).join("\n"),
      [
        "running: afk/demo, instance 23xrntgsfx9t, target 3 worker(s), base main, since 2026-12-01T18:57:24.643Z",
        "merges: HELD (started without auto_merge: green PRs wait for a human)",
        "births: PAUSED: circuit breaker tripped after 3 fast worker deaths: fix the worker command, then project_reset",
        "last tick: 2026-12-01T18:57:29.279Z: 0 in flight; 0 worker(s); 8 ready; births held: births are paused",
        "next tick: 2026-12-01T19:22:29.499Z",
        "plan: from the fleet's last tick, 15.6s old",
      ].join("\n"),
    );
  });

  it("says each state the structured content can hold: a usage-limit pause with its end, merges authorized, births open, a plan read now, no fleet", () => {
    const quota = renderStatusHead({ ...paused, births: { paused: true, reason: "usage limit reached", until: "2026-12-01T20:00:00.000Z" } }).join("\n");
    assert.match(quota, /^births: PAUSED: usage limit reached \(until 2026-12-01T20:00:00.000Z\)$/m);
    const authorized = renderStatusHead({ ...paused, registration: { ...paused.registration!, auto_merge: true, merges: "authorized" }, births: { paused: false, reason: null, until: null } }).join("\n");
    assert.match(authorized, /^merges: authorized/m);
    assert.match(authorized, /^births: open$/m);
    const gathered = renderStatusHead({ ...paused, source: { from: "gathered", at: "2026-12-01T19:00:00.000Z", age_seconds: 0 } }).join("\n");
    assert.match(gathered, /^plan: read from GitHub now \(2026-12-01T19:00:00.000Z\)$/m);
    const none = renderStatusHead({ ...paused, registration: null, births: null, last_tick: null, next_tick: null, source: null });
    assert.deepEqual(none, ["not running on this host (project_start starts it)"]);
  });
});

describe("takeover text", () => {
  const row = { instance: "abc123", host: "laptop", claims: [3, 7], claim_count: 2, heartbeat_at: "2026-12-01T19:00:00.000Z", heartbeat_age_seconds: 12, fresh: true, is_me: true, this_daemon: true };
  it("marks this machine's daemon and lists each instance's claims, as the structured rows do", () => {
    const text = renderTakeover({ action: "list", instances: [row, { ...row, instance: "peer9", host: null, claims: [], claim_count: 0, heartbeat_age_seconds: null, fresh: false, is_me: false, this_daemon: false }], from: null, taken: [], lost: [], message: "2 instance(s)" });
    assert.equal(
      text,
      [
        "2 instance(s)",
        "  abc123 (this machine's daemon)  host laptop  claims 2 (#3, #7)  heartbeat 12s ago  fresh",
        "  peer9  host ?  claims 0  heartbeat none  stale",
      ].join("\n"),
    );
    const mine = renderTakeover({ action: "list", instances: [{ ...row, this_daemon: false }], from: null, taken: [], lost: [], message: "1 instance(s)" });
    assert.match(mine, /abc123 \(this instance\)/);
  });
  it("names the issues taken, and cuts a long list with a count", () => {
    const taken = Array.from({ length: 25 }, (_, i) => ({ issue: i + 1, sha: "0".repeat(40) }));
    const text = renderTakeover({ action: "taken", instances: [], from: "peer9", taken, lost: [], message: "took 25 claim(s) from peer9" });
    assert.match(text, /^taken: #1, #2, .*#20 and 5 more$/m);
  });
});
