// The text a client shows of status (several show the model only the text): one renderer from
// the structured result, its head held to an exact snapshot, and each field that matters to a
// human or a model said in it — registration, births paused and why, merges, last and next
// tick, where the plan comes from.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { renderStatusHead } from "../server/tools/render.js";
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
