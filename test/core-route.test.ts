// The route of an attempt (server/state/route.ts): labels over the ladder over the selector over
// the start, one row per case; and the frontier's exclusion of an issue whose afk-engine/ label
// names an engine the fleet cannot run (rebuild, pure).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { routeFor, type RoutePolicy, type RouteStep } from "../server/state/route.js";
import { rebuild, type RebuildConfig } from "../server/state/rebuild.js";
import type { Snapshot } from "../server/state/snapshot.js";
import { issuesSnapshot, snapshotIssue } from "./support/snapshots.js";

const policy: RoutePolicy = { start: { engine: "claude", model: "claude-sonnet-4-5" }, ladder: [{ model: "claude-opus-4-1" }, { engine: "codex" }] };
const cheap = { index: 1, step: { model: "claude-haiku-4-5" } satisfies RouteStep };
const toCodex = { index: 0, step: { engine: "codex", model: "gpt-5-mini" } satisfies RouteStep };
const toGemini = { index: 2, step: { engine: "gemini" } satisfies RouteStep };

type Row = {
  name: string;
  labels: string[];
  attempt: number;
  policy?: RoutePolicy;
  selector?: { index: number; step: RouteStep };
  want: { engine: string; model: string | null; from: string };
};
const rows: Row[] = [
  {
    name: "the first attempt runs the start's engine and model",
    labels: [],
    attempt: 1,
    want: { engine: "claude", model: "claude-sonnet-4-5", from: "start" },
  },
  {
    name: "attempt 2 runs the first rung: a stronger model of the same engine",
    labels: [],
    attempt: 2,
    want: { engine: "claude", model: "claude-opus-4-1", from: "ladder rung 1" },
  },
  {
    name: "attempt 3 runs the second rung: another engine, its default model",
    labels: [],
    attempt: 3,
    want: { engine: "codex", model: null, from: "ladder rung 2" },
  },
  { name: "later attempts stay on the last rung", labels: [], attempt: 7, want: { engine: "codex", model: null, from: "ladder rung 2" } },
  {
    name: "no ladder: every attempt runs the start's",
    labels: [],
    attempt: 3,
    policy: { ...policy, ladder: [] },
    want: { engine: "claude", model: "claude-sonnet-4-5", from: "start" },
  },
  {
    name: "an engine label outranks the ladder (case-insensitive prefix and name)",
    labels: ["bug", "AFK-Engine/Codex"],
    attempt: 2,
    want: { engine: "codex", model: null, from: "label afk-engine/codex" },
  },
  {
    name: "a model label keeps the routed engine",
    labels: ["afk-model/claude-haiku-4-5"],
    attempt: 1,
    want: { engine: "claude", model: "claude-haiku-4-5", from: "label afk-model/claude-haiku-4-5" },
  },
  {
    name: "engine and model labels together",
    labels: ["afk-engine/codex", "afk-model/gpt-5"],
    attempt: 3,
    want: { engine: "codex", model: "gpt-5", from: "label afk-engine/codex afk-model/gpt-5" },
  },
  { name: "a bare prefix names nothing", labels: ["afk-engine/"], attempt: 1, want: { engine: "claude", model: "claude-sonnet-4-5", from: "start" } },
  // The selector (selectors[].engine, model): above the start, below the ladder and the labels.
  {
    name: "a selector's model outranks the start's",
    labels: [],
    attempt: 1,
    selector: cheap,
    want: { engine: "claude", model: "claude-haiku-4-5", from: "selector 2" },
  },
  {
    name: "a selector's engine and model outrank the start's",
    labels: [],
    attempt: 1,
    selector: toCodex,
    want: { engine: "codex", model: "gpt-5-mini", from: "selector 1" },
  },
  {
    name: "a selector naming an engine without a model runs its default model",
    labels: [],
    attempt: 1,
    selector: toGemini,
    want: { engine: "gemini", model: null, from: "selector 3" },
  },
  {
    name: "the ladder outranks the selector on a retry: a rung without engine is the start's engine",
    labels: [],
    attempt: 2,
    selector: toCodex,
    want: { engine: "claude", model: "claude-opus-4-1", from: "ladder rung 1" },
  },
  {
    name: "with no ladder a retry stays on the selector's route",
    labels: [],
    attempt: 4,
    policy: { ...policy, ladder: [] },
    selector: toCodex,
    want: { engine: "codex", model: "gpt-5-mini", from: "selector 1" },
  },
  // model null: that engine's default (for the start's engine, births run the start's model).
  {
    name: "an engine label outranks the selector",
    labels: ["afk-engine/claude"],
    attempt: 1,
    selector: toCodex,
    want: { engine: "claude", model: null, from: "label afk-engine/claude" },
  },
  {
    name: "a model label keeps the selector's engine",
    labels: ["afk-model/o3"],
    attempt: 1,
    selector: toCodex,
    want: { engine: "codex", model: "o3", from: "label afk-model/o3" },
  },
  {
    name: "a selector step naming nothing leaves the start's route",
    labels: [],
    attempt: 1,
    selector: { index: 0, step: {} },
    want: { engine: "claude", model: "claude-sonnet-4-5", from: "start" },
  },
];

