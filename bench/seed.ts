// Seeds a local forge with a backlog shaped like a busy real one, quickly (seeding is not
// measured): the issues and their links through the forge's seed file, every branch and every
// claim/heartbeat ref as commits made by ONE `git fast-import` in one bare clone and sent by ONE
// `git push`, then the PRs and their checks over REST with a few requests in flight.
import { writeFile } from "node:fs/promises";
import { spawn } from "node:child_process";
import { join } from "node:path";
import type { RunningForge, Seed, SeedIssue } from "../server/forge-emulator/index.js";
import { formatClaimMessage, formatHeartbeatMessage } from "../server/state/snapshot.js";
import { fleetBranchName } from "../server/state/markers.js";
import { api, authedGitUrl, git, repoPath } from "../test/support/forge-fixtures.js";
import { mulberry32 as prng } from "../server/forge-emulator/prng.js";

export interface BacklogSpec {
  issues: number;
  pulls: number;
  /** Of the PRs, how many are the fleet's (`afk/<n>-slug`, claimed, with checks on their heads). */
  fleetPulls: number;
  /** Claims on issues with no PR yet (workers still coding). */
  claimsWithoutPull: number;
  /** REST requests in flight while seeding. */
  concurrency: number;
  seed: number;
}

export const DEFAULT_BACKLOG: BacklogSpec = { issues: 1000, pulls: 100, fleetPulls: 50, claimsWithoutPull: 10, concurrency: 8, seed: 7 };

/** The fleet instance the bench gathers as; a live peer; a peer whose lease ran out. */
export const INSTANCES = { me: "bench-me", peer: "bench-peer", gone: "bench-gone" } as const;
export const HUMAN = "alice";
export const LABELS = ["ready-for-agent", "needs-triage", "epic", "priority:high", "ready-for-human", "afk-attempt/1"];
export const REQUIRED_CHECKS = ["ci", "lint"];

export interface SeededBacklog {
  issues: number;
  epics: number;
  sub_issue_links: number;
  native_blocked_by: number;
  body_blocked_by: number;
  ready: number;
  pulls: number;
  fleet_pulls: number;
  human_pulls: number;
  claims: number;
  heartbeats: number;
  check_runs: number;
  statuses: number;
  seed_ms: number;
}

const PROSE = "Implement the behaviour described here, with tests, and keep the public API unchanged. ".repeat(6);
const TOPICS = ["parser", "cache", "retry", "config", "logging", "cli", "auth", "paging", "docs", "metrics"];

/** The issues as a forge seed file (issue numbers equal seed positions in a fresh forge). */
export function backlogSeed(spec: BacklogSpec): {
  seed: Seed;
  stats: Pick<SeededBacklog, "issues" | "epics" | "sub_issue_links" | "native_blocked_by" | "body_blocked_by" | "ready">;
} {
  const rnd = prng(spec.seed);
  const issues: SeedIssue[] = [];
  let epics = 0;
  let subLinks = 0;
  let native = 0;
  let bodyBlocked = 0;
  let ready = 0;
  for (let n = 1; n <= spec.issues; n++) {
    const topic = TOPICS[n % TOPICS.length]!;
    const labels: string[] = [];
    const issue: SeedIssue = { title: `Improve the ${topic} (${n})`, body: PROSE, labels, author: rnd() < 0.3 ? HUMAN : "afk-bot" };
    if (n % 50 === 0) {
      // An epic: never dispatched, its ten predecessors are its sub-issues.
      labels.push("epic");
      issue.sub_issues = Array.from({ length: Math.min(10, n - 1) }, (_, i) => n - 1 - i);
      epics++;
      subLinks += issue.sub_issues.length;
    } else {
      const r = rnd();
      if (r < 0.85) {
        labels.push("ready-for-agent");
        ready++;
      } else if (r < 0.93) labels.push("needs-triage");
      if (rnd() < 0.1) labels.push("priority:high");
      if (rnd() < 0.02) labels.push("ready-for-human");
      if (rnd() < 0.03) labels.push("afk-attempt/1");
      // Blockers always point at lower numbers: no cycles, so the forge accepts every link.
      if (n > 5 && rnd() < 0.06) {
        issue.blocked_by = [n - 1 - Math.floor(rnd() * 4)];
        native++;
      }
      if (n > 5 && rnd() < 0.1) {
        issue.body = `${PROSE}\n\n## Blocked by\n- [ ] #${1 + Math.floor(rnd() * (n - 1))}\n`;
        bodyBlocked++;
      }
    }
    issues.push(issue);
  }
  return {
    seed: { labels: LABELS.map((name) => ({ name })), issues },
    stats: { issues: spec.issues, epics, sub_issue_links: subLinks, native_blocked_by: native, body_blocked_by: bodyBlocked, ready },
  };
}

