// rebuild, table-driven: one row per named case. Frontier exclusions and their precedence,
// selector facets and priority, dependency cycles, my claims by PR state, peers' live and stale
// claims, the fingerprint and the straggler counts.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { CheckRun, Checks, CommitStatus } from "../server/gh/forge.js";
import { rebuild, type RebuildConfig, type WorkingSet } from "../server/state/rebuild.js";
import type { ExclusionKind } from "../server/state/frontier.js";
import type { MineStatus, StaleReason } from "../server/state/inflight.js";
import type { Selector } from "../server/state/selectors.js";
import { snapshotIssue } from "./support/snapshots.js";
import {
  formatClaimMessage,
  claimRefFrom,
  type ClaimRef,
  type Heartbeat,
  type Snapshot,
  type SnapshotIssue,
  type SnapshotPull,
} from "../server/state/snapshot.js";

// ---- builders ----------------------------------------------------------------------------------

const REPO = "acme/widgets";
const LOGIN = "afk-bot";
const ME = "me1";
const PEER = "peer1";
const NOW = new Date("2025-06-01T12:00:00.000Z");
const TTL = 3600;

const CONFIG: RebuildConfig = {
  labels: {
    ready: "ready-for-agent",
    escalate: "ready-for-human",
    epic: ["epic", "prd"],
    priority_high: "priority:high",
    attempt_prefix: "afk-attempt/",
  },
  selectors: [],
  gate: { ci: "required" },
  lease: { ttl_seconds: TTL, heartbeat_seconds: 300 },
};

function ago(seconds: number): string {
  return new Date(NOW.getTime() - seconds * 1000).toISOString();
}

const issue = snapshotIssue;

function pull(number: number, over: Partial<SnapshotPull> = {}): SnapshotPull {
  return {
    number,
    title: `pr ${number}`,
    body: "",
    author: "alice",
    draft: false,
    head: { ref: `feature/${number}`, sha: `head${number}`, repoFullName: REPO },
    baseRef: "main",
    ...over,
  };
}

/** The fleet's own PR for `forIssue`, on `afk/<n>-work`, with optional checks on its head. */
function fleetPull(number: number, forIssue: number, over: Partial<SnapshotPull> = {}): SnapshotPull {
  return pull(number, {
    author: LOGIN,
    head: { ref: `afk/${forIssue}-work`, sha: `head${number}`, repoFullName: REPO },
    body: `Closes #${forIssue}`,
    ...over,
  });
}

function run(name: string, status: string, conclusion: string | null, id = 1): CheckRun {
  return { id, name, status, conclusion, title: null, summary: null, text: null, detailsUrl: null, htmlUrl: null, appId: null };
}

function status(context: string, state: string): CommitStatus {
  return { context, state, description: null, targetUrl: null };
}

function checks(sha: string, runs: CheckRun[], statuses: CommitStatus[] = []): Checks {
  return { sha, checkRuns: runs, statuses };
}

function claim(issueNumber: number, instance: string, atSecondsAgo = 60, sha = `c${issueNumber}${instance}`): ClaimRef {
  return { issue: issueNumber, sha, instance, host: "box", at: ago(atSecondsAgo) };
}

function beat(instance: string, secondsAgo: number): Heartbeat {
  return { instance, sha: `hb-${instance}`, host: "box", at: ago(secondsAgo) };
}

function snapshot(over: Partial<Snapshot> = {}): Snapshot {
  return {
    repo: REPO,
    login: LOGIN,
    defaultBranch: "main",
    base: "main",
    takenAt: NOW.toISOString(),
    issues: [],
    pulls: [],
    claims: [],
    heartbeats: [beat(ME, 10)],
    requiredChecks: { contexts: [], strict: false, source: "none", readable: true },
    ...over,
  };
}

function build(snap: Snapshot, config: Partial<RebuildConfig> = {}): WorkingSet {
  return rebuild(snap, { ...CONFIG, ...config }, ME, NOW);
}

const dispatched = (ws: WorkingSet): number[] => ws.frontier.dispatch.map((d) => d.number);

// ---- exclusions --------------------------------------------------------------------------------

interface ExclusionRow {
  name: string;
  snap: Snapshot;
  config?: Partial<RebuildConfig>;
  /** The issue under test. */
  issue: number;
  /** Its exclusion kind, or null for "dispatched". */
  kind: ExclusionKind | null;
  /** A fragment the exclusion text must contain. */
  text?: string;
  detail?: Record<string, unknown>;
}

