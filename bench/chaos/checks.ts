// The chaos harness's verdict, read from the forge's REST API and its git repository alone —
// never from the fleet's lanes or state: what a user could check on GitHub after the fact.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import { api } from "../../test/support/forge-fixtures.js";
import { DEFAULT_USER } from "../../server/forge-emulator/index.js";
import { ESCALATE_LABEL } from "../../server/demo/backlog.js";
import { readRefs } from "./observe.js";
import { OBSERVER_USER, REPO, type End, type World } from "./world.js";

const pexec = promisify(execFile);

interface PullView {
  number: number;
  user: { login: string };
  head: { ref: string; sha: string };
  body: string | null;
  merged_at: string | null;
  merge_commit_sha: string | null;
}

interface IssueView {
  number: number;
  state: string;
  labels: { name: string }[];
}

/** Worktree commits a killed host's worker had made, recorded at the kill. */
export interface OrphanCommits {
  issue: number;
  kind: "same_state" | "fresh_state";
  /** Commits only the dead worktree held at the kill: continued if a later host pushed them. */
  shas: string[];
  /** Commits the forge already held at the kill (a checkpoint, an open PR): safe on any machine. */
  pushedAtKill: number;
  /** The state dir the commits were left in. */
  stateDir: string;
  /** Of `shas`, those still unpushed when a later kill lost that state dir's machine. */
  lostWithMachine: string[];
}

export interface Verdict {
  ends: { issue: number; expected: End; actual: End | "open" }[];
  lost: number[];
  wrongEnds: { issue: number; expected: End; actual: string }[];
  doubleMerged: number[];
  foreignMerged: number[];
  baseCommits: number;
  peerBaseCommits: number;
  untestedBaseTrees: string[];
  refsLeft: { claim: number; lock: number; probe: number; heartbeat: number; names: string[] };
  commitsContinued: {
    continued: number;
    total: number;
    pushedAtKill: number;
    lostWithMachine: number;
    byKind: Record<string, { continued: number; total: number; pushed_at_kill: number; lost_with_machine: number }>;
  };
  hostileExecuted: boolean;
}

async function all<T>(world: World, path: string): Promise<T[]> {
  const out: T[] = [];
  for (let page = 1; page < 100; page += 1) {
    const r = await api<T[]>(world.forge, "GET", `${path}${path.includes("?") ? "&" : "?"}per_page=100&page=${page}`, undefined, {
      token: world.forge.users[OBSERVER_USER] ?? world.forge.token,
    });
    if (r.status !== 200) throw new Error(`chaos: GET ${path} answered ${r.status}`);
    out.push(...r.body);
    if (r.body.length < 100) break;
  }
  return out;
}

const git = async (world: World, ...args: string[]): Promise<string> =>
  (await pexec("git", ["--git-dir", world.forge.bareRepo, ...args], { maxBuffer: 64 * 1024 * 1024 })).stdout.trim();

/**
 * Whether the forge already holds a commit. A commit pushed before a kill (a checkpoint, an open
 * PR) is not at risk: only the ones that existed in a worktree alone can be continued or redone.
 */