interface PlannedPull {
  branch: string;
  issue: number;
  fleet: boolean;
  title: string;
  body: string;
}

interface PlannedRef {
  ref: string;
  message: string;
}

function planPulls(spec: BacklogSpec, seed: Seed, rnd: () => number): { pulls: PlannedPull[]; claims: PlannedRef[]; heartbeats: PlannedRef[] } {
  const issues = seed.issues ?? [];
  const ready = issues.map((s, i) => ({ s, n: i + 1 })).filter(({ s }) => s.labels?.includes("ready-for-agent"));
  // Distinct targets for the fleet's PRs and its coding claims, spread over the backlog.
  const targets: number[] = [];
  const taken = new Set<number>();
  while (targets.length < Math.min(ready.length, spec.fleetPulls + spec.claimsWithoutPull)) {
    const { n } = ready[Math.floor(rnd() * ready.length)]!;
    if (!taken.has(n)) {
      taken.add(n);
      targets.push(n);
    }
  }
  const now = Date.now();
  const owner = (): string => {
    const r = rnd();
    return r < 0.6 ? INSTANCES.me : r < 0.9 ? INSTANCES.peer : INSTANCES.gone;
  };
  const pulls: PlannedPull[] = [];
  const claims: PlannedRef[] = [];
  targets.forEach((n, i) => {
    const title = issues[n - 1]!.title;
    if (i < spec.fleetPulls) {
      pulls.push({ branch: fleetBranchName(n, title), issue: n, fleet: true, title: `${title}`, body: `Closes #${n}\n\n${PROSE}` });
    }
    claims.push({ ref: `refs/afk/claim/${n}`, message: formatClaimMessage({ instance: owner(), host: "bench-host", at: new Date(now - 30 * 60_000) }) });
  });
  for (let i = 0; pulls.length < spec.pulls; i++) {
    const n = 1 + Math.floor(rnd() * issues.length);
    const body = rnd() < 0.5 ? `Closes #${n}\n\n${PROSE}` : `Related to #${n}.\n\n${PROSE}`;
    pulls.push({ branch: `feature/bench-${i + 1}`, issue: n, fleet: false, title: `Human change ${i + 1}`, body });
  }
  const heartbeats: PlannedRef[] = [
    { ref: `refs/afk/heartbeat/${INSTANCES.me}`, message: formatHeartbeatMessage({ instance: INSTANCES.me, host: "bench-host", at: new Date(now - 60_000) }) },
    {
      ref: `refs/afk/heartbeat/${INSTANCES.peer}`,
      message: formatHeartbeatMessage({ instance: INSTANCES.peer, host: "peer-host", at: new Date(now - 5 * 60_000) }),
    },
    {
      ref: `refs/afk/heartbeat/${INSTANCES.gone}`,
      message: formatHeartbeatMessage({ instance: INSTANCES.gone, host: "gone-host", at: new Date(now - 3 * 86_400_000) }),
    },
  ];
  return { pulls, claims, heartbeats };
}

/** Runs `fn` over `items` with at most `limit` in flight; results in input order. */
export async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

