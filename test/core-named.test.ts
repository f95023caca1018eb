// Named issues, as table rows of the core: an `issues` selector's order is the dispatch order; a
// named issue or a pulled-in blocker that is not ready (fails the selector's label) is excluded
// as `not_ready` and says why; every named number that will not run is listed with its reason
// (closed, a pull request, absent, reserved, blocked …); and with an engine start each dispatched
// issue carries its route.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { rebuild, type RebuildConfig, type RebuildRouting, type WorkingSet } from "../server/state/rebuild.js";
import type { Selector } from "../server/state/selectors.js";
import { namedNumbers, notIssues, type NumberKind } from "../server/state/named.js";
import { snapshotIssue as issue } from "./support/snapshots.js";
import type { Snapshot, SnapshotIssue, SnapshotPull } from "../server/state/snapshot.js";

const NOW = new Date("2025-06-01T12:00:00.000Z");
const CONFIG: RebuildConfig = {
  labels: {
    ready: "ready-for-agent",
    escalate: "ready-for-human",
    hold: "afk-hold",
    epic: ["epic"],
    priority_high: "priority:high",
    attempt_prefix: "afk-attempt/",
  },
  selectors: [],
  gate: { ci: "required" },
  lease: { ttl_seconds: 3600, heartbeat_seconds: 300 },
};

const link = (number: number, state: "open" | "closed" = "open") => ({ number, id: 1000 + number, state });

function build(issues: SnapshotIssue[], selectors: Selector[], routing: RebuildRouting = {}, pulls: SnapshotPull[] = []): WorkingSet {
  const snap: Snapshot = {
    repo: "acme/widgets",
    login: "afk-bot",
    defaultBranch: "main",
    base: "main",
    takenAt: NOW.toISOString(),
    issues,
    pulls,
    claims: [],
    heartbeats: [],
    requiredChecks: { contexts: [], strict: false, source: "none", readable: true },
  };
  return rebuild(snap, { ...CONFIG, selectors }, "me1", NOW, routing);
}

const dispatched = (ws: WorkingSet): number[] => ws.frontier.dispatch.map((d) => d.number);
const reasonOf = (ws: WorkingSet, n: number) => ws.frontier.excluded.find((e) => e.number === n);

interface OrderRow {
  name: string;
  selectors: Selector[];
  issues: SnapshotIssue[];
  expect: number[];
}

const orderRows: OrderRow[] = [
  { name: "a list's order, not the numbers'", selectors: [{ issues: [3, 1, 2] }], issues: [issue(1), issue(2), issue(3)], expect: [3, 1, 2] },
  {
    name: "priority:high does not reorder a list (the list is the human's order)",
    selectors: [{ issues: [2, 1] }],
    issues: [issue(1, { labels: ["ready-for-agent", "priority:high"] }), issue(2)],
    expect: [2, 1],
  },
  {
    name: "a pulled-in blocker goes just before the first listed issue it holds up",
    selectors: [{ issues: [5, 3] }],
    issues: [issue(3, { blockedBy: [link(9)] }), issue(5), issue(9), issue(7)],
    expect: [5, 9],
  },
  {
    name: "a later selector's issues follow the list; a number listed twice keeps its first place",
    selectors: [{ issues: [4, 2, 4] }, { label: "ready-for-agent" }],
    issues: [issue(1), issue(2), issue(3), issue(4)],
    expect: [4, 2, 1, 3],
  },
  {
    name: "a named issue picked by an earlier selector keeps that selector's order",
    selectors: [{ label: "urgent" }, { issues: [2, 1] }],
    issues: [issue(1, { labels: ["ready-for-agent", "urgent"] }), issue(2)],
    expect: [1, 2],
  },
];

describe("named issues: dispatch order", () => {
  for (const row of orderRows) {
    it(row.name, () => assert.deepEqual(dispatched(build(row.issues, row.selectors)), row.expect));
  }
  it("overlap keeps a list's order (each listed issue is its own rank)", async () => {
    const { overlapOrder } = await import("../server/state/overlap.js");
    const ws = build([issue(1), issue(2)], [{ issues: [2, 1] }]);
    const { order } = overlapOrder(ws.frontier.dispatch, 1, new Map([[2, ["a.ts"]]]), new Set(["a.ts"]));
    assert.deepEqual(
      order.map((d) => d.number),
      [2, 1],
    );
  });
});