const exclusionRows: ExclusionRow[] = [
  { name: "plain ready issue is dispatched", snap: snapshot({ issues: [issue(1)] }), issue: 1, kind: null },
  { name: "not_selected: no ready label", snap: snapshot({ issues: [issue(1, { labels: ["bug"] })] }), issue: 1, kind: "not_selected" },
  {
    name: "ready label matched case-insensitively",
    snap: snapshot({ issues: [issue(1, { labels: ["Ready-For-Agent"] })] }),
    issue: 1,
    kind: null,
  },
  {
    name: "epic: epic label",
    snap: snapshot({ issues: [issue(1, { labels: ["ready-for-agent", "Epic"] })] }),
    issue: 1,
    kind: "epic",
    detail: { via: "label" },
  },
  {
    name: "epic: has native sub-issues",
    snap: snapshot({ issues: [issue(1, { subIssues: [7] })] }),
    issue: 1,
    kind: "epic",
    detail: { via: "sub_issues", count: 1 },
  },
  {
    name: "epic: sub-issue count without the list",
    snap: snapshot({ issues: [issue(1, { subIssueCount: 3 })] }),
    issue: 1,
    kind: "epic",
    detail: { count: 3 },
  },
  {
    name: "claimed: by me",
    snap: snapshot({ issues: [issue(1)], claims: [claim(1, ME)] }),
    issue: 1,
    kind: "claimed",
    text: "this instance",
    detail: { state: "mine", instance: ME },
  },
  {
    name: "claimed: by a live peer",
    snap: snapshot({ issues: [issue(1)], claims: [claim(1, PEER, 7200)], heartbeats: [beat(PEER, 30)] }),
    issue: 1,
    kind: "claimed",
    detail: { state: "peer_live", instance: PEER },
  },
  {
    name: "claimed: by a stale peer (still not dispatched: reclaim is a separate move)",
    snap: snapshot({ issues: [issue(1)], claims: [claim(1, PEER, 7200)], heartbeats: [beat(PEER, 7200)] }),
    issue: 1,
    kind: "claimed",
    text: "reclaimable",
    detail: { state: "stale" },
  },
  {
    name: "claimed: unreadable claim message",
    snap: snapshot({ issues: [issue(1)], claims: [claimRefFrom(1, "abc1234", "hello")] }),
    issue: 1,
    kind: "claimed",
    detail: { state: "stale", instance: null },
  },
  {
    name: "open_pr: body closes it",
    snap: snapshot({ issues: [issue(1)], pulls: [pull(9, { body: "This fixes #1." })] }),
    issue: 1,
    kind: "open_pr",
    detail: { pulls: [9] },
  },
  {
    name: "open_pr: title closes it",
    snap: snapshot({ issues: [issue(1)], pulls: [pull(9, { title: "Resolves #1: widgets" })] }),
    issue: 1,
    kind: "open_pr",
  },
  {
    name: "open_pr: the fleet's branch afk/1-… with no keyword",
    snap: snapshot({ issues: [issue(1)], pulls: [fleetPull(9, 1, { body: "" })] }),
    issue: 1,
    kind: "open_pr",
  },
  {
    name: "open_pr: a fork's PR that closes it (never landed, but work is in flight)",
    snap: snapshot({
      issues: [issue(1)],
      pulls: [pull(9, { body: "closes #1", head: { ref: "main", sha: "f", repoFullName: "mallory/widgets" } })],
    }),
    issue: 1,
    kind: "open_pr",
  },
  {
    name: "open_pr: same-repo qualified ref",
    snap: snapshot({ issues: [issue(1)], pulls: [pull(9, { body: "Fixes acme/widgets#1" })] }),
    issue: 1,
    kind: "open_pr",
  },
  {
    name: "another repo's #1 does not link",
    snap: snapshot({ issues: [issue(1)], pulls: [pull(9, { body: "Fixes other/repo#1" })] }),
    issue: 1,
    kind: null,
  },
  {
    name: "a fork's afk/1-… branch is not the fleet's",
    snap: snapshot({
      issues: [issue(1)],
      pulls: [pull(9, { head: { ref: "afk/1-x", sha: "f", repoFullName: "mallory/widgets" } })],
    }),
    issue: 1,
    kind: null,
  },
  {
    name: "blocked: native link to an open issue",
    snap: snapshot({ issues: [issue(1, { blockedBy: [{ number: 2, id: 2, state: "open" }] }), issue(2, { labels: [] })] }),
    issue: 1,
    kind: "blocked",
    detail: { by: [2] },
  },
  {
    name: "blocked: body section",
    snap: snapshot({ issues: [issue(1, { body: "## Blocked by\n- [ ] #2\n- #3\n\n## Notes\n- #4" }), issue(2), issue(3), issue(4)] }),
    issue: 1,
    kind: "blocked",
    detail: { by: [2, 3] },
    text: "#2, #3",
  },
  {
    name: "blocked: by an open PR",
    snap: snapshot({ issues: [issue(1, { body: "## Blocked by\n- #5" })], pulls: [pull(5)] }),
    issue: 1,
    kind: "blocked",
    detail: { by: [5] },
  },
  {
    name: "closed blocker unblocks (not among open issues)",
    snap: snapshot({ issues: [issue(1, { blockedBy: [{ number: 2, id: 2, state: "closed" }], body: "## Blocked by\n- #3" })] }),
    issue: 1,
    kind: null,
  },
  {
    name: "blocked: a native link GitHub reports open, outside our lists (another repository)",
    snap: snapshot({ issues: [issue(1, { blockedBy: [{ number: 999, id: 9, state: "open" }] })] }),
    issue: 1,
    kind: "blocked",
    detail: { by: [999] },
  },
  {
    name: "a written blocker outside our lists counts as closed",
    snap: snapshot({ issues: [issue(1, { body: "## Blocked by\n- #999" })] }),
    issue: 1,
    kind: null,
  },
  {
    name: "knownClosed wins over a stale open listing",
    snap: snapshot({ issues: [issue(1, { body: "## Blocked by\n- #2" }), issue(2, { labels: [] })], knownClosed: [2] }),
    issue: 1,
    kind: null,
  },
  {
    name: "human_reserved: escalate label",
    snap: snapshot({ issues: [issue(1, { labels: ["ready-for-agent", "Ready-For-Human"] })] }),
    issue: 1,
    kind: "human_reserved",
    detail: { via: "escalate_label" },
  },
  {
    name: "human_reserved: ready removed, attempt label remains",
    snap: snapshot({ issues: [issue(1, { labels: ["afk-attempt/1"] })] }),
    issue: 1,
    kind: "human_reserved",
    detail: { via: "ready_label_removed", artefacts: ["attempt label"] },
  },
  {
    name: "human_reserved: ready removed while my claim remains",
    snap: snapshot({ issues: [issue(1, { labels: [] })], claims: [claim(1, ME)] }),
    issue: 1,
    kind: "human_reserved",
    detail: { artefacts: ["claim"] },
  },
  {
    name: "human_reserved: ready removed while the fleet's PR is open",
    snap: snapshot({ issues: [issue(1, { labels: ["bug"] })], pulls: [fleetPull(9, 1)] }),
    issue: 1,
    kind: "human_reserved",
    detail: { artefacts: ["fleet PR #9"] },
  },
  {
    name: "no ready label and no fleet artefact is merely not_selected",
    snap: snapshot({ issues: [issue(1, { labels: ["bug"] })] }),
    issue: 1,
    kind: "not_selected",
  },
  {
    name: "a selector without the ready label still picks an issue with an attempt label",
    snap: snapshot({ issues: [issue(1, { labels: ["tag:api", "afk-attempt/1"] })] }),
    config: { selectors: [{ label: null, tags: ["api"] }] },
    issue: 1,
    kind: null,
  },
  {
    name: "human_reserved: hold label, whatever the selectors say",
    snap: snapshot({ issues: [issue(1, { labels: ["ready-for-agent", "AFK-Hold"] })] }),
    config: { labels: { ...CONFIG.labels, hold: "afk-hold" } },
    issue: 1,
    kind: "human_reserved",
    detail: { via: "hold_label" },
  },
  {
    name: "open_pr: the fleet's branch under a configured prefix",
    snap: snapshot({ issues: [issue(1)], pulls: [pull(9, { head: { ref: "bots/1-x", sha: "s", repoFullName: REPO } })] }),
    config: { worktree: { branch_prefix: "bots/" } },
    issue: 1,
    kind: "open_pr",
  },
  {
    name: "assigned: to a human",
    snap: snapshot({ issues: [issue(1, { assignees: ["bob"] })] }),
    issue: 1,
    kind: "assigned",
    detail: { assignees: ["bob"] },
  },
  {
    name: "assigned to the fleet login (any case) is fine",
    snap: snapshot({ issues: [issue(1, { assignees: ["AFK-Bot"] })] }),
    issue: 1,
    kind: null,
  },
  {
    name: "cycle: 2-cycle",
    snap: snapshot({ issues: [issue(1, { body: "## Blocked by\n- #2" }), issue(2, { blockedBy: [{ number: 1, id: 1, state: "open" }] })] }),
    issue: 2,
    kind: "cycle",
    detail: { members: [1, 2] },
  },
  {
    name: "cycle: 3-cycle",
    snap: snapshot({
      issues: [issue(1, { body: "## Blocked by\n- #2" }), issue(2, { body: "## Blocked by\n- #3" }), issue(3, { body: "## Blocked by\n- #1" })],
    }),
    issue: 3,
    kind: "cycle",
    detail: { members: [1, 2, 3] },
  },
  {
    name: "cycle: self-loop",
    snap: snapshot({ issues: [issue(1, { body: "### Blocked by\n- #1" })] }),
    issue: 1,
    kind: "cycle",
    detail: { members: [1] },
  },
  {
    name: "waiting on a cycle member is blocked, not a cycle",
    snap: snapshot({
      issues: [issue(1, { body: "## Blocked by\n- #2" }), issue(2, { body: "## Blocked by\n- #1" }), issue(3, { body: "## Blocked by\n- #1" })],
    }),
    issue: 3,
    kind: "blocked",
    detail: { by: [1] },
  },
  // precedence: one primary reason, the first that holds in EXCLUSION_PRECEDENCE
  {
    name: "precedence: human_reserved over claimed",
    snap: snapshot({ issues: [issue(1, { labels: ["ready-for-agent", "ready-for-human"] })], claims: [claim(1, ME)] }),
    issue: 1,
    kind: "human_reserved",
  },
  {
    name: "precedence: not_selected over epic",
    snap: snapshot({ issues: [issue(1, { labels: ["epic"] })] }),
    issue: 1,
    kind: "not_selected",
  },
  {
    name: "precedence: epic over claimed",
    snap: snapshot({ issues: [issue(1, { labels: ["ready-for-agent", "epic"] })], claims: [claim(1, PEER)] }),
    issue: 1,
    kind: "epic",
  },
  {
    name: "precedence: claimed over open_pr",
    snap: snapshot({ issues: [issue(1)], claims: [claim(1, ME)], pulls: [fleetPull(9, 1)] }),
    issue: 1,
    kind: "claimed",
  },
  {
    name: "precedence: open_pr over assigned",
    snap: snapshot({ issues: [issue(1, { assignees: ["bob"] })], pulls: [pull(9, { body: "closes #1" })] }),
    issue: 1,
    kind: "open_pr",
  },
  {
    name: "precedence: assigned over blocked",
    snap: snapshot({ issues: [issue(1, { assignees: ["bob"], body: "## Blocked by\n- #2" }), issue(2)] }),
    issue: 1,
    kind: "assigned",
  },
  {
    name: "precedence: cycle over blocked (a cycle member also waits on an open blocker outside it)",
    snap: snapshot({
      issues: [issue(1, { body: "## Blocked by\n- #2\n- #5" }), issue(2, { body: "## Blocked by\n- #1" }), issue(5)],
    }),
    issue: 1,
    kind: "cycle",
  },
];

