// Properties of the pure core over generated snapshots (fast-check, fixed seeds so a failure
// reproduces): rebuild ignores input order, places every claim exactly once, partitions the
// open issues, never dispatches what must wait, and orders the dispatch; pacing never sleeps
// past half the lease while work is in flight.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { CheckRun, CommitStatus } from "../server/gh/forge.js";
import { rebuild, type RebuildConfig, type WorkingSet } from "../server/state/rebuild.js";
import { compareDispatch } from "../server/state/frontier.js";
import { parseBlockedBySection, parseClosingRefs } from "../server/state/links.js";
import { hasLabel, parseFleetBranch, sameLogin } from "../server/state/markers.js";
import { pace } from "../server/state/pace.js";
import type { Selector } from "../server/state/selectors.js";
import type { ClaimRef, Heartbeat, Snapshot, SnapshotIssue, SnapshotPull } from "../server/state/snapshot.js";

const REPO = "acme/widgets";
const LOGIN = "afk-bot";
const ME = "me1";
const NOW = new Date("2025-06-01T12:00:00.000Z");
const RUNS = { seed: 42, numRuns: 1500 };

// ---- generators --------------------------------------------------------------------------------

const LABELS = [
  "ready-for-agent",
  "Ready-For-Agent",
  "epic",
  "priority:high",
  "ready-for-human",
  "afk-attempt/1",
  "afk-attempt/2",
  "tag:api",
  "tag:db",
  "prd:5",
  "needs-triage",
  "needs-info",
  "bug",
  "AFK-Hold",
];

const ISSUE_NUMBERS = fc.integer({ min: 1, max: 30 });
const ANY_NUMBER = fc.integer({ min: 1, max: 45 }); // 31..45 are PR numbers

const issueBody = fc
  .array(
    fc.oneof(
      fc.constant("Some prose."),
      ANY_NUMBER.map((n) => `## Blocked by\n- #${n}\n`),
      fc.tuple(ANY_NUMBER, ANY_NUMBER).map(([a, b]) => `### Blocked by\n- [ ] #${a}\n- [x] #${b}\n## Notes\n- #1`),
      ISSUE_NUMBERS.map((n) => `prd: #${n}`),
    ),
    { maxLength: 3 },
  )
  .map((parts) => parts.join("\n"));

const issueArb = (number: number): fc.Arbitrary<SnapshotIssue> =>
  fc.record({
    number: fc.constant(number),
    id: fc.constant(1000 + number),
    title: fc.constant(`issue ${number}`),
    body: issueBody,
    labels: fc
      .tuple(fc.integer({ min: 0, max: 9 }), fc.uniqueArray(fc.constantFrom(...LABELS), { maxLength: 3 }))
      .map(([r, rest]) => [...new Set([...(r < 7 ? ["ready-for-agent"] : []), ...rest])]),
    author: fc.constantFrom("alice", "afk-bot", "bob"),
    assignees: fc.oneof(
      { weight: 4, arbitrary: fc.constant([] as string[]) },
      { weight: 1, arbitrary: fc.uniqueArray(fc.constantFrom("AFK-bot", "bob", "carol"), { maxLength: 2 }) },
    ),
    milestone: fc.constantFrom(null, "m1", "m2"),
    blockedBy: fc
      .uniqueArray(ANY_NUMBER, { maxLength: 3 })
      .chain((ns) => fc.tuple(...ns.map((n) => fc.constantFrom("open" as const, "closed" as const).map((state) => ({ number: n, id: 1000 + n, state }))))),
    subIssues: fc.oneof({ weight: 5, arbitrary: fc.constant([] as number[]) }, { weight: 1, arbitrary: fc.uniqueArray(ISSUE_NUMBERS, { maxLength: 3 }) }),
    parent: fc.oneof(fc.constant(null), ISSUE_NUMBERS),
    updatedAt: fc.constantFrom("2025-05-01T00:00:00Z", "2025-05-02T00:00:00Z"),
  });

const checkRunArb = (name: string, id: number): fc.Arbitrary<CheckRun> =>
  fc
    .constantFrom<[string, string | null]>(
      ["completed", "success"],
      ["completed", "failure"],
      ["completed", "skipped"],
      ["completed", "neutral"],
      ["in_progress", null],
      ["queued", null],
    )
    .map(([status, conclusion]) => ({
      id,
      name,
      status,
      conclusion,
      title: null,
      summary: null,
      text: null,
      detailsUrl: null,
      htmlUrl: null,
      appId: null,
    }));

