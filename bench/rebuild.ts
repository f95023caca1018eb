// CPU cost of one rebuild over a large generated backlog (goal: < 50 ms for 10,000 issues).
// The snapshot is generated from a fixed seed, so runs are comparable across machines and commits.

import { pathToFileURL } from "node:url";
import { rebuild, type RebuildConfig } from "../server/state/rebuild.js";
import type { Snapshot, SnapshotIssue, SnapshotPull, ClaimRef, Heartbeat } from "../server/state/snapshot.js";
import { mulberry32 as prng } from "../server/forge-emulator/prng.js";

export interface RebuildBench {
  issues: number;
  pulls: number;
  claims: number;
  runs: number;
  warmup: number;
  /** Median user+system CPU time of one rebuild. */
  cpu_ms: number;
  cpu_ms_min: number;
  cpu_ms_max: number;
  /** Median wall-clock time of one rebuild. */
  wall_ms: number;
  dispatch: number;
  excluded: number;
  goal_ms: number;
  ok: boolean;
}

const NOW = new Date("2025-06-01T12:00:00.000Z");
const REPO = "acme/widgets";

const CONFIG: RebuildConfig = {
  labels: {
    ready: "ready-for-agent",
    escalate: "ready-for-human",
    epic: ["epic", "prd"],
    priority_high: "priority:high",
    attempt_prefix: "afk-attempt/",
  },
  selectors: [{ label: "urgent" }, { tags: ["api"] }, { label: "ready-for-agent" }],
  gate: { ci: "required" },
  lease: { ttl_seconds: 4500, heartbeat_seconds: 600 },
};