function fastImport(cwd: string, stream: string): Promise<void> {
  return new Promise((ok, fail) => {
    const child = spawn("git", ["fast-import", "--quiet"], { cwd, stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.once("error", fail);
    child.once("exit", (code) => (code === 0 ? ok() : fail(new Error(`git fast-import exited with ${code}: ${stderr.trim()}`))));
    child.stdin.end(stream);
  });
}

function data(text: string): string {
  return `data ${Buffer.byteLength(text)}\n${text}\n`;
}

/** One fast-import stream: a commit per PR branch (on main), an empty-tree root commit per claim and heartbeat. */
function importStream(base: string, pulls: PlannedPull[], refs: PlannedRef[]): string {
  const when = `${Math.floor(Date.now() / 1000)} +0000`;
  let s = "";
  pulls.forEach((p, i) => {
    s += `commit refs/heads/${p.branch}\ncommitter Bench Author <bench@example.com> ${when}\n`;
    s += data(`${p.fleet ? "afk" : "wip"}: work on #${p.issue}`);
    s += `from ${base}\nM 100644 inline bench/change-${i + 1}.txt\n`;
    s += data(`change ${i + 1} for issue #${p.issue}\n`);
    s += "\n";
  });
  for (const r of refs) {
    s += `commit ${r.ref}\ncommitter afk-mcp <afk-mcp@users.noreply.github.com> ${when}\n`;
    s += data(r.message);
    s += "deleteall\n\n";
  }
  return s;
}

/**
 * Everything but the issues (which the forge loaded from `backlogSeed`'s file at start):
 * branches, claims and heartbeats in one push, then PRs, check runs, statuses and the base's
 * required checks over REST.
 */
export async function seedForge(
  forge: RunningForge,
  spec: BacklogSpec,
  seed: Seed,
  workDir: string,
  log: (message: string) => void = () => {},
): Promise<Omit<SeededBacklog, "issues" | "epics" | "sub_issue_links" | "native_blocked_by" | "body_blocked_by" | "ready" | "seed_ms">> {
  let t = performance.now();
  const lap = (what: string): void => {
    const now = performance.now();
    log(`  ${what}: ${Math.round(now - t)} ms`);
    t = now;
  };
  const rnd = prng(spec.seed + 1);
  const plan = planPulls(spec, seed, rnd);
  const humanToken = forge.users[HUMAN];
  if (!humanToken) throw new Error(`the forge has no user ${HUMAN}`);

  // One bare clone, one fast-import, one push.
  const clone = join(workDir, "seed.git");
  await git(workDir, "clone", "--bare", "--quiet", authedGitUrl(forge), clone);
  const base = (await git(clone, "rev-parse", "refs/heads/main")).stdout;
  await fastImport(clone, importStream(base, plan.pulls, [...plan.claims, ...plan.heartbeats]));
  await git(clone, "push", "--quiet", "origin", "refs/heads/afk/*:refs/heads/afk/*", "refs/heads/feature/*:refs/heads/feature/*", "refs/afk/*:refs/afk/*");
  lap(`${plan.pulls.length} branches, ${plan.claims.length} claims, ${plan.heartbeats.length} heartbeats: clone, fast-import, one push`);
  const heads = new Map<string, string>();
  for (const line of (await git(clone, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/")).stdout.split("\n")) {
    const [ref, sha] = line.split(" ");
    if (ref && sha) heads.set(ref.slice("refs/heads/".length), sha);
  }

  const must = async (what: string, p: Promise<{ status: number; body: unknown }>, want: number): Promise<void> => {
    const r = await p;
    if (r.status !== want) throw new Error(`seed: ${what}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  };

  await must(
    "protect main",
    api(forge, "PUT", repoPath(forge, "/branches/main/protection"), {
      required_status_checks: { strict: true, contexts: REQUIRED_CHECKS },
      enforce_admins: null,
      required_pull_request_reviews: null,
      restrictions: null,
    }),
    200,
  );

  await pool(plan.pulls, spec.concurrency, (p) =>
    must(
      `open PR from ${p.branch}`,
      api(
        forge,
        "POST",
        repoPath(forge, "/pulls"),
        { title: p.title, body: p.body, head: p.branch, base: "main" },
        { token: p.fleet ? forge.token : humanToken },
      ),
      201,
    ),
  );

  lap(`${plan.pulls.length} PRs opened`);
  // CI on the fleet's heads: a check run per required check (some failing, some running), and a status.
  const checkPosts: { what: string; path: string; body: unknown }[] = [];
  let checkRuns = 0;
  let statuses = 0;
  for (const p of plan.pulls.filter((x) => x.fleet)) {
    const sha = heads.get(p.branch);
    if (!sha) throw new Error(`seed: no head for ${p.branch}`);
    const ciFails = rnd() < 0.2;
    const lintRunning = rnd() < 0.2;
    checkPosts.push({
      what: `ci on ${p.branch}`,
      path: "/check-runs",
      body: { name: "ci", head_sha: sha, status: "completed", conclusion: ciFails ? "failure" : "success" },
    });
    checkPosts.push({
      what: `lint on ${p.branch}`,
      path: "/check-runs",
      body: lintRunning ? { name: "lint", head_sha: sha, status: "in_progress" } : { name: "lint", head_sha: sha, status: "completed", conclusion: "success" },
    });
    checkPosts.push({ what: `status on ${p.branch}`, path: `/statuses/${sha}`, body: { state: "success", context: "deploy" } });
    checkRuns += 2;
    statuses += 1;
  }
  await pool(checkPosts, spec.concurrency, (c) => must(c.what, api(forge, "POST", repoPath(forge, c.path), c.body), 201));
  lap(`${checkRuns} check runs and ${statuses} statuses posted`);

  const fleet = plan.pulls.filter((p) => p.fleet).length;
  return {
    pulls: plan.pulls.length,
    fleet_pulls: fleet,
    human_pulls: plan.pulls.length - fleet,
    claims: plan.claims.length,
    heartbeats: plan.heartbeats.length,
    check_runs: checkRuns,
    statuses,
  };
}

/** Writes the seed file the forge loads at start. */
export async function writeSeedFile(dir: string, seed: Seed): Promise<string> {
  const path = join(dir, "backlog-seed.json");
  await writeFile(path, JSON.stringify(seed));
  return path;
}
