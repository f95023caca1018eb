// The CI gate with GitHub's semantics, one row per case.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { CheckRun, CommitStatus, RequiredChecks } from "../server/gh/forge.js";
import { evaluateGate, type GateState } from "../server/state/gate.js";

function run(name: string, status: string, conclusion: string | null, id = 1, title: string | null = null): CheckRun {
  return { id, name, status, conclusion, title, summary: null, text: null, detailsUrl: null, htmlUrl: null, appId: null };
}

function st(context: string, state: string, description: string | null = null): CommitStatus {
  return { context, state, description, targetUrl: null };
}

function required(...contexts: string[]): RequiredChecks {
  return { contexts, strict: true, source: contexts.length > 0 ? "protection" : "none", readable: true };
}

interface Row {
  name: string;
  runs?: CheckRun[];
  statuses?: CommitStatus[];
  required: RequiredChecks;
  state: GateState;
  failing?: string[];
  pending?: string[];
  noChecks?: boolean;
}

const rows: Row[] = [
  { name: "required check succeeded", runs: [run("ci", "completed", "success")], required: required("ci"), state: "green" },
  { name: "skipped passes", runs: [run("ci", "completed", "skipped")], required: required("ci"), state: "green" },
  { name: "neutral passes", runs: [run("ci", "completed", "neutral")], required: required("ci"), state: "green" },
  { name: "queued is pending", runs: [run("ci", "queued", null)], required: required("ci"), state: "pending", pending: ["ci"] },
  { name: "in_progress is pending", runs: [run("ci", "in_progress", null)], required: required("ci"), state: "pending", pending: ["ci"] },
  { name: "waiting is pending", runs: [run("ci", "waiting", null)], required: required("ci"), state: "pending" },
  { name: "failure is red", runs: [run("ci", "completed", "failure")], required: required("ci"), state: "red", failing: ["ci"] },
  { name: "cancelled is red", runs: [run("ci", "completed", "cancelled")], required: required("ci"), state: "red" },
  { name: "timed_out is red", runs: [run("ci", "completed", "timed_out")], required: required("ci"), state: "red" },
  { name: "action_required is red", runs: [run("ci", "completed", "action_required")], required: required("ci"), state: "red" },
  { name: "status success passes", statuses: [st("ci", "success")], required: required("ci"), state: "green" },
  { name: "status pending is pending", statuses: [st("ci", "pending")], required: required("ci"), state: "pending" },
  { name: "status error is red", statuses: [st("ci", "error")], required: required("ci"), state: "red", failing: ["ci"] },
  {
    name: "check run and status with one name: both must pass (status fails)",
    runs: [run("ci", "completed", "success")],
    statuses: [st("ci", "failure")],
    required: required("ci"),
    state: "red",
    failing: ["ci"],
  },
  {
    name: "check run and status with one name: both must pass (run pending)",
    runs: [run("ci", "in_progress", null)],
    statuses: [st("ci", "success")],
    required: required("ci"),
    state: "pending",
  },
  {
    name: "check run and status with one name: both pass",
    runs: [run("ci", "completed", "success")],
    statuses: [st("ci", "success")],
    required: required("ci"),
    state: "green",
  },
  {
    name: "required but missing is pending",
    runs: [run("lint", "completed", "success")],
    required: required("ci", "lint"),
    state: "pending",
    pending: ["ci"],
  },
  { name: "required status context with no statuses at all is pending", required: required("ci"), state: "pending", pending: ["ci"] },
  {
    name: "nothing required, nothing reported: pending (no CI has looked at the head yet)",
    required: required(),
    state: "pending",
    pending: ["(no check has reported on this head yet)"],
  },
  {
    name: "checks not read at all, nothing required: pending",
    required: required(),
    state: "pending",
    pending: ["(no check has reported on this head yet)"],
    noChecks: true,
  },
  { name: "checks not read at all, something required: pending", required: required("ci"), state: "pending", noChecks: true },
  {
    name: "nothing required: every reported check counts",
    runs: [run("ci", "completed", "success"), run("e2e", "completed", "failure", 2)],
    statuses: [st("coverage", "pending")],
    required: required(),
    state: "red",
    failing: ["e2e"],
    pending: ["coverage"],
  },
  {
    name: "something required: unrequired failures are ignored",
    runs: [run("ci", "completed", "success"), run("e2e", "completed", "failure", 2)],
    required: required("ci"),
    state: "green",
  },
  {
    name: "re-run: the newest run (highest id) decides",
    runs: [run("ci", "completed", "success", 7), run("ci", "completed", "failure", 3)],
    required: required("ci"),
    state: "green",
  },
  {
    name: "statuses are newest first: the first per context decides",
    statuses: [st("ci", "success"), st("ci", "failure")],
    required: required("ci"),
    state: "green",
  },
  {
    name: "red outranks pending",
    runs: [run("a", "completed", "failure"), run("b", "queued", null, 2)],
    required: required("a", "b"),
    state: "red",
    failing: ["a"],
    pending: ["b"],
  },
];

describe("gate: evaluateGate", () => {
  for (const row of rows) {
    it(row.name, () => {
      const checks = row.noChecks ? undefined : { sha: "abc", checkRuns: row.runs ?? [], statuses: row.statuses ?? [] };
      const result = evaluateGate(checks, row.required);
      assert.equal(result.state, row.state);
      if (row.failing)
        assert.deepEqual(
          result.failing.map((f) => f.name),
          row.failing,
        );
      if (row.pending) assert.deepEqual(result.pending, row.pending);
    });
  }

  it("failing entries carry a summary from the run or status", () => {
    const result = evaluateGate(
      { sha: "abc", checkRuns: [run("ci", "completed", "failure", 1, "3 tests failed")], statuses: [st("ci", "error", "boom")] },
      required("ci"),
    );
    assert.deepEqual(result.failing, [{ name: "ci", summary: "failure: 3 tests failed; error: boom" }]);
  });
});