interface ReadyRow {
  name: string;
  selectors: Selector[];
  issues: SnapshotIssue[];
  issue: number;
  /** Its exclusion kind, or null: dispatched. */
  kind: string | null;
  text?: string;
  blocks?: number[];
}

const readyRows: ReadyRow[] = [
  {
    name: "a named issue without the ready label is not ready, and says so",
    selectors: [{ issues: [1] }],
    issues: [issue(1, { labels: ["needs-triage"] })],
    issue: 1,
    kind: "not_ready",
    text: "not ready: no label ready-for-agent; named by selector 1",
  },
  {
    name: "a named issue failing a tag facet names the tag",
    selectors: [{ label: null, issues: [1], tags: ["api"] }],
    issues: [issue(1)],
    issue: 1,
    kind: "not_ready",
    text: "no label tag:api",
  },
  {
    name: "an issue no list names stays not_selected",
    selectors: [{ issues: [1] }],
    issues: [issue(1), issue(2, { labels: [] })],
    issue: 2,
    kind: "not_selected",
  },
  {
    name: "a pulled-in blocker under triage (no ready label) is not ready, marked as pulled in",
    selectors: [{ issues: [1] }],
    issues: [issue(1, { blockedBy: [link(2)] }), issue(2, { labels: ["needs-triage"] })],
    issue: 2,
    kind: "not_ready",
    text: "an open blocker of #1, pulled in by selector 1",
    blocks: [1],
  },
  {
    name: "the named issue then waits for it",
    selectors: [{ issues: [1] }],
    issues: [issue(1, { blockedBy: [link(2)] }), issue(2, { labels: ["needs-info"] })],
    issue: 1,
    kind: "blocked",
  },
  {
    name: "a ready pulled-in blocker is dispatched",
    selectors: [{ issues: [1] }],
    issues: [issue(1, { blockedBy: [link(2)] }), issue(2)],
    issue: 2,
    kind: null,
  },
  {
    name: "a pulled-in blocker with the hold label is reserved for humans, marked as pulled in",
    selectors: [{ issues: [1] }],
    issues: [issue(1, { blockedBy: [link(2)] }), issue(2, { labels: ["ready-for-agent", "afk-hold"] })],
    issue: 2,
    kind: "human_reserved",
    blocks: [1],
  },
  {
    name: "a pulled-in blocker escalated to a human is reserved",
    selectors: [{ issues: [1] }],
    issues: [issue(1, { blockedBy: [link(2)] }), issue(2, { labels: ["ready-for-agent", "ready-for-human"] })],
    issue: 2,
    kind: "human_reserved",
  },
  {
    name: "a pulled-in blocker assigned to a person waits for them",
    selectors: [{ issues: [1] }],
    issues: [issue(1, { blockedBy: [link(2)] }), issue(2, { assignees: ["bob"] })],
    issue: 2,
    kind: "assigned",
  },
  {
    name: "with label: null a list asks no label of its blockers either",
    selectors: [{ label: null, issues: [1] }],
    issues: [issue(1, { labels: [], blockedBy: [link(2)] }), issue(2, { labels: ["needs-triage"] })],
    issue: 2,
    kind: null,
  },
];

describe("named issues: readiness of named issues and pulled-in blockers", () => {
  for (const row of readyRows) {
    it(row.name, () => {
      const ws = build(row.issues, row.selectors);
      const e = reasonOf(ws, row.issue);
      if (row.kind === null) {
        assert.equal(e, undefined, e?.text);
        assert.ok(dispatched(ws).includes(row.issue));
        return;
      }
      assert.equal(e?.reason.kind, row.kind, e?.text);
      if (row.text) assert.ok(e!.text.includes(row.text), e!.text);
      if (row.blocks) assert.deepEqual(e!.blocks, row.blocks);
    });
  }
});

interface SkipRow {
  name: string;
  selectors: Selector[];
  issues: SnapshotIssue[];
  pulls?: SnapshotPull[];
  kinds?: Array<[number, NumberKind]>;
  /** [number, reason] of every skipped named issue, in order. */
  expect: Array<[number, string]>;
}