/** A backlog shaped like a real one: mostly ready issues, some epics, chains of blockers, PRs, claims. */
export function generateSnapshot(issueCount: number, seed = 1): Snapshot {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const issues: SnapshotIssue[] = [];
  const prose = "Implement the thing described here. ".repeat(12);
  for (let n = 1; n <= issueCount; n++) {
    const labels: string[] = [];
    const r = rnd();
    if (r < 0.8) labels.push("ready-for-agent");
    else if (r < 0.85) labels.push("needs-triage");
    if (rnd() < 0.05) labels.push("urgent");
    if (rnd() < 0.1) labels.push("tag:api");
    if (rnd() < 0.1) labels.push("priority:high");
    if (rnd() < 0.03) labels.push("afk-attempt/1");
    if (rnd() < 0.01) labels.push("ready-for-human");
    const epic = n % 100 === 0;
    if (epic) labels.push("epic");
    let body = prose;
    if (n > 1 && rnd() < 0.2) body += `\n\n## Blocked by\n- [ ] #${n - 1}\n- #${1 + Math.floor(rnd() * (n - 1))}\n`;
    if (rnd() < 0.1) body += `\nprd: #${Math.max(100, Math.floor(n / 100) * 100)}\n`;
    issues.push({
      number: n,
      id: 100000 + n,
      title: `Issue ${n}`,
      body,
      labels,
      author: pick(["alice", "bob", "carol", "afk-bot"]),
      assignees: rnd() < 0.05 ? ["bob"] : [],
      milestone: rnd() < 0.3 ? pick(["v1", "v2"]) : null,
      blockedBy: rnd() < 0.05 && n > 10 ? [{ number: n - 10, id: 100000 + n - 10, state: "open" }] : [],
      subIssues: epic ? Array.from({ length: 20 }, (_, i) => n - 1 - i).filter((x) => x > 0) : [],
      parent: epic ? null : Math.ceil(n / 100) * 100,
      updatedAt: "2025-05-01T00:00:00Z",
    });
  }
  // A few blocker cycles, as real backlogs occasionally have.
  for (let n = 50; n + 1 <= issueCount; n += 1000) {
    issues[n - 1]!.body += `\n## Blocked by\n- #${n + 1}\n`;
    issues[n]!.body += `\n## Blocked by\n- #${n}\n`;
  }

  const pulls: SnapshotPull[] = [];
  const claims: ClaimRef[] = [];
  const pullCount = Math.max(1, Math.floor(issueCount / 20));
  for (let i = 0; i < pullCount; i++) {
    const number = issueCount + 1 + i;
    const target = 1 + Math.floor(rnd() * issueCount);
    const fleet = rnd() < 0.5;
    const sha = `h${number}`;
    pulls.push({
      number,
      title: `Work on #${target}`,
      body: `Closes #${target}\n\n${prose}`,
      author: fleet ? "afk-bot" : "alice",
      draft: false,
      head: { ref: fleet ? `afk/${target}-work` : `feature/${number}`, sha, repoFullName: REPO },
      baseRef: "main",
      checks: {
        sha,
        checkRuns: [
          {
            id: 1,
            name: "ci",
            status: "completed",
            conclusion: pick(["success", "failure"]),
            title: null,
            summary: null,
            text: null,
            detailsUrl: null,
            htmlUrl: null,
            appId: null,
          },
          {
            id: 2,
            name: "lint",
            status: pick(["completed", "in_progress"]),
            conclusion: "success",
            title: null,
            summary: null,
            text: null,
            detailsUrl: null,
            htmlUrl: null,
            appId: null,
          },
        ],
        statuses: [{ context: "deploy", state: "success", description: null, targetUrl: null }],
      },
    });
    if (fleet) {
      claims.push({ issue: target, sha: `c${target}`, instance: pick(["me1", "peer1", "peer2"]), host: "box", at: "2025-06-01T11:00:00.000Z" });
    }
  }
  const seen = new Set<number>();
  const uniqueClaims = claims.filter((c) => (seen.has(c.issue) ? false : (seen.add(c.issue), true)));
  const heartbeats: Heartbeat[] = [
    { instance: "me1", sha: "hb1", host: "box", at: "2025-06-01T11:59:00.000Z" },
    { instance: "peer1", sha: "hb2", host: "box", at: "2025-06-01T11:30:00.000Z" },
    { instance: "peer2", sha: "hb3", host: "box", at: "2025-05-30T00:00:00.000Z" },
  ];
  return {
    repo: REPO,
    login: "afk-bot",
    defaultBranch: "main",
    base: "main",
    takenAt: NOW.toISOString(),
    issues,
    pulls,
    claims: uniqueClaims,
    heartbeats,
    requiredChecks: { contexts: ["ci", "lint"], strict: true, source: "protection", readable: true },
    knownClosed: [],
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function benchRebuild(issueCount = 10000, runs = 15, warmup = 10): RebuildBench {
  const snapshot = generateSnapshot(issueCount);
  // Warm-up: the host is a long-lived process that rebuilds every tick, so measure optimized
  // code, not the JIT (whose compiler threads would otherwise be billed to the process too).
  let ws = rebuild(snapshot, CONFIG, "me1", NOW);
  for (let i = 1; i < warmup; i++) rebuild(snapshot, CONFIG, "me1", NOW);
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    ws = rebuild(snapshot, CONFIG, "me1", NOW);
    const c = process.cpuUsage(c0);
    wall.push(performance.now() - t0);
    cpu.push((c.user + c.system) / 1000);
  }
  const cpu_ms = Math.round(median(cpu) * 100) / 100;
  return {
    issues: snapshot.issues.length,
    pulls: snapshot.pulls.length,
    claims: snapshot.claims.length,
    runs,
    warmup,
    cpu_ms,
    cpu_ms_min: Math.round(Math.min(...cpu) * 100) / 100,
    cpu_ms_max: Math.round(Math.max(...cpu) * 100) / 100,
    wall_ms: Math.round(median(wall) * 100) / 100,
    dispatch: ws.frontier.dispatch.length,
    excluded: ws.frontier.excluded.length,
    goal_ms: 50,
    ok: cpu_ms < 50,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const count = Number(process.argv[2] ?? 10000);
  console.log(JSON.stringify(benchRebuild(count), null, 2));
}
