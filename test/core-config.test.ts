// The core against the real fleet config: the canonical config (schemas/config.ts) is
// assignable to the narrow slices the core declares, and its defaults drive rebuild and pace
// the way the config documents them.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_CONFIG, FleetConfigSchema, type FleetConfig } from "../schemas/config.js";
import type { CoreConfig } from "../server/state/config.js";
import { pace, type PaceInput } from "../server/state/pace.js";
import { rebuild, type RebuildConfig } from "../server/state/rebuild.js";
import type { Snapshot, SnapshotIssue } from "../server/state/snapshot.js";
import { issuesSnapshot, snapshotIssue } from "./support/snapshots.js";

// Compile-time: these assignments fail `tsc` if the config and the core drift apart.
const asCore: CoreConfig = DEFAULT_CONFIG;
const asRebuild: RebuildConfig = DEFAULT_CONFIG;
const asPace: PaceInput["config"] = DEFAULT_CONFIG;
const asFleet = (c: FleetConfig): CoreConfig => c;

const NOW = new Date("2025-06-01T12:00:00.000Z");

function issue(number: number, labels: string[], over: Partial<SnapshotIssue> = {}): SnapshotIssue {
  return snapshotIssue(number, { labels, ...over });
}

function snapshot(issues: SnapshotIssue[]): Snapshot {
  return issuesSnapshot(issues, NOW);
}

describe("core with the fleet config", () => {
  it("the canonical config is assignable to the core's slices", () => {
    assert.equal(asCore.labels.ready, "ready-for-agent");
    assert.equal(asRebuild.gate.ci, "required");
    assert.equal(asPace.lease.ttl_seconds, DEFAULT_CONFIG.lease.ttl_seconds);
    assert.equal(asFleet(DEFAULT_CONFIG), DEFAULT_CONFIG);
  });

  it("default config: ready issues dispatch; epic, prd, hold and escalated ones do not", () => {
    const ws = rebuild(
      snapshot([
        issue(1, ["ready-for-agent"]),
        issue(2, ["ready-for-agent", "epic"]),
        issue(3, ["ready-for-agent", "prd"]),
        issue(4, ["ready-for-agent", "afk-hold"]),
        issue(5, ["ready-for-agent", "ready-for-human"]),
        issue(6, ["bug"]),
        issue(7, ["ready-for-agent", "priority:high"]),
      ]),
      DEFAULT_CONFIG,
      "k3f9x2",
      NOW,
    );
    assert.deepEqual(
      ws.frontier.dispatch.map((d) => d.number),
      [7, 1],
    );
    assert.deepEqual(
      ws.frontier.excluded.map((e) => [e.number, e.reason.kind]),
      [
        [2, "epic"],
        [3, "epic"],
        [4, "human_reserved"],
        [5, "human_reserved"],
        [6, "not_selected"],
      ],
    );
  });

  it("a parsed selector without a label picks ready issues only; label: null lifts that", () => {
    const scoped = FleetConfigSchema.parse({ selectors: [{ tags: ["api"] }] });
    const open = FleetConfigSchema.parse({ selectors: [{ label: null, tags: ["api"] }] });
    const issues = [issue(1, ["tag:api"]), issue(2, ["tag:api", "ready-for-agent"])];
    assert.deepEqual(
      rebuild(snapshot(issues), scoped, "k3f9x2", NOW).frontier.dispatch.map((d) => d.number),
      [2],
    );
    assert.deepEqual(
      rebuild(snapshot(issues), open, "k3f9x2", NOW).frontier.dispatch.map((d) => d.number),
      [1, 2],
    );
  });

  it("default pacing respects the default lease while in flight", () => {
    const seconds = pace({ lastSummary: { moved: false, inFlight: 1 }, emptyTicks: 10, config: DEFAULT_CONFIG });
    assert.ok(seconds <= DEFAULT_CONFIG.lease.ttl_seconds / 2);
    assert.equal(seconds, DEFAULT_CONFIG.pacing.busy_seconds);
  });
});