const openPull = (number: number): SnapshotPull => ({
  number,
  title: "a PR",
  body: "",
  author: "alice",
  draft: false,
  head: { ref: "feature", sha: "s", repoFullName: "acme/widgets" },
  baseRef: "main",
});

const skipRows: SkipRow[] = [
  {
    name: "the issue's example: #2 closed, #99 absent, in the list's order",
    selectors: [{ issues: [3, 1, 99, 2] }],
    issues: [issue(1), issue(3)],
    kinds: [
      [99, "absent"],
      [2, "issue"],
    ],
    expect: [
      [99, "absent"],
      [2, "closed"],
    ],
  },
  {
    name: "without the host's look-ups a number not open is only said to be not open",
    selectors: [{ issues: [5] }],
    issues: [],
    expect: [[5, "not_open"]],
  },
  {
    name: "an open pull request is no issue, looked up or not",
    selectors: [{ issues: [7, 1] }],
    issues: [issue(1)],
    pulls: [openPull(7)],
    expect: [[7, "pull_request"]],
  },
  {
    name: "an open named issue that waits says why (reserved, not ready, blocked), then the blockers that wait",
    selectors: [{ issues: [4, 1, 2] }],
    issues: [
      issue(1, { labels: ["ready-for-agent", "ready-for-human"] }),
      issue(2, { labels: [] }),
      issue(4, { blockedBy: [link(6)] }),
      issue(6, { labels: ["needs-info"] }),
    ],
    expect: [
      [4, "blocked"],
      [1, "human_reserved"],
      [2, "not_ready"],
      [6, "not_ready"],
    ],
  },
  { name: "every named issue dispatched: nothing to say", selectors: [{ issues: [1] }], issues: [issue(1)], expect: [] },
];

describe("named issues: what will not run, and why", () => {
  for (const row of skipRows) {
    it(row.name, () => {
      const ws = build(row.issues, row.selectors, row.kinds ? { kinds: new Map(row.kinds) } : {}, row.pulls ?? []);
      assert.deepEqual(
        (ws.named ?? []).map((s) => [s.number, s.reason]),
        row.expect,
        JSON.stringify(ws.named),
      );
    });
  }
  it("no list: no named section", () => assert.equal(build([issue(1)], []).named, undefined));
  it("a blocker's row says which issues it holds up", () => {
    const ws = build([issue(1, { blockedBy: [link(2)] }), issue(2, { labels: [] })], [{ issues: [1] }]);
    assert.deepEqual(ws.named?.at(-1)?.blocks, [1]);
  });
  it("the numbers a start must refuse: absent ones and pull requests, in the lists' order", () => {
    const named = namedNumbers([{ issues: [3, 1, 99] }, { issues: [7, 3] }]);
    assert.deepEqual(
      named.map((n) => [n.number, n.selector]),
      [
        [3, 0],
        [1, 0],
        [99, 0],
        [7, 1],
      ],
    );
    const kinds = new Map<number, NumberKind>([
      [99, "absent"],
      [7, "pull"],
      [1, "issue"],
    ]);
    assert.deepEqual(notIssues(named, kinds), { absent: [99], pulls: [7] });
  });
});

describe("named issues: each dispatched issue's route", () => {
  const policy = { start: { engine: "claude", model: "sonnet" }, ladder: [{ model: "opus" }] };
  it("the start's route, a selector's, a label's, and the ladder's for a retry", () => {
    const ws = build(
      [issue(1), issue(2, { labels: ["ready-for-agent", "afk-engine/codex"] }), issue(3, { labels: ["ready-for-agent", "afk-attempt/1"] }), issue(4)],
      [{ issues: [4], model: "haiku" }, { label: "ready-for-agent" }],
      { policy },
    );
    const routes = Object.fromEntries(ws.frontier.dispatch.map((d) => [d.number, d.route]));
    assert.deepEqual(routes[4], { engine: "claude", model: "haiku", from: "selector 1" });
    assert.deepEqual(routes[1], { engine: "claude", model: "sonnet", from: "start" });
    assert.deepEqual(routes[2], { engine: "codex", model: null, from: "label afk-engine/codex" });
    assert.deepEqual(routes[3], { engine: "claude", model: "opus", from: "ladder rung 1" });
  });
  it("no engine start: no route", () => {
    assert.equal(build([issue(1)], []).frontier.dispatch[0]!.route, undefined);
  });
});