const statusArb = (context: string): fc.Arbitrary<CommitStatus> =>
  fc.constantFrom("success", "pending", "failure").map((state) => ({ context, state, description: null, targetUrl: null }));

const pullArb = (number: number): fc.Arbitrary<SnapshotPull> =>
  fc
    .record({
      target: fc.integer({ min: 1, max: 12 }),
      fleet: fc.boolean(),
      fork: fc.boolean(),
      keyword: fc.constantFrom("", "Closes #", "fixes #", "see #"),
      draft: fc.boolean(),
      runs: fc.subarray(["ci", "lint", "e2e"]),
      statuses: fc.subarray(["ci", "deploy"]),
      withChecks: fc.boolean(),
    })
    .chain((p) => {
      const sha = `head${number}`;
      return fc
        .tuple(fc.tuple(...p.runs.map((name, i) => checkRunArb(name, i + 1))), fc.tuple(...p.statuses.map((c) => statusArb(c))))
        .map(([runs, statuses]) => ({
          number,
          title: `pr ${number}`,
          body: p.keyword === "" ? "" : `${p.keyword}${p.target}`,
          author: p.fleet ? LOGIN : "alice",
          draft: p.draft,
          head: {
            ref: p.fleet ? `afk/${p.target}-work` : `feature/${number}`,
            sha,
            repoFullName: p.fork ? "mallory/widgets" : REPO,
          },
          baseRef: "main",
          ...(p.withChecks ? { checks: { sha, checkRuns: runs, statuses } } : {}),
        }));
    });

const INSTANCES = ["me1", "peer1", "peer2"];

const claimArb = (issue: number, i: number): fc.Arbitrary<ClaimRef> =>
  fc
    .record({
      instance: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...INSTANCES) }, { weight: 1, arbitrary: fc.constant(null) }),
      age: fc.integer({ min: 0, max: 10000 }),
    })
    .map(({ instance, age }) => ({
      issue,
      sha: `claim${issue}-${i}`,
      instance,
      host: instance === null ? null : "box",
      at: instance === null ? null : new Date(NOW.getTime() - age * 1000).toISOString(),
    }));

const heartbeatArb: fc.Arbitrary<Heartbeat> = fc
  .record({ instance: fc.constantFrom(...INSTANCES), age: fc.integer({ min: -5000, max: 10000 }), n: fc.nat(3) })
  .map(({ instance, age, n }) => ({
    instance,
    sha: `hb-${instance}-${n}-${age}`,
    host: "box",
    at: new Date(NOW.getTime() - age * 1000).toISOString(),
  }));

const SELECTOR_SETS: Selector[][] = [
  [],
  [{ label: "ready-for-agent" }],
  [{ tags: ["api"] }, { label: "ready-for-agent" }],
  [{ label: null, tags: ["api", "db"] }],
  [{ user: "@me" }, { label: null, milestone: "m1" }],
  [
    { label: null, epic: 5 },
    { label: null, issues: [1, 2, 3, 4] },
  ],
  [
    { label: "bug", user: "bob", issues: null, tags: [], epic: null, milestone: null },
    { label: null, user: "alice" },
  ],
];

const snapshotArb: fc.Arbitrary<Snapshot> = fc
  .record({
    issueNumbers: fc.uniqueArray(ISSUE_NUMBERS, { maxLength: 25 }),
    pullNumbers: fc.uniqueArray(fc.integer({ min: 31, max: 45 }), { maxLength: 8 }),
    claimIssues: fc.uniqueArray(fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 35 })), { maxLength: 10 }),
    heartbeats: fc.array(heartbeatArb, { maxLength: 5 }),
    required: fc.subarray(["ci", "lint", "deploy"]),
    knownClosed: fc.uniqueArray(ANY_NUMBER, { maxLength: 4 }),
  })
  .chain((s) =>
    fc
      .tuple(fc.tuple(...s.issueNumbers.map(issueArb)), fc.tuple(...s.pullNumbers.map(pullArb)), fc.tuple(...s.claimIssues.map((n, i) => claimArb(n, i))))
      .map(([issues, pulls, claims]): Snapshot => ({
        repo: REPO,
        login: LOGIN,
        defaultBranch: "main",
        base: "main",
        takenAt: NOW.toISOString(),
        issues,
        pulls,
        claims,
        heartbeats: s.heartbeats,
        requiredChecks: { contexts: s.required, strict: false, source: s.required.length > 0 ? "protection" : "none", readable: true },
        knownClosed: s.knownClosed,
      })),
  );