describe("rebuild: frontier exclusions", () => {
  for (const row of exclusionRows) {
    it(row.name, () => {
      const ws = build(row.snap, row.config);
      const excluded = ws.frontier.excluded.filter((e) => e.number === row.issue);
      const inDispatch = dispatched(ws).includes(row.issue);
      if (row.kind === null) {
        assert.deepEqual(excluded, [], `expected #${row.issue} dispatched, got ${JSON.stringify(excluded)}`);
        assert.ok(inDispatch);
        return;
      }
      assert.equal(inDispatch, false);
      assert.equal(excluded.length, 1, "exactly one exclusion per issue");
      const [entry] = excluded;
      assert.equal(entry!.reason.kind, row.kind, entry!.text);
      if (row.text) assert.match(entry!.text, new RegExp(row.text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
      for (const [key, value] of Object.entries(row.detail ?? {})) {
        assert.deepEqual((entry!.reason as unknown as Record<string, unknown>)[key], value, `reason.${key}`);
      }
    });
  }
});

// ---- selectors and ordering --------------------------------------------------------------------

interface OrderRow {
  name: string;
  selectors?: Selector[];
  labels?: Partial<RebuildConfig["labels"]>;
  issues: SnapshotIssue[];
  /** Dispatch order. */
  expect: number[];
  /** Selector index per dispatched issue, when checked. */
  priorities?: Record<number, number>;
}

const orderRows: OrderRow[] = [
  { name: "default selector: ready label, by number", issues: [issue(3), issue(1), issue(2, { labels: [] })], expect: [1, 3] },
  {
    name: "priority:high first within a selector",
    issues: [issue(1), issue(2, { labels: ["ready-for-agent", "Priority:High"] }), issue(3)],
    expect: [2, 1, 3],
  },
  {
    name: "first selector that picks an issue decides its priority",
    selectors: [{ label: "urgent" }, { label: "ready-for-agent" }],
    issues: [issue(1), issue(5, { labels: ["urgent"] }), issue(3, { labels: ["ready-for-agent", "urgent"] })],
    expect: [3, 5, 1],
    priorities: { 3: 0, 5: 0, 1: 1 },
  },
  {
    name: "selector order beats priority:high",
    selectors: [{ label: "urgent" }, { label: "ready-for-agent" }],
    issues: [issue(1, { labels: ["ready-for-agent", "priority:high"] }), issue(9, { labels: ["urgent"] })],
    expect: [9, 1],
  },
  {
    name: "issues facet: explicit numbers, with label: null (no label needed), in the list's order",
    selectors: [{ label: null, issues: [4, 2] }],
    issues: [issue(1), issue(2, { labels: [] }), issue(4, { labels: [] })],
    expect: [4, 2],
  },
  {
    name: "tags facet ANDs over tag:<value> labels",
    selectors: [{ label: null, tags: ["api", "db"] }],
    issues: [
      issue(1, { labels: ["tag:api"] }),
      issue(2, { labels: ["tag:api", "TAG:DB"] }),
      issue(3, { labels: ["tag:db", "tag:api", "tag:ui"] }),
      issue(4, { labels: [] }),
    ],
    expect: [2, 3],
  },
  {
    name: "user facet: @me is the fleet login",
    selectors: [{ user: "@me" }],
    issues: [issue(1, { author: "alice" }), issue(2, { author: "AFK-bot" })],
    expect: [2],
  },
  {
    name: "user facet: a named login, with or without @",
    selectors: [{ user: "@Bob" }],
    issues: [issue(1, { author: "bob" }), issue(2, { author: "bobby" })],
    expect: [1],
  },
  {
    name: "epic facet: native sub-issues of the epic",
    selectors: [{ label: null, epic: 10 }],
    issues: [issue(10, { labels: ["epic"], subIssues: [11, 12] }), issue(11, { labels: [] }), issue(12, { labels: [] }), issue(13)],
    expect: [11, 12],
  },
  {
    name: "epic facet: prd: #N body line",
    selectors: [{ epic: 10 }],
    issues: [issue(11, { body: "Context\nprd: #10\n" }), issue(12, { body: "prd: #100" })],
    expect: [11],
  },
  {
    name: "epic facet: prd:N label",
    selectors: [{ label: null, epic: 10 }],
    issues: [issue(11, { labels: ["PRD:10"] }), issue(12, { labels: ["prd:1"] })],
    expect: [11],
  },
  {
    name: "epic facet: parent link",
    selectors: [{ epic: 10 }],
    issues: [issue(11, { parent: 10 }), issue(12, { parent: 9 })],
    expect: [11],
  },
  {
    name: "milestone facet: by title, case-insensitive",
    selectors: [{ milestone: "v1.0" }],
    issues: [issue(1, { milestone: "V1.0" }), issue(2, { milestone: "v2.0" }), issue(3)],
    expect: [1],
  },
  {
    name: "several facets in one selector must all match",
    selectors: [{ label: "ready-for-agent", user: "bob", milestone: "m1" }],
    issues: [
      issue(1, { author: "bob", milestone: "m1" }),
      issue(2, { author: "bob" }),
      issue(3, { author: "carol", milestone: "m1" }),
      issue(4, { author: "bob", milestone: "m1", labels: [] }),
    ],
    expect: [1],
  },
  {
    name: "an absent label facet means the ready label (as the config documents)",
    selectors: [{ issues: [1, 2] }],
    issues: [issue(1), issue(2, { labels: [] })],
    expect: [1],
  },
  {
    name: "null facets do not filter (the config's canonical shape)",
    selectors: [{ label: "bug", issues: null, tags: [], user: null, epic: null, milestone: null }],
    issues: [issue(1, { labels: ["bug"] }), issue(2)],
    expect: [1],
  },
  {
    name: "tags under a configured tag prefix",
    selectors: [{ label: null, tags: ["api"] }],
    labels: { tag_prefix: "area/" },
    issues: [issue(1, { labels: ["area/api"] }), issue(2, { labels: ["tag:api"] })],
    expect: [1],
  },
  {
    name: "empty selector list means the default",
    selectors: [],
    issues: [issue(1), issue(2, { labels: [] })],
    expect: [1],
  },
];

describe("rebuild: selectors and dispatch order", () => {
  for (const row of orderRows) {
    it(row.name, () => {
      const ws = build(snapshot({ issues: row.issues }), { selectors: row.selectors ?? [], labels: { ...CONFIG.labels, ...row.labels } });
      assert.deepEqual(dispatched(ws), row.expect);
      for (const [n, p] of Object.entries(row.priorities ?? {})) {
        assert.equal(ws.frontier.dispatch.find((d) => d.number === Number(n))?.selector, p, `priority of #${n}`);
      }
    });
  }

  it("an issues selector pulls in the open blockers of the issues it names, transitively, and says for which", () => {
    const link = (number: number, state: "open" | "closed" = "open") => ({ number, id: 1000 + number, state });
    const issues = [
      issue(1, { labels: [], blockedBy: [link(2), link(9, "closed")] }),
      issue(2, { labels: [], blockedBy: [link(3)] }),
      issue(3, { labels: [] }),
      issue(4, { labels: [] }),
    ];
    const named = { issues: [1], label: null } as Selector;
    const ws = build(snapshot({ issues }), { selectors: [named] });
    assert.deepEqual(dispatched(ws), [3], "the root blocker first; #2 and #1 wait for it");
    assert.deepEqual(ws.frontier.dispatch.find((d) => d.number === 3)?.blocks, [1]);
    const reasons = new Map(ws.frontier.excluded.map((e) => [e.number, e.reason.kind]));
    assert.deepEqual(
      [reasons.get(1), reasons.get(2), reasons.get(4)],
      ["blocked", "blocked", "not_selected"],
      "#2 is picked (blocked itself), #4 is nobody's blocker",
    );
    const off = build(snapshot({ issues }), { selectors: [{ ...named, blockers: false }] });
    assert.deepEqual(dispatched(off), []);
    assert.equal(new Map(off.frontier.excluded.map((e) => [e.number, e.reason.kind])).get(2), "not_selected", "switched off: only the named issue");
  });

  it("dispatch items carry title, high flag and attempt", () => {
    const ws = build(snapshot({ issues: [issue(1, { labels: ["ready-for-agent", "afk-attempt/2", "priority:high"], title: "T" })] }));
    assert.deepEqual(ws.frontier.dispatch, [{ number: 1, title: "T", selector: 0, high: true, attempt: 2 }]);
  });

  it("cycles are listed once each and their members never dispatched", () => {
    const ws = build(
      snapshot({
        issues: [issue(1, { body: "## Blocked by\n- #2" }), issue(2, { body: "## Blocked by\n- #1" }), issue(3, { body: "## Blocked by\n- #3" }), issue(4)],
      }),
    );
    assert.deepEqual(ws.cycles, [[1, 2], [3]]);
    assert.deepEqual(dispatched(ws), [4]);
  });
});

// ---- my claims ---------------------------------------------------------------------------------

interface MineRow {
  name: string;
  snap: Snapshot;
  config?: Partial<RebuildConfig>;
  expect: {
    status: MineStatus;
    pr?: number | null;
    head?: string | null;
    attempt?: number;
    failing?: string[];
    pending?: string[];
    otherPulls?: number[];
    checksRead?: boolean;
    issueOpen?: boolean;
    reservedByHuman?: boolean;
  };
}

const required = (...contexts: string[]): Snapshot["requiredChecks"] => ({
  contexts,
  strict: false,
  source: "protection",
  readable: true,
});

const mineRows: MineRow[] = [
  {
    name: "awaiting_merge: fleet PR, required checks green",
    snap: snapshot({
      issues: [issue(1)],
      claims: [claim(1, ME)],
      pulls: [fleetPull(9, 1, { checks: checks("head9", [run("ci", "completed", "success")]) })],
      requiredChecks: required("ci"),
    }),
    expect: { status: "awaiting_merge", pr: 9, head: "head9", failing: [], pending: [], checksRead: true },
  },
  {
    name: "awaiting_ci: a required check is still running",
    snap: snapshot({
      issues: [issue(1)],
      claims: [claim(1, ME)],
      pulls: [fleetPull(9, 1, { checks: checks("head9", [run("ci", "in_progress", null)]) })],
      requiredChecks: required("ci"),
    }),
    expect: { status: "awaiting_ci", pr: 9, pending: ["ci"] },
  },
  {
    name: "awaiting_ci: a required check has not reported yet",
    snap: snapshot({
      issues: [issue(1)],
      claims: [claim(1, ME)],
      pulls: [fleetPull(9, 1, { checks: checks("head9", [run("lint", "completed", "success")]) })],
      requiredChecks: required("ci"),
    }),
    expect: { status: "awaiting_ci", pending: ["ci"] },
  },
  {
    name: "awaiting_ci: checks were not read",
    snap: snapshot({ issues: [issue(1)], claims: [claim(1, ME)], pulls: [fleetPull(9, 1)] }),
    expect: { status: "awaiting_ci", pr: 9, checksRead: false },
  },
  {
    name: "awaiting_ci: checks read for an older head never count",
    snap: snapshot({
      issues: [issue(1)],
      claims: [claim(1, ME)],
      pulls: [fleetPull(9, 1, { checks: checks("old", [run("ci", "completed", "success")]) })],
    }),
    expect: { status: "awaiting_ci", checksRead: false },
  },
  {
    name: "awaiting_ci: a green draft does not land",
    snap: snapshot({
      issues: [issue(1)],
      claims: [claim(1, ME)],
      pulls: [fleetPull(9, 1, { draft: true, checks: checks("head9", [run("ci", "completed", "success")]) })],
    }),
    expect: { status: "awaiting_ci" },
  },
  {
    name: "failure: a required check is red (names reported)",
    snap: snapshot({
      issues: [issue(1, { labels: ["ready-for-agent", "afk-attempt/1"] })],
      claims: [claim(1, ME)],
      pulls: [
        fleetPull(9, 1, {
          checks: checks("head9", [run("ci", "completed", "failure"), run("lint", "completed", "timed_out", 2)], [status("deploy", "error")]),
        }),
      ],
      requiredChecks: required("ci", "lint"),
    }),
    expect: { status: "failure", pr: 9, failing: ["ci", "lint"], attempt: 1 },
  },
  {
    name: "failure: a non-required red check does not count when contexts are configured",
    snap: snapshot({
      issues: [issue(1)],
      claims: [claim(1, ME)],
      pulls: [fleetPull(9, 1, { checks: checks("head9", [run("ci", "completed", "success"), run("flaky", "completed", "failure", 2)]) })],
      requiredChecks: required("ci"),
    }),
    expect: { status: "awaiting_merge", failing: [] },
  },
  {
    name: "no_pr: nothing open for it",
    snap: snapshot({ issues: [issue(1, { labels: ["ready-for-agent", "afk-attempt/3"] })], claims: [claim(1, ME)] }),
    expect: { status: "no_pr", pr: null, head: null, attempt: 3 },
  },
  {
    name: "no_pr: only a human's PR closes it (never ours to land)",
    snap: snapshot({ issues: [issue(1)], claims: [claim(1, ME)], pulls: [pull(4, { body: "fixes #1" })] }),
    expect: { status: "no_pr", otherPulls: [4] },
  },
  {
    name: "no_pr: a fork's afk/1-… branch is not ours",
    snap: snapshot({
      issues: [issue(1)],
      claims: [claim(1, ME)],
      pulls: [fleetPull(9, 1, { head: { ref: "afk/1-x", sha: "f", repoFullName: "mallory/widgets" } })],
    }),
    expect: { status: "no_pr", otherPulls: [9] },
  },
  {
    name: "no_pr: a fleet-branch PR aimed at another base is not the one that lands",
    snap: snapshot({ issues: [issue(1)], claims: [claim(1, ME)], pulls: [fleetPull(9, 1, { baseRef: "release" })] }),
    expect: { status: "no_pr", otherPulls: [9] },
  },
  {
    name: "gate.ci local: a PR awaits merge whatever its checks say",
    snap: snapshot({
      issues: [issue(1)],
      claims: [claim(1, ME)],
      pulls: [fleetPull(9, 1, { checks: checks("head9", [run("ci", "completed", "failure")]) })],
    }),
    config: { gate: { ci: "local" } },
    expect: { status: "awaiting_merge", failing: [] },
  },
  {
    name: "the newest fleet PR is the one",
    snap: snapshot({ issues: [issue(1)], claims: [claim(1, ME)], pulls: [fleetPull(12, 1), fleetPull(9, 1)] }),
    config: { gate: { ci: "local" } },
    expect: { status: "awaiting_merge", pr: 12, otherPulls: [9] },
  },
  {
    name: "claim on a closed issue is still listed, marked",
    snap: snapshot({ issues: [], claims: [claim(1, ME)] }),
    expect: { status: "no_pr", issueOpen: false, attempt: 0 },
  },
  {
    name: "human took it back: ready label removed",
    snap: snapshot({ issues: [issue(1, { labels: ["afk-attempt/1"] })], claims: [claim(1, ME)] }),
    expect: { status: "no_pr", reservedByHuman: true },
  },
];

describe("rebuild: my claims", () => {
  for (const row of mineRows) {
    it(row.name, () => {
      const ws = build(row.snap, row.config);
      assert.equal(ws.mine.length, 1);
      const mine = ws.mine[0]!;
      for (const [key, value] of Object.entries(row.expect)) {
        assert.deepEqual((mine as unknown as Record<string, unknown>)[key], value, `mine.${key}`);
      }
      assert.equal(ws.peer_live.length + ws.stale.length, 0);
    });
  }
});

// ---- orphaned PRs: the fleet's own open PR with no claim ----------------------------------------

const orphanRows: Array<{ name: string; snap: Snapshot; expect: number[] }> = [
  { name: "the fleet's PR, no claim: adopted", snap: snapshot({ issues: [issue(1)], pulls: [fleetPull(10, 1)] }), expect: [1] },
  { name: "my claim on it: nothing to adopt", snap: snapshot({ issues: [issue(1)], pulls: [fleetPull(10, 1)], claims: [claim(1, ME)] }), expect: [] },
  {
    name: "a peer's claim on it: nothing to adopt",
    snap: snapshot({ issues: [issue(1)], pulls: [fleetPull(10, 1)], claims: [claim(1, PEER)], heartbeats: [beat(ME, 10), beat(PEER, 10)] }),
    expect: [],
  },
  {
    name: "a fleet branch another login opened: never adopted",
    snap: snapshot({ issues: [issue(1)], pulls: [fleetPull(10, 1, { author: "alice" })] }),
    expect: [],
  },
  {
    name: "a fork's PR on a fleet-named branch: never adopted",
    snap: snapshot({ issues: [issue(1)], pulls: [fleetPull(10, 1, { head: { ref: "afk/1-work", sha: "h", repoFullName: "mallory/widgets" } })] }),
    expect: [],
  },
  {
    name: "a human's PR closes it too: left to the human",
    snap: snapshot({ issues: [issue(1)], pulls: [fleetPull(10, 1), pull(11, { body: "Closes #1" })] }),
    expect: [],
  },
  { name: "aimed at another base: not the fleet's PR", snap: snapshot({ issues: [issue(1)], pulls: [fleetPull(10, 1, { baseRef: "release" })] }), expect: [] },
  {
    name: "two fleet PRs of ours: adopted once, for the newest",
    snap: snapshot({ issues: [issue(1)], pulls: [fleetPull(10, 1), fleetPull(12, 1, { head: { ref: "afk/1-again", sha: "head12", repoFullName: REPO } })] }),
    expect: [1],
  },
  { name: "the ready label removed: a human's, not adopted", snap: snapshot({ issues: [issue(1, { labels: [] })], pulls: [fleetPull(10, 1)] }), expect: [] },
  {
    name: "escalated: not adopted",
    snap: snapshot({ issues: [issue(1, { labels: ["ready-for-agent", "ready-for-human"] })], pulls: [fleetPull(10, 1)] }),
    expect: [],
  },
  { name: "an epic: not adopted", snap: snapshot({ issues: [issue(1, { labels: ["ready-for-agent", "epic"] })], pulls: [fleetPull(10, 1)] }), expect: [] },
  { name: "assigned to a person: not adopted", snap: snapshot({ issues: [issue(1, { assignees: ["bob"] })], pulls: [fleetPull(10, 1)] }), expect: [] },
  {
    name: "blocked by an open issue: not adopted",
    snap: snapshot({ issues: [issue(1, { blockedBy: [{ number: 2, id: 2, state: "open" }] }), issue(2, { labels: [] })], pulls: [fleetPull(10, 1)] }),
    expect: [],
  },
];

describe("rebuild: orphaned PRs (the fleet's own open PR, no claim)", () => {
  for (const row of orphanRows) {
    it(row.name, () => {
      const ws = build(row.snap);
      assert.deepEqual(
        (ws.orphans ?? []).map((o) => o.issue),
        row.expect,
      );
      assert.ok(!dispatched(ws).includes(1), "an issue with an open PR is never dispatched afresh");
    });
  }
  it("a stale claim names the fleet's open PR that carries it (a reclaim then starts no worker)", () => {
    const ws = build(snapshot({ issues: [issue(1), issue(2)], pulls: [fleetPull(10, 1)], claims: [claim(1, PEER, 9000), claim(2, PEER, 9000)] }));
    assert.deepEqual(
      ws.stale.map((c) => [c.issue, c.pr]),
      [
        [1, 10],
        [2, null],
      ],
    );
    assert.deepEqual(ws.orphans, [], "a claimed issue is no orphan, stale or not");
  });
  it("names the PR, its head and branch, and the reason the frontier gives stays 'open PR'", () => {
    const ws = build(
      snapshot({ issues: [issue(1)], pulls: [fleetPull(10, 1), fleetPull(12, 1, { head: { ref: "afk/1-again", sha: "head12", repoFullName: REPO } })] }),
    );
    assert.deepEqual(ws.orphans, [{ issue: 1, pr: 12, head: "head12", headRef: "afk/1-again" }]);
    assert.equal(ws.frontier.excluded.find((e) => e.number === 1)?.reason.kind, "open_pr");
  });
});

// ---- peers' claims -----------------------------------------------------------------------------

interface PeerRow {
  name: string;
  claims: ClaimRef[];
  heartbeats: Heartbeat[];
  expect: "mine" | "peer_live" | StaleReason;
}

const peerRows: PeerRow[] = [
  { name: "peer with a fresh heartbeat is live", claims: [claim(1, PEER, 9000)], heartbeats: [beat(PEER, 60)], expect: "peer_live" },
  { name: "heartbeat exactly ttl old is still fresh", claims: [claim(1, PEER, 9000)], heartbeats: [beat(PEER, TTL)], expect: "peer_live" },
  { name: "heartbeat past the ttl: stale", claims: [claim(1, PEER, 9000)], heartbeats: [beat(PEER, TTL + 1)], expect: "expired" },
  { name: "no heartbeat and an old claim: stale", claims: [claim(1, PEER, 9000)], heartbeats: [], expect: "no_heartbeat" },
  {
    name: "no heartbeat yet, but the claim itself is younger than the ttl: live",
    claims: [claim(1, PEER, 30)],
    heartbeats: [],
    expect: "peer_live",
  },
  {
    name: "the newest of several heartbeats counts",
    claims: [claim(1, PEER, 9000)],
    heartbeats: [beat(PEER, 9000), { ...beat(PEER, 10), sha: "newer" }],
    expect: "peer_live",
  },
  {
    name: "a heartbeat dated more than a ttl ahead is not believed",
    claims: [claim(1, PEER, 9000)],
    heartbeats: [beat(PEER, -(TTL + 60))],
    expect: "expired",
  },
  { name: "someone else's heartbeat does not keep a peer alive", claims: [claim(1, PEER, 9000)], heartbeats: [beat("other", 5)], expect: "no_heartbeat" },
  { name: "unreadable claim message: stale", claims: [claimRefFrom(1, "deadbeef", "afk-claim\ninstance=BAD ID")], heartbeats: [], expect: "unreadable" },
  { name: "my claim is mine even when my heartbeat lapsed", claims: [claim(1, ME, 9000)], heartbeats: [beat(ME, 9000)], expect: "mine" },
];

describe("rebuild: mine, peer_live, stale", () => {
  for (const row of peerRows) {
    it(row.name, () => {
      const ws = build(snapshot({ issues: [issue(1)], claims: row.claims, heartbeats: row.heartbeats }));
      const where = ws.mine.length === 1 ? "mine" : ws.peer_live.length === 1 ? "peer_live" : ws.stale.length === 1 ? ws.stale[0]!.reason : "none";
      assert.equal(ws.mine.length + ws.peer_live.length + ws.stale.length, 1, "exactly one place");
      assert.equal(where, row.expect);
    });
  }

  it("a peer's claim on a closed issue is listed, marked not open", () => {
    const ws = build(snapshot({ issues: [], claims: [claim(7, PEER, 9000)], heartbeats: [] }));
    assert.equal(ws.stale.length, 1);
    assert.equal(ws.stale[0]!.issueOpen, false);
    assert.equal(ws.stale[0]!.sha, `c7${PEER}`);
  });

  it("my lease freshness is reported", () => {
    assert.deepEqual(build(snapshot({ heartbeats: [beat(ME, 10)] })).lease, { fresh: true, heartbeatAt: ago(10) });
    assert.deepEqual(build(snapshot({ heartbeats: [] })).lease, { fresh: false, heartbeatAt: null });
  });

  it("a claim parsed from a real claim message is attributed", () => {
    const message = formatClaimMessage({ instance: PEER, host: "h2", at: ago(20) });
    const ws = build(snapshot({ issues: [issue(1)], claims: [claimRefFrom(1, "s1", message)], heartbeats: [] }));
    assert.equal(ws.peer_live[0]?.instance, PEER);
    assert.equal(ws.peer_live[0]?.host, "h2");
  });

  it("rejects an invalid instance id with a clear error", () => {
    assert.throws(() => rebuild(snapshot(), CONFIG, "Bad_Id", NOW), /invalid instance id "Bad_Id"/);
  });
});

// ---- fingerprint -------------------------------------------------------------------------------

interface FingerprintRow {
  name: string;
  change: (s: Snapshot) => Snapshot;
  now?: Date;
  same: boolean;
}

const base = snapshot({
  issues: [issue(1), issue(2, { labels: ["bug"] })],
  pulls: [fleetPull(9, 1, { checks: checks("head9", [run("ci", "in_progress", null)]) })],
  claims: [claim(1, ME), claim(2, PEER, 100)],
  heartbeats: [beat(ME, 10), beat(PEER, 100)],
});

const fingerprintRows: FingerprintRow[] = [
  { name: "takenAt does not matter", change: (s) => ({ ...s, takenAt: "2030-01-01T00:00:00.000Z" }), same: true },
  {
    name: "a heartbeat refresh that stays fresh is no news",
    change: (s) => ({ ...s, heartbeats: [{ ...beat(ME, 1), sha: "x" }, beat(PEER, 5)] }),
    same: true,
  },
  { name: "a lease lapsing is news (time passes)", change: (s) => s, now: new Date(NOW.getTime() + (TTL + 200) * 1000), same: false },
  {
    name: "label order does not matter",
    change: (s) => ({ ...s, issues: [issue(1, { labels: ["ready-for-agent"] }), issue(2, { labels: ["bug"] })].reverse() }),
    same: true,
  },
  {
    name: "a label added is news",
    change: (s) => ({ ...s, issues: [issue(1), issue(2, { labels: ["bug", "ready-for-agent"] })] }),
    same: false,
  },
  {
    name: "a check completing is news",
    change: (s) => ({ ...s, pulls: [fleetPull(9, 1, { checks: checks("head9", [run("ci", "completed", "success")]) })] }),
    same: false,
  },
  { name: "a new claim is news", change: (s) => ({ ...s, claims: [...s.claims, claim(3, PEER)] }), same: false },
  {
    name: "an edited body is news",
    change: (s) => ({ ...s, issues: [issue(1, { body: "## Blocked by\n- #2" }), issue(2, { labels: ["bug"] })] }),
    same: false,
  },
  { name: "a new comment (updatedAt) is news", change: (s) => ({ ...s, issues: [issue(1, { updatedAt: "x" }), issue(2, { labels: ["bug"] })] }), same: false },
];

describe("rebuild: fingerprint", () => {
  const reference = build(base).fingerprint;
  it("is a sha256 hex digest", () => assert.match(reference, /^[0-9a-f]{64}$/));
  for (const row of fingerprintRows) {
    it(row.name, () => {
      const ws = rebuild(row.change(base), CONFIG, ME, row.now ?? NOW);
      assert.equal(ws.fingerprint === reference, row.same);
    });
  }
});

describe("rebuild: stragglers", () => {
  it("counts unlabelled, needs-triage and needs-info open issues", () => {
    const ws = build(
      snapshot({
        issues: [issue(1, { labels: [] }), issue(2, { labels: ["Needs-Triage"] }), issue(3, { labels: ["needs-info", "bug"] }), issue(4)],
      }),
    );
    assert.deepEqual(ws.stragglers, { unlabelled: 1, needsTriage: 1, needsInfo: 1 });
  });
});
