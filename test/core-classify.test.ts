// The five no-PR outcomes and tick pacing, one row per case.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { classifyNoPr, type NoPrAction, type NoPrFacts, type NoPrOutcome } from "../server/state/classify.js";
import { pace, type PaceInput } from "../server/state/pace.js";

const idleFacts: NoPrFacts = {
  workerAlive: true,
  idleSeconds: 3600,
  graceSeconds: 600,
  verdict: null,
  commitsAhead: 0,
  blockersOpen: false,
};

interface ClassifyRow {
  name: string;
  facts: Partial<NoPrFacts>;
  outcome: NoPrOutcome;
  action: NoPrAction;
}

const classifyRows: ClassifyRow[] = [
  { name: "coding: recent activity", facts: { idleSeconds: 30 }, outcome: "coding", action: "leave" },
  { name: "coding: activity exactly at the grace", facts: { idleSeconds: 600 }, outcome: "coding", action: "leave" },
  { name: "coding: recent activity beats a verdict already posted", facts: { idleSeconds: 5, verdict: "giving-up" }, outcome: "coding", action: "leave" },
  {
    name: "ADR-0013 trap: commits ahead are not signs of life (idle + blocked verdict)",
    facts: { commitsAhead: 7, verdict: "blocked", blockersOpen: true },
    outcome: "idle_blocked",
    action: "escalate_dependency",
  },
  {
    name: "ADR-0013 trap: commits ahead and no verdict is idle_failed, not coding",
    facts: { commitsAhead: 3 },
    outcome: "idle_failed",
    action: "retry_or_escalate",
  },
  {
    name: "idle_done: already-satisfied with no changes",
    facts: { verdict: "already-satisfied" },
    outcome: "idle_done",
    action: "verify_empty_then_close",
  },
  {
    name: "already-satisfied with changes on the branch is refuted: idle_failed",
    facts: { verdict: "already-satisfied", commitsAhead: 2 },
    outcome: "idle_failed",
    action: "retry_or_escalate",
  },
  {
    name: "idle_blocked: every blocker closed now → re-dispatch",
    facts: { verdict: "blocked", blockersOpen: false },
    outcome: "idle_blocked",
    action: "redispatch",
  },
  {
    name: "idle_blocked: a blocker still open → escalate the gap",
    facts: { verdict: "blocked", blockersOpen: true },
    outcome: "idle_blocked",
    action: "escalate_dependency",
  },
  { name: "idle_failed: giving-up", facts: { verdict: "giving-up" }, outcome: "idle_failed", action: "retry_or_escalate" },
  { name: "idle_failed: idle past grace with no verdict", facts: {}, outcome: "idle_failed", action: "retry_or_escalate" },
  { name: "dead: no worker and no verdict", facts: { workerAlive: false }, outcome: "dead", action: "recover" },
  { name: "dead: no worker, recent commits, no verdict", facts: { workerAlive: false, idleSeconds: 10, commitsAhead: 4 }, outcome: "dead", action: "recover" },
  {
    name: "an exited worker's verdict is honoured (workers exit when done)",
    facts: { workerAlive: false, idleSeconds: 5, verdict: "already-satisfied" },
    outcome: "idle_done",
    action: "verify_empty_then_close",
  },
];

describe("classifyNoPr", () => {
  for (const row of classifyRows) {
    it(row.name, () => {
      const result = classifyNoPr({ ...idleFacts, ...row.facts });
      assert.equal(result.outcome, row.outcome);
      assert.equal(result.action, row.action);
      assert.ok(result.why.length > 0);
    });
  }
});

const paceConfig: PaceInput["config"] = {
  pacing: { busy_seconds: 90, idle_seconds: 1500, long_idle_seconds: 7200, idle_ticks_before_sleep: 3 },
  lease: { ttl_seconds: 4500, heartbeat_seconds: 600 },
};

interface PaceRow {
  name: string;
  input: Omit<PaceInput, "config">;
  config?: PaceInput["config"];
  seconds: number;
}

const paceRows: PaceRow[] = [
  { name: "busy: something moved", input: { lastSummary: { moved: true, inFlight: 0 }, emptyTicks: 0 }, seconds: 90 },
  { name: "busy: work in flight", input: { lastSummary: { moved: false, inFlight: 2 }, emptyTicks: 0 }, seconds: 90 },
  { name: "idle: nothing moved, nothing in flight", input: { lastSummary: { moved: false, inFlight: 0 }, emptyTicks: 1 }, seconds: 1500 },
  { name: "idle just below the sleep threshold", input: { lastSummary: { moved: false, inFlight: 0 }, emptyTicks: 2 }, seconds: 1500 },
  { name: "long idle after N empty ticks", input: { lastSummary: { moved: false, inFlight: 0 }, emptyTicks: 3 }, seconds: 7200 },
  {
    name: "in flight: capped at ttl/2",
    input: { lastSummary: { moved: false, inFlight: 1 }, emptyTicks: 0 },
    config: { pacing: { ...paceConfig.pacing, busy_seconds: 5000 }, lease: { ttl_seconds: 1200, heartbeat_seconds: 900 } },
    seconds: 600,
  },
  {
    name: "in flight: capped at the heartbeat cadence when that is shorter",
    input: { lastSummary: { moved: false, inFlight: 1 }, emptyTicks: 0 },
    config: { pacing: { ...paceConfig.pacing, busy_seconds: 5000 }, lease: { ttl_seconds: 4500, heartbeat_seconds: 300 } },
    seconds: 300,
  },
  {
    name: "in flight: the cap applies even after many empty ticks",
    input: { lastSummary: { moved: false, inFlight: 1 }, emptyTicks: 50 },
    config: { pacing: { ...paceConfig.pacing, busy_seconds: 9000 }, lease: { ttl_seconds: 100, heartbeat_seconds: 100 } },
    seconds: 50,
  },
  {
    name: "nothing in flight: no cap (long idle may exceed ttl/2)",
    input: { lastSummary: { moved: false, inFlight: 0 }, emptyTicks: 9 },
    config: { pacing: paceConfig.pacing, lease: { ttl_seconds: 600, heartbeat_seconds: 60 } },
    seconds: 7200,
  },
  {
    name: "never below one second",
    input: { lastSummary: { moved: true, inFlight: 0 }, emptyTicks: 0 },
    config: { pacing: { ...paceConfig.pacing, busy_seconds: 0 }, lease: paceConfig.lease },
    seconds: 1,
  },
];

describe("pace", () => {
  for (const row of paceRows) {
    it(row.name, () => {
      assert.equal(pace({ ...row.input, config: row.config ?? paceConfig }), row.seconds);
    });
  }
});