const configArb: fc.Arbitrary<RebuildConfig> = fc
  .record({ selectors: fc.constantFrom(...SELECTOR_SETS), ci: fc.constantFrom("required" as const, "local" as const), ttl: fc.constantFrom(600, 3600, 4500) })
  .map(({ selectors, ci, ttl }) => ({
    labels: {
      ready: "ready-for-agent",
      escalate: "ready-for-human",
      epic: ["epic"],
      priority_high: "priority:high",
      attempt_prefix: "afk-attempt/",
      hold: "afk-hold",
    },
    selectors,
    gate: { ci },
    lease: { ttl_seconds: ttl, heartbeat_seconds: 300 },
  }));

// ---- shuffling -----------------------------------------------------------------------------------

/** A seeded Fisher-Yates: the permutation is part of the generated case, so failures reproduce. */
function shuffler(seed: number): <T>(items: readonly T[]) => T[] {
  let state = seed >>> 0 || 1;
  const next = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x100000000;
  };
  return <T>(items: readonly T[]): T[] => {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
}

function shuffleSnapshot(s: Snapshot, seed: number): Snapshot {
  const shuffle = shuffler(seed);
  return {
    ...s,
    issues: shuffle(s.issues).map((i) => ({
      ...i,
      labels: shuffle(i.labels),
      assignees: shuffle(i.assignees),
      blockedBy: shuffle(i.blockedBy),
      subIssues: shuffle(i.subIssues),
    })),
    pulls: shuffle(s.pulls).map((p) =>
      p.checks ? { ...p, checks: { ...p.checks, checkRuns: shuffle(p.checks.checkRuns), statuses: shuffle(p.checks.statuses) } } : p,
    ),
    claims: shuffle(s.claims),
    heartbeats: shuffle(s.heartbeats),
    knownClosed: shuffle(s.knownClosed ?? []),
    requiredChecks: { ...s.requiredChecks, contexts: shuffle(s.requiredChecks.contexts) },
    takenAt: new Date(NOW.getTime() + seed).toISOString(),
  };
}

// ---- independent oracles ---------------------------------------------------------------------------

function openBlockers(issue: SnapshotIssue, s: Snapshot): number[] {
  const open = new Set([...s.issues.map((i) => i.number), ...s.pulls.map((p) => p.number)]);
  const closed = new Set(s.knownClosed ?? []);
  const all = [...issue.blockedBy.map((l) => l.number), ...parseBlockedBySection(issue.body, REPO)];
  const openLinks = new Set(issue.blockedBy.filter((l) => l.state === "open").map((l) => l.number));
  return all.filter((n) => (open.has(n) || openLinks.has(n)) && !closed.has(n));
}

function hasOpenPr(issue: number, s: Snapshot): boolean {
  return s.pulls.some(
    (p) => parseClosingRefs(`${p.title}\n${p.body}`, REPO).includes(issue) || (p.head.repoFullName === REPO && parseFleetBranch(p.head.ref) === issue),
  );
}

const run = (s: Snapshot, c: RebuildConfig): WorkingSet => rebuild(s, c, ME, NOW);

// ---- properties ------------------------------------------------------------------------------------