export async function onForge(world: World, sha: string): Promise<boolean> {
  try {
    await pexec("git", ["--git-dir", world.forge.bareRepo, "cat-file", "-e", `${sha}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}

async function passed(world: World, sha: string): Promise<boolean> {
  const r = await api<{ check_runs: { name: string; status: string; conclusion: string | null }[] }>(
    world.forge,
    "GET",
    `/repos/${REPO}/commits/${sha}/check-runs?per_page=100`,
    undefined,
    { token: world.forge.users[OBSERVER_USER] ?? world.forge.token },
  );
  return r.status === 200 && r.body.check_runs.some((c) => c.name === "test" && c.status === "completed" && c.conclusion === "success");
}

/** The fleet's PRs for an issue: its own branch `afk/<n>-…` or `afk/<n>`, opened by the fleet's login. */
function fleetPullsFor(pulls: PullView[], n: number): PullView[] {
  return pulls.filter((p) => p.user.login === DEFAULT_USER && new RegExp(`^afk/${n}(?:-|$)`).test(p.head.ref));
}

export async function verdict(world: World, orphans: OrphanCommits[]): Promise<Verdict> {
  const issues = new Map(
    (await all<IssueView & { pull_request?: unknown }>(world, `/repos/${REPO}/issues?state=all`)).filter((i) => !i.pull_request).map((i) => [i.number, i]),
  );
  const pulls = await all<PullView>(world, `/repos/${REPO}/pulls?state=all`);

  const ends: Verdict["ends"] = [];
  const doubleMerged: number[] = [];
  for (const planned of world.issues) {
    const issue = issues.get(planned.number);
    const merged = fleetPullsFor(pulls, planned.number).filter((p) => p.merged_at !== null);
    if (merged.length > 1) doubleMerged.push(planned.number);
    let actual: End | "open" = "open";
    if (issue?.labels.some((l) => l.name === ESCALATE_LABEL)) actual = "escalated";
    else if (issue?.state === "closed") actual = merged.length > 0 ? "merged" : "closed_done";
    ends.push({ issue: planned.number, expected: planned.end, actual: planned.end === "human" && actual === "open" ? "human" : actual });
  }
  const lost = ends.filter((e) => e.actual === "open").map((e) => e.issue);
  const wrongEnds = ends.filter((e) => e.actual !== "open" && e.actual !== e.expected).map((e) => ({ issue: e.issue, expected: e.expected, actual: e.actual }));
  const foreignMerged = world.foreignPulls.filter((n) => pulls.find((p) => p.number === n)?.merged_at);

  // Every commit the base's first parent chain gained must carry a tree CI passed on.
  const chain = (await git(world, "log", "--first-parent", "--format=%H %T %an", `${world.seedSha}..main`)).split("\n").filter(Boolean);
  const untestedBaseTrees: string[] = [];
  let peerBaseCommits = 0;
  for (const line of chain) {
    const [sha, tree, ...author] = line.split(" ");
    if (author.join(" ") === "forge-peer") {
      // The forge's base-moves-before-merge fault: a peer's commit, not the fleet's landing.
      peerBaseCommits += 1;
      continue;
    }
    if (await passed(world, sha!)) continue;
    const pull = pulls.find((p) => p.merge_commit_sha === sha);
    if (pull && (await passed(world, pull.head.sha)) && (await git(world, "rev-parse", `${pull.head.sha}^{tree}`)) === tree) continue;
    untestedBaseTrees.push(`${sha!.slice(0, 10)}${pull ? ` (PR #${pull.number})` : ""}`);
  }

  const refs = await readRefs(world.forge.bareRepo);
  const afk = [...refs.keys()].filter((r) => r.startsWith("refs/afk/"));
  const count = (kind: string) => afk.filter((r) => r.startsWith(`refs/afk/${kind}/`)).length;

  const byKind: Record<string, { continued: number; total: number; pushed_at_kill: number; lost_with_machine: number }> = {};
  let continued = 0;
  let total = 0;
  let pushedAtKill = 0;
  let lostWithMachine = 0;
  for (const orphan of orphans) {
    const k = (byKind[orphan.kind] ??= { continued: 0, total: 0, pushed_at_kill: 0, lost_with_machine: 0 });
    k.pushed_at_kill += orphan.pushedAtKill;
    pushedAtKill += orphan.pushedAtKill;
    for (const sha of orphan.shas) {
      // Continued: a later host pushed it (to the branch, a PR, the base), so the work went on
      // from it; redone: it never left the dead worktree. Whether that attempt then passed CI
      // is another figure (the ends above).
      const kept = await onForge(world, sha);
      total += 1;
      k.total += 1;
      if (!kept && orphan.lostWithMachine.includes(sha)) {
        lostWithMachine += 1;
        k.lost_with_machine += 1;
      }
      if (kept) {
        continued += 1;
        k.continued += 1;
      }
    }
  }

  return {
    ends,
    lost,
    wrongEnds,
    doubleMerged,
    foreignMerged,
    baseCommits: chain.length,
    peerBaseCommits,
    untestedBaseTrees,
    refsLeft: { claim: count("claim"), lock: count("lock"), probe: count("probe"), heartbeat: count("heartbeat"), names: afk },
    commitsContinued: { continued, total, pushedAtKill, lostWithMachine, byKind },
    hostileExecuted: existsSync(world.pwnedMarker),
  };
}

/** Commits a worker made in its worktree beyond the base (git in the worktree itself). */
export async function worktreeCommits(worktree: string): Promise<string[]> {
  try {
    const { stdout } = await pexec("git", ["-C", worktree, "rev-list", "HEAD", "^refs/remotes/origin/main"]);
    return stdout.split("\n").filter(Boolean);
  } catch {
    return [];
  }
}