describe("routeFor", () => {
  for (const row of rows) it(row.name, () => assert.deepEqual(routeFor(row.policy ?? policy, row.labels, row.attempt, row.selector), row.want));
});

const NOW = new Date("2025-06-01T12:00:00.000Z");
const CONFIG: RebuildConfig = {
  labels: { ready: "ready-for-agent", escalate: "ready-for-human", epic: ["epic"], priority_high: "priority:high", attempt_prefix: "afk-attempt/" },
  selectors: [],
  gate: { ci: "required" },
  lease: { ttl_seconds: 3600, heartbeat_seconds: 300 },
};
const snapshot = (issues: Snapshot["issues"]): Snapshot => issuesSnapshot(issues, NOW);

describe("an afk-engine/ label naming an engine the fleet cannot run", () => {
  const snap = snapshot([
    snapshotIssue(1, { labels: ["ready-for-agent", "afk-engine/codex"] }),
    snapshotIssue(2, { labels: ["ready-for-agent", "AFK-Engine/Cluade"] }),
    snapshotIssue(3),
    snapshotIssue(4, { labels: ["ready-for-agent", "afk-engine/gemini"], assignees: ["bob"] }),
    snapshotIssue(5, { labels: ["ready-for-agent", "afk-engine/gemini"], blockedBy: [{ number: 3, id: 1003, state: "open" }] }),
  ]);
  const table: Array<{ name: string; engines: readonly string[] | undefined; dispatch: number[]; excluded: Record<number, string> }> = [
    {
      name: "is excluded with the engines it may name and the fix; a known engine's label is dispatched",
      engines: ["claude", "codex"],
      dispatch: [1, 3],
      excluded: {
        2: 'labelled afk-engine/cluade: engine "cluade" is not one this fleet runs (claude, codex): fix the label, or define it under config "engines" (verified at start)',
        4: "assigned to @bob",
        5: 'labelled afk-engine/gemini: engine "gemini" is not one this fleet runs (claude, codex): fix the label, or define it under config "engines" (verified at start)',
      },
    },
    {
      name: "an opaque-command fleet follows no engine label: every labelled issue is excluded",
      engines: [],
      dispatch: [3],
      excluded: {
        1: "labelled afk-engine/codex, but this fleet runs an opaque worker_command and follows no engine label: start it with engine, or remove the label",
        2: "labelled afk-engine/cluade, but this fleet runs an opaque worker_command and follows no engine label: start it with engine, or remove the label",
        4: "assigned to @bob",
        5: "labelled afk-engine/gemini, but this fleet runs an opaque worker_command and follows no engine label: start it with engine, or remove the label",
      },
    },
    { name: "no engine list: labels are not checked", engines: undefined, dispatch: [1, 2, 3], excluded: { 4: "assigned to @bob", 5: "blocked by open #3" } },
  ];
  for (const row of table) {
    it(row.name, () => {
      const set = rebuild(snap, CONFIG, "me1", NOW, row.engines === undefined ? {} : { engines: row.engines });
      assert.deepEqual(
        set.frontier.dispatch.map((d) => d.number),
        row.dispatch,
      );
      assert.deepEqual(Object.fromEntries(set.frontier.excluded.map((e) => [e.number, e.text])), row.excluded);
      for (const e of set.frontier.excluded.filter((x) => x.reason.kind === "engine_unknown"))
        assert.deepEqual(e.reason, {
          kind: "engine_unknown",
          label: `afk-engine/${String((e.reason as { engine: string }).engine)}`,
          engine: (e.reason as { engine: string }).engine,
          known: [...row.engines!],
        });
    });
  }
});

describe("a selector's route in the working set", () => {
  const snap = snapshot([snapshotIssue(1, { labels: ["docs"] }), snapshotIssue(2), snapshotIssue(3, { labels: ["bug"] })]);
  it("maps each picked issue to the first selector that picks it, when that selector names an engine or model", () => {
    const set = rebuild(
      snap,
      { ...CONFIG, selectors: [{ label: "docs", model: "claude-haiku-4-5" }, { label: "ready-for-agent" }, { label: "bug", engine: "codex" }] },
      "me1",
      NOW,
    );
    assert.deepEqual(
      [...(set.selector_routes ?? new Map())].sort(([a], [b]) => a - b),
      [
        [1, { index: 0, step: { model: "claude-haiku-4-5" } }],
        [3, { index: 2, step: { engine: "codex" } }],
      ],
    );
  });
  it("is absent when no selector names one", () => {
    const set = rebuild(snap, { ...CONFIG, selectors: [{ label: "docs" }, { label: "ready-for-agent" }] }, "me1", NOW);
    assert.equal(set.selector_routes, undefined);
  });
});