describe("rebuild properties", () => {
  it("(1) is invariant under shuffling every input list (and takenAt)", () => {
    fc.assert(
      fc.property(snapshotArb, configArb, fc.integer({ min: 1, max: 2 ** 31 - 1 }), (s, c, seed) => {
        assert.deepEqual(run(shuffleSnapshot(s, seed), c), run(s, c));
      }),
      RUNS,
    );
  });

  it("(2) places every claim in exactly one of mine / peer_live / stale", () => {
    fc.assert(
      fc.property(snapshotArb, configArb, (s, c) => {
        const ws = run(s, c);
        const placed = [...ws.mine, ...ws.peer_live, ...ws.stale].map((x) => `${x.issue}:${x.sha}`).sort();
        assert.deepEqual(placed, s.claims.map((x) => `${x.issue}:${x.sha}`).sort());
        for (const m of ws.mine) assert.equal(m.instance, ME);
        for (const p of [...ws.peer_live, ...ws.stale]) assert.notEqual(p.instance, ME);
        const open = new Set(s.issues.map((i) => i.number));
        for (const x of [...ws.mine, ...ws.peer_live, ...ws.stale]) assert.equal(x.issueOpen, open.has(x.issue));
      }),
      RUNS,
    );
  });

  it("(3) dispatch and excluded partition the open issues, one reason each", () => {
    fc.assert(
      fc.property(snapshotArb, configArb, (s, c) => {
        const ws = run(s, c);
        const d = ws.frontier.dispatch.map((x) => x.number);
        const e = ws.frontier.excluded.map((x) => x.number);
        assert.equal(new Set([...d, ...e]).size, d.length + e.length, "disjoint, no repeats");
        assert.deepEqual(
          [...d, ...e].sort((a, b) => a - b),
          s.issues.map((i) => i.number).sort((a, b) => a - b),
        );
        for (const x of ws.frontier.excluded) assert.ok(x.text.length > 0);
      }),
      RUNS,
    );
  });

  it("(4) never dispatches a claimed issue, an epic, a blocked one, one with an open PR, or a human's", () => {
    fc.assert(
      fc.property(snapshotArb, configArb, (s, c) => {
        const ws = run(s, c);
        const claimed = new Set(s.claims.map((x) => x.issue));
        const byNumber = new Map(s.issues.map((i) => [i.number, i]));
        for (const { number } of ws.frontier.dispatch) {
          const issue = byNumber.get(number)!;
          assert.ok(!claimed.has(number), `#${number} claimed`);
          assert.ok(!hasLabel(issue.labels, "epic") && issue.subIssues.length === 0, `#${number} epic`);
          assert.deepEqual(openBlockers(issue, s), [], `#${number} blocked`);
          assert.ok(!hasOpenPr(number, s), `#${number} has an open PR`);
          assert.ok(!hasLabel(issue.labels, "ready-for-human"), `#${number} escalated`);
          assert.ok(!hasLabel(issue.labels, "afk-hold"), `#${number} on hold`);
          assert.ok(
            issue.assignees.every((a) => sameLogin(a, LOGIN)),
            `#${number} assigned`,
          );
        }
        // And no issue in a reported cycle is dispatched.
        const inCycle = new Set(ws.cycles.flat());
        assert.ok(ws.frontier.dispatch.every((x) => !inCycle.has(x.number)));
      }),
      RUNS,
    );
  });

  it("(5) dispatch is sorted by (selector priority, priority:high first, number)", () => {
    fc.assert(
      fc.property(snapshotArb, configArb, (s, c) => {
        const { dispatch } = run(s, c).frontier;
        const byNumber = new Map(s.issues.map((i) => [i.number, i]));
        for (let i = 1; i < dispatch.length; i++) {
          assert.ok(compareDispatch(dispatch[i - 1]!, dispatch[i]!) < 0, "strictly ordered");
          const [a, b] = [dispatch[i - 1]!, dispatch[i]!];
          assert.ok(a.selector < b.selector || (a.selector === b.selector && (a.high > b.high || (a.high === b.high && a.number < b.number))));
        }
        for (const x of dispatch) assert.equal(x.high, hasLabel(byNumber.get(x.number)!.labels, "priority:high"));
      }),
      RUNS,
    );
  });

  it("(6) pace never exceeds ttl/2 (nor the heartbeat cadence) while work is in flight", () => {
    fc.assert(
      fc.property(
        fc.record({
          busy: fc.integer({ min: 0, max: 100000 }),
          idle: fc.integer({ min: 0, max: 100000 }),
          long: fc.integer({ min: 0, max: 100000 }),
          ticks: fc.integer({ min: 0, max: 20 }),
          ttl: fc.integer({ min: 2, max: 100000 }),
          heartbeat: fc.integer({ min: 1, max: 100000 }),
          moved: fc.boolean(),
          inFlight: fc.integer({ min: 0, max: 10 }),
          emptyTicks: fc.integer({ min: 0, max: 40 }),
        }),
        (p) => {
          const seconds = pace({
            lastSummary: { moved: p.moved, inFlight: p.inFlight },
            emptyTicks: p.emptyTicks,
            config: {
              pacing: { busy_seconds: p.busy, idle_seconds: p.idle, long_idle_seconds: p.long, idle_ticks_before_sleep: p.ticks },
              lease: { ttl_seconds: p.ttl, heartbeat_seconds: p.heartbeat },
            },
          });
          assert.ok(Number.isInteger(seconds) && seconds >= 1);
          if (p.inFlight > 0) {
            assert.ok(seconds <= p.ttl / 2, `${seconds} > ttl/2 = ${p.ttl / 2}`);
            assert.ok(seconds <= Math.max(1, p.heartbeat));
          }
        },
      ),
      { seed: 42, numRuns: 5000 },
    );
  });
});
