// Landing under the Not Rocket Science Rule, against the local forge over real HTTP with real
// git: a fleet claim on a hidden ref, a worker branch pushed from the fleet's work repository,
// a PR by the fleet's login, green checks; then every way a landing can go. Every REST answer is
// checked against GitHub's OpenAPI description, and at the end every value the base branch
// ever took (its reflog in the forge's bare repository) is a seed commit, a commit a human (or
// the forge's "peer" fault) made, or a tree that passed the gate.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DEFAULT_CONFIG, type FleetConfig } from "../schemas/config.js";
import type { Forge, PullDetail } from "../server/gh/forge.js";
import { GitRefStore } from "../server/gh/gitrefs.js";
import type { RefStore } from "../server/gh/refstore.js";
import { formatLandingLock, landPull, landingLockRef, readCheckEvidence, type LandResult, type LandingContext } from "../server/landing/land.js";
import { Lease } from "../server/gh/lease.js";
import { GateCache, gateEnv, runGate } from "../server/runtimes/local/gate-command.js";
import { api, cloneRepo, commitFile, git, protectBranch, repoPath, startTestForge, tempDir } from "./support/forge-fixtures.js";
import { BASE, NS, fleetPr, trainContext, trainHost, type TrainHost } from "./support/train-fixtures.js";

interface Fleet extends TrainHost {
  gateCache: GateCache;
  human: string;
}

async function startFleet(): Promise<Fleet> {
  const forge = await startTestForge({ users: ["human", "mallory"] });
  const human = await cloneRepo(forge, forge.users.human);
  return { ...(await trainHost(forge, "fleet-one", "host-one")), gateCache: new GateCache(), human };
}

function config(patch: (c: FleetConfig) => void = () => {}): FleetConfig {
  const c = structuredClone(DEFAULT_CONFIG) as FleetConfig;
  // The host resolves "auto" from the base's protection; these tests name the landing themselves.
  c.landing.strategy = "squash";
  patch(c);
  return c;
}

function context(f: Fleet, cfg: FleetConfig = config(), extra: Partial<LandingContext> = {}): LandingContext {
  return trainContext(f, cfg, { gateCache: f.gateCache, ...extra });
}

// ---- what the base may ever point at ------------------------------------------------------------

const seedCommits = new Set<string>();
const humanCommits = new Set<string>();
const gatedTrees = new Set<string>();

async function bare(f: Fleet, ...args: string[]): Promise<string> {
  return (await git(f.forge.bareRepo, ...args)).stdout;
}

async function mainTip(f: Fleet): Promise<string> {
  return bare(f, "rev-parse", `refs/heads/${BASE}`);
}

async function treeOf(f: Fleet, sha: string): Promise<string> {
  return bare(f, "rev-parse", `${sha}^{tree}`);
}

async function branchExists(f: Fleet, branch: string): Promise<boolean> {
  return (await bare(f, "for-each-ref", `refs/heads/${branch}`)) !== "";
}

/** A human pushes a commit straight to main. */
async function humanCommit(f: Fleet, path: string, content: string): Promise<string> {
  await git(f.human, "fetch", "--quiet", "origin");
  await git(f.human, "checkout", "--quiet", "-B", BASE, `origin/${BASE}`);
  const sha = await commitFile(f.human, path, content, `human: ${path}`);
  await git(f.human, "push", "--quiet", "origin", `HEAD:refs/heads/${BASE}`);
  humanCommits.add(sha);
  return sha;
}

async function newIssue(f: Fleet, title: string): Promise<number> {
  const r = await api(f.forge, "POST", repoPath(f.forge, "/issues"), { title, body: "do the thing" });
  assert.equal(r.status, 201);
  return r.body.number as number;
}

interface Work {
  issue: number;
  title: string;
  claimSha: string;
  pr: number;
  head: string;
  branch: string;
}

/** Claims an issue, has a "worker" commit files in its worktree, pushes, opens the fleet's PR. */
async function workerPr(f: Fleet, title: string, files: Record<string, string>, opts: { green?: boolean } = {}): Promise<Work> {
  const work = await fleetPr(f, title, files);
  if (opts.green ?? true) await green(f, work.head);
  return work;
}

/** CI reports green on `sha`: its tree passed the gate. */
async function green(f: Fleet, sha: string, name = "ci"): Promise<void> {
  const r = await api(f.forge, "POST", repoPath(f.forge, "/check-runs"), { name, head_sha: sha, status: "completed", conclusion: "success" });
  assert.equal(r.status, 201);
  gatedTrees.add(await treeOf(f, sha));
}

function land(f: Fleet, w: Work, cfg?: FleetConfig, extra?: Partial<LandingContext>, head = w.head): Promise<LandResult> {
  return landPull(context(f, cfg, extra), { issue: w.issue, title: w.title, claimSha: w.claimSha, pr: w.pr, head });
}

function expectOutcome<K extends LandResult["outcome"]>(result: LandResult, outcome: K): Extract<LandResult, { outcome: K }> {
  assert.equal(result.outcome, outcome, `expected ${outcome}, got ${JSON.stringify(result)}`);
  return result as Extract<LandResult, { outcome: K }>;
}

async function control(f: Fleet, method: string, path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${f.forge.apiUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status}`);
}

async function assertLanded(f: Fleet, w: Work, result: LandResult, method: string): Promise<Extract<LandResult, { outcome: "merged" }>> {
  const merged = expectOutcome(result, "merged");
  assert.equal(merged.method, method);
  assert.equal(merged.verified, true, merged.verifyNote ?? "");
  const tip = await mainTip(f);
  assert.equal(tip, merged.mergeSha);
  assert.equal(await treeOf(f, tip), await treeOf(f, merged.head), "the base's tree is the gated head's tree");
  assert.equal((await f.gh.getIssue(w.issue)).state, "closed", "the issue is closed");
  assert.equal(merged.issueClosed, true);
  assert.equal(merged.branchDeleted, true);
  assert.equal(await branchExists(f, w.branch), false, "the worker branch is deleted");
  const pull = await f.gh.getPull(w.pr);
  assert.equal(pull.merged, true);
  return merged;
}

async function assertNothingLanded(f: Fleet, w: Work, before: string): Promise<void> {
  assert.equal(await mainTip(f), before, "the base did not move");
  const pull = await f.gh.getPull(w.pr);
  assert.equal(pull.merged, false);
  assert.equal(pull.state, "open");
}

describe("landPull against the local forge", () => {
  let f: Fleet;

  before(async () => {
    f = await startFleet();
    seedCommits.add(await mainTip(f));
  });

  after(async () => {
    assert.deepEqual(f.forge.violations(), [], "every forge answer matched GitHub's schemas");
    await f.forge.dispose();
  });

  it("(a) squash-lands a green head that contains the base", async () => {
    const w = await workerPr(f, "Add alpha", { "alpha.txt": "alpha\n" });
    const before = await mainTip(f);
    const result = await land(f, w);
    const merged = await assertLanded(f, w, result, "squash");
    assert.equal(merged.baseBefore, before);
    assert.equal(merged.syncs, 0);
    assert.equal(await bare(f, "rev-parse", `${merged.mergeSha}^1`), before, "one squash commit on top of B");
    assert.equal(await f.refs.read(landingLockRef(NS)), null, "the landing lock is released");
  });

  it("(b) lands with a merge commit", async () => {
    const w = await workerPr(f, "Add beta", { "beta.txt": "beta\n" });
    const before = await mainTip(f);
    const merged = await assertLanded(
      f,
      w,
      await land(
        f,
        w,
        config((c) => (c.landing.strategy = "merge")),
      ),
      "merge",
    );
    const parents = (await bare(f, "rev-list", "--parents", "-n", "1", merged.mergeSha)).split(" ").slice(1);
    assert.deepEqual(parents, [before, w.head]);
  });

  it("(c) push strategy fast-forwards the base to a landing commit of the gated head's tree", async () => {
    const w = await workerPr(f, "Add gamma", { "gamma.txt": "gamma\n" });
    const before = await mainTip(f);
    const merged = await assertLanded(
      f,
      w,
      await land(
        f,
        w,
        config((c) => (c.landing.strategy = "push")),
      ),
      "push",
    );
    const parents = (await bare(f, "rev-list", "--parents", "-n", "1", merged.mergeSha)).split(" ").slice(1);
    assert.deepEqual(parents, [before, w.head], "first parent the old base, second the gated head: the base's first-parent line holds gated trees only");
  });

  it("(d) a base that moved means sync and re-gate, never a blind merge", async () => {
    const w = await workerPr(f, "Add delta", { "delta.txt": "delta\n" });
    const moved = await humanCommit(f, "human-d.txt", "human\n");
    const synced = expectOutcome(await land(f, w), "synced");
    assert.notEqual(synced.head, w.head);
    assert.equal(synced.previousHead, w.head);
    assert.equal(synced.baseSha, moved);
    await assertNothingLanded(f, w, moved);
    await bare(f, "merge-base", "--is-ancestor", moved, synced.head); // throws if not contained
    assert.equal((await f.gh.getPull(w.pr)).head.sha, synced.head, "the PR follows the pushed sync");

    // The old head is no longer the PR's head: nothing lands on its gate.
    expectOutcome(await land(f, w), "retry_later");
    // The new head's checks are still missing: nothing lands either.
    const pending = await landPull(context(f, config(), { requiredChecks: { contexts: ["ci"], strict: false, source: "protection", readable: true } }), {
      ...w,
      head: synced.head,
    });
    expectOutcome(pending, "retry_later");
    await assertNothingLanded(f, w, moved);

    await green(f, synced.head);
    const merged = await assertLanded(f, w, await land(f, w, undefined, undefined, synced.head), "squash");
    assert.equal(merged.baseBefore, moved);
  });

  it("(d2) with the tick's listing, a turn that only syncs reads no PR; the turn that lands reads it first, and a PR a human closed meanwhile lands nothing", async () => {
    const prReads = async (): Promise<number> => {
      const acc = (await (await fetch(`${f.forge.apiUrl}/_forge/accounting`)).json()) as { by_route: Record<string, { total: number }> };
      return ["GET /repos/{owner}/{repo}/pulls", "GET /repos/{owner}/{repo}/pulls/{pull_number}"].reduce(
        (sum, route) => sum + (acc.by_route[route]?.total ?? 0),
        0,
      );
    };
    const listedLand = (w: Work, head: string): Promise<LandResult> =>
      landPull(context(f), { issue: w.issue, title: w.title, claimSha: w.claimSha, pr: w.pr, head, listed: { headRef: w.branch } });
    const w = await workerPr(f, "Add delta two", { "delta-two.txt": "delta two\n" });
    const moved = await humanCommit(f, "human-d2.txt", "human\n");
    const before = await prReads();
    const synced = expectOutcome(await listedLand(w, w.head), "synced");
    assert.equal(await prReads(), before, "the sync read neither the PR list nor the PR");
    await bare(f, "merge-base", "--is-ancestor", moved, synced.head);
    await assertNothingLanded(f, w, moved);

    await green(f, synced.head);
    const reads = await prReads();
    const result = await listedLand(w, synced.head);
    assert.equal((await prReads()) - reads, 1, "one read of the PR before the base moved");
    await assertLanded(f, w, result, "squash");

    // The same shortcut never lands a PR the listing still showed open: the read before the merge refuses it.
    const v = await workerPr(f, "Add delta three", { "delta-three.txt": "delta three\n" });
    assert.equal((await api(f.forge, "PATCH", repoPath(f.forge, `/pulls/${v.pr}`), { state: "closed" })).status, 200);
    const base = await mainTip(f);
    const refused = expectOutcome(await listedLand(v, v.head), "not_ours");
    assert.match(refused.why, /closed/);
    assert.equal(await mainTip(f), base, "the base did not move");
    await f.lease.release(v.issue, v.claimSha);
  });

  it("(d3) a turn that only syncs takes no landing lock (it moves no base), and waits while another host holds it; the turn that lands takes it", async () => {
    const created: string[] = [];
    const refs: RefStore = {
      list: (prefix) => f.refs.list(prefix),
      create: (ref, message) => (created.push(ref), f.refs.create(ref, message)),
      swap: (ref, sha, message) => f.refs.swap(ref, sha, message),
      remove: (ref, sha) => f.refs.remove(ref, sha),
      read: (ref) => f.refs.read(ref),
    };
    const ctx = context(f, config(), { refs, requiredChecks: await f.gh.requiredChecks(BASE) });
    const listedLand = (w: Work, head: string): Promise<LandResult> =>
      landPull(ctx, { issue: w.issue, title: w.title, claimSha: w.claimSha, pr: w.pr, head, listed: { headRef: w.branch } });
    const w = await workerPr(f, "Add delta four", { "delta-four.txt": "delta four\n" });
    const moved = await humanCommit(f, "human-d3.txt", "human\n");

    const other = new GitRefStore({ controlDir: join(await tempDir("afk-lock-"), "control.git"), remoteUrl: f.forge.gitUrl, token: f.forge.token });
    const held = await other.create(
      landingLockRef(NS),
      formatLandingLock({ instance: "fleet-two", host: "host-two", at: new Date().toISOString(), issue: 999, ttlSeconds: 600 }),
    );
    assert.ok(held.won);
    assert.match(expectOutcome(await listedLand(w, w.head), "busy").why, /fleet-two on host-two/);
    assert.equal(await bare(f, "rev-parse", `refs/heads/${w.branch}`), w.head, "nothing was pushed while another host lands");
    assert.ok((await other.remove(landingLockRef(NS), held.won ? held.sha : "")).won);

    created.length = 0;
    const synced = expectOutcome(await listedLand(w, w.head), "synced");
    assert.deepEqual(created, [], "the sync took no lock");
    await bare(f, "merge-base", "--is-ancestor", moved, synced.head);
    await assertNothingLanded(f, w, moved);
    await green(f, synced.head);
    await assertLanded(f, w, await listedLand(w, synced.head), "squash");
    assert.deepEqual(created, [landingLockRef(NS)], "the landing took the lock once");
    assert.equal(await f.refs.read(landingLockRef(NS)), null, "and released it");
  });

  it("(d') a red check on the head is a red gate with evidence read back from GitHub", async () => {
    const w = await workerPr(f, "Add red", { "red.txt": "red\n" }, { green: false });
    const r = await api(f.forge, "POST", repoPath(f.forge, "/check-runs"), {
      name: "ci",
      head_sha: w.head,
      status: "completed",
      conclusion: "failure",
      details_url: "https://ci.example.com/run/9",
      output: { title: "2 tests failed", summary: "see the log", text: `${"noise\n".repeat(2000)}AssertionError: expected 1 to equal 2\n` },
    });
    assert.equal(r.status, 201);
    const before = await mainTip(f);
    const red = expectOutcome(await land(f, w), "gate_red");
    assert.equal(red.evidence.kind, "ci");
    assert.match(red.evidence.summary, /ci: failure \(2 tests failed\)/);
    assert.match(red.evidence.excerpt, /AssertionError: expected 1 to equal 2/, "the tail of the log is kept");
    assert.ok(Buffer.byteLength(red.evidence.excerpt) <= DEFAULT_CONFIG.gate.excerpt_bytes);
    await assertNothingLanded(f, w, before);

    const statusReads = async (): Promise<number> => {
      const acc = (await (await fetch(`${f.forge.apiUrl}/_forge/accounting`)).json()) as { by_route: Record<string, { total: number }> };
      return acc.by_route["GET /repos/{owner}/{repo}/commits/{ref}/statuses"]?.total ?? 0;
    };
    const statusesBefore = await statusReads();
    const evidence = await readCheckEvidence(f.gh, w.head, ["ci"], 300);
    assert.equal(evidence.kind, "ci");
    assert.ok(Buffer.byteLength(evidence.excerpt) <= 300);
    assert.match(evidence.excerpt, /AssertionError/);
    assert.deepEqual(
      evidence.checks.map((c) => c.name),
      ["ci"],
    );
    assert.equal(await statusReads(), statusesBefore, "every named check failed as a run: no status list read");
    await api(f.forge, "POST", repoPath(f.forge, `/statuses/${w.head}`), { state: "failure", context: "lint", description: "3 lint errors" });
    const both = await readCheckEvidence(f.gh, w.head, ["ci", "lint"], 300);
    assert.deepEqual(
      both.checks.map((c) => c.name),
      ["ci", "lint"],
      "a name without a failed run: the statuses are read for it",
    );
    assert.match(both.summary, /3 lint errors/);
    await f.lease.release(w.issue, w.claimSha);
  });

  it("(e) a one-shot 405 lands nothing; the next call lands the same gated head", async () => {
    const w = await workerPr(f, "Add epsilon", { "epsilon.txt": "epsilon\n" });
    const before = await mainTip(f);
    await control(f, "POST", "/_forge/once", { kind: "merge_405" });
    const later = expectOutcome(await land(f, w), "retry_later");
    assert.match(later.why, /405/);
    await assertNothingLanded(f, w, before);
    await assertLanded(f, w, await land(f, w), "squash");
  });

  it("(f) under strict protection, a base that moves just before the merge lands no untested tree", async () => {
    await protectBranch(f.forge, { contexts: ["ci"], strict: true, enforceAdmins: false, branch: BASE });
    try {
      const w = await workerPr(f, "Add zeta", { "zeta.txt": "zeta\n" });
      const before = await mainTip(f);
      await control(f, "POST", "/_forge/once", { kind: "base_moves_before_merge" });
      const synced = expectOutcome(await land(f, w), "synced");
      const peer = await mainTip(f);
      assert.notEqual(peer, before, "the forge's peer commit moved the base");
      assert.equal(await bare(f, "log", "-1", "--format=%an", peer), "forge-peer");
      humanCommits.add(peer); // somebody else's commit: not the fleet's to gate
      assert.equal(synced.baseSha, peer);
      await assertNothingLanded(f, w, peer);
      await bare(f, "merge-base", "--is-ancestor", peer, synced.head);

      await green(f, synced.head);
      await assertLanded(f, w, await land(f, w, undefined, undefined, synced.head), "squash");
    } finally {
      const del = await api(f.forge, "DELETE", repoPath(f.forge, `/branches/${BASE}/protection`));
      assert.equal(del.status, 204);
    }
  });

  it("(g) lands only the fleet's own PRs: a human's 'Closes #n', a non-fleet branch, a fork", async () => {
    const before = await mainTip(f);
    const issue = await newIssue(f, "Wanted by everyone");
    const claim = await f.lease.claim(issue);
    assert.ok(claim.won);

    // A human's PR from a branch that even looks like the fleet's, saying "Closes #n".
    await git(f.human, "fetch", "--quiet", "origin");
    await git(f.human, "checkout", "--quiet", "-B", `afk/${issue}-human`, `origin/${BASE}`);
    const humanHead = await commitFile(f.human, "human-pr.txt", "human\n");
    await git(f.human, "push", "--quiet", "origin", `HEAD:refs/heads/afk/${issue}-human`);
    const humanPr = await api(
      f.forge,
      "POST",
      repoPath(f.forge, "/pulls"),
      { title: "mine", body: `Closes #${issue}`, head: `afk/${issue}-human`, base: BASE },
      { token: f.forge.users.human },
    );
    assert.equal(humanPr.status, 201);
    await green(f, humanHead);
    const ctx = context(f);
    const byHuman = expectOutcome(await landPull(ctx, { issue, title: "x", claimSha: claim.sha, pr: humanPr.body.number, head: humanHead }), "not_ours");
    assert.match(byHuman.why, /opened by human/);

    // The fleet's login, but a branch without the fleet prefix.
    await git(f.human, "checkout", "--quiet", "-B", `feature/${issue}`, `origin/${BASE}`);
    const plainHead = await commitFile(f.human, "plain.txt", "plain\n");
    await git(f.human, "push", "--quiet", "origin", `HEAD:refs/heads/feature/${issue}`);
    const plain = await f.gh.createPull({ title: "plain", body: `Closes #${issue}`, head: `feature/${issue}`, base: BASE });
    await green(f, plainHead);
    const notFleet = expectOutcome(await landPull(ctx, { issue, title: "x", claimSha: claim.sha, pr: plain.number, head: plainHead }), "not_ours");
    assert.match(notFleet.why, /not a fleet branch/);

    // A fleet branch of another issue.
    const other = await workerPr(f, "Another issue", { "other.txt": "other\n" });
    const wrongIssue = expectOutcome(await landPull(ctx, { issue, title: "x", claimSha: claim.sha, pr: other.pr, head: other.head }), "not_ours");
    assert.match(wrongIssue.why, /not a fleet branch for #/);

    // A fork: the local forge has no forks, so the PR is re-read through a forge that reports
    // its head in another repository (as GitHub does for a fork), everything else unchanged.
    const forked: Forge = Object.create(f.gh) as Forge;
    forked.getPull = async (n: number): Promise<PullDetail> => {
      const pull = await f.gh.getPull(n);
      return { ...pull, head: { ...pull.head, repoFullName: "mallory/demo" } };
    };
    // The landing reads the PR through the open-PR list first (a conditional read).
    forked.listOpenPulls = async () => (await f.gh.listOpenPulls()).map((pull) => ({ ...pull, head: { ...pull.head, repoFullName: "mallory/demo" } }));
    const fork = expectOutcome(
      await landPull({ ...context(f), forge: forked }, { issue: other.issue, title: other.title, claimSha: other.claimSha, pr: other.pr, head: other.head }),
      "not_ours",
    );
    assert.match(fork.why, /another repository \(mallory\/demo\)/);

    assert.equal(await mainTip(f), before, "nothing was merged");
    for (const n of [humanPr.body.number as number, plain.number, other.pr]) assert.equal((await f.gh.getPull(n)).merged, false);
    // The fleet's own PR is fine: it lands.
    await assertLanded(f, other, await land(f, other), "squash");
    await f.lease.release(issue, claim.sha);
  });

  it("(h) a claim swapped by another instance fences the landing", async () => {
    const w = await workerPr(f, "Add eta", { "eta.txt": "eta\n" });
    const before = await mainTip(f);
    const otherRefs = new GitRefStore({ controlDir: join(await tempDir("afk-other-"), "control.git"), remoteUrl: f.forge.gitUrl, token: f.forge.token });
    const other = new Lease(otherRefs, { namespace: NS, ttlSeconds: 4500, heartbeatSeconds: 60 }, "fleet-two", "host-two");
    const taken = await other.reclaim(w.issue, w.claimSha);
    assert.ok(taken.won);
    const fenced = expectOutcome(await land(f, w), "fenced");
    assert.match(fenced.why, /no longer holds/);
    await assertNothingLanded(f, w, before);
    assert.equal((await f.gh.getIssue(w.issue)).state, "open");
    assert.ok(taken.won && (await other.release(w.issue, taken.sha)));
  });

  it("(i) a sync conflict names the files and lands nothing", async () => {
    await humanCommit(f, "shared.txt", "base line\n");
    const w = await workerPr(f, "Change shared", { "shared.txt": "worker line\n" });
    const moved = await humanCommit(f, "shared.txt", "human line\n");
    const conflict = expectOutcome(await land(f, w), "conflict");
    assert.deepEqual(conflict.files, ["shared.txt"]);
    assert.equal(conflict.baseSha, moved);
    await assertNothingLanded(f, w, moved);
    assert.equal((await f.gh.getPull(w.pr)).head.sha, w.head, "nothing was pushed");
    await f.lease.release(w.issue, w.claimSha);
  });

  it("(j) local gate: red with an excerpt, green lands, and it gates exactly the committed tree", async () => {
    const failing = config((c) => {
      c.gate.ci = "local";
      c.gate.local_command = 'echo "lint says no"; echo "oops on stderr" >&2; exit 3';
      c.gate.timeout_seconds = 60;
    });
    const w1 = await workerPr(f, "Local red", { "local-red.txt": "red\n" }, { green: false });
    const before = await mainTip(f);
    const red = expectOutcome(await land(f, w1, failing), "gate_red");
    assert.equal(red.evidence.kind, "local");
    assert.match(red.evidence.excerpt, /lint says no/);
    assert.match(red.evidence.excerpt, /oops on stderr/);
    assert.ok(red.evidence.kind === "local" && red.evidence.exitCode === 3);
    assert.match(red.evidence.summary, /exited with 3/);
    assert.equal(red.gateReruns, 1, "red once more on its re-run (gate.rerun_failed 1) before it counts");
    await assertNothingLanded(f, w1, before);
    await f.lease.release(w1.issue, w1.claimSha);

    // The command needs a file the worker left untracked: the committed tree must fail.
    const needsFlag = config((c) => {
      c.gate.ci = "local";
      c.gate.local_command = "test -f ok-flag && test -f local-green.txt";
      c.gate.timeout_seconds = 60;
    });
    const w2 = await workerPr(f, "Local green", { "local-green.txt": "green\n" }, { green: false });
    await writeFile(join(f.workRepo.worktreePath(w2.issue), "ok-flag"), "untracked\n");
    expectOutcome(await land(f, w2, needsFlag), "gate_red");
    await assertNothingLanded(f, w2, before);

    const passing = config((c) => {
      c.gate.ci = "local";
      c.gate.local_command = "test -f local-green.txt && echo fine";
      c.gate.timeout_seconds = 60;
    });
    const merged = await assertLanded(f, w2, await land(f, w2, passing), "squash");
    assert.ok(f.gateCache.passedTrees(passing.gate.local_command!).includes(await treeOf(f, merged.head)));
    for (const tree of f.gateCache.passedTrees(passing.gate.local_command!)) gatedTrees.add(tree);
  });

  it("(j') local gate with a moved base: sync, gate the synced head, land it, in one call", async () => {
    const passing = config((c) => {
      c.gate.ci = "local";
      c.gate.local_command = "test -f local-sync.txt && test -f human-j.txt";
      c.gate.timeout_seconds = 60;
    });
    const w = await workerPr(f, "Local sync", { "local-sync.txt": "sync\n" }, { green: false });
    const moved = await humanCommit(f, "human-j.txt", "human\n");
    const merged = await assertLanded(f, w, await land(f, w, passing), "squash");
    assert.equal(merged.syncs, 1);
    assert.equal(merged.baseBefore, moved);
    assert.notEqual(merged.head, w.head);
    const passed = f.gateCache.passedTrees(passing.gate.local_command!);
    assert.ok(passed.includes(await treeOf(f, merged.head)));
    for (const tree of passed) gatedTrees.add(tree);
  });

  it("(j'') local gate re-run: a red counted at once with re-runs off is cached; with a re-run, the cached red runs again, and its green is cached and lands", async () => {
    const runs = join(await tempDir("afk-gate-runs-"), "runs");
    // Red on its first run only: a count of its runs outside the tree.
    const command = `echo run >> '${runs}'; test "$(wc -l < '${runs}')" -ge 2`;
    const flaky = (reruns: number) =>
      config((c) => {
        c.gate.ci = "local";
        c.gate.local_command = command;
        c.gate.timeout_seconds = 60;
        c.gate.rerun_failed = reruns;
      });
    const w = await workerPr(f, "Local flaky", { "local-flaky.txt": "flaky\n" }, { green: false });
    const before = await mainTip(f);
    const red = expectOutcome(await land(f, w, flaky(0)), "gate_red");
    assert.equal(red.gateReruns, undefined, "no re-run with gate.rerun_failed 0");
    await assertNothingLanded(f, w, before);
    const merged = await assertLanded(f, w, await land(f, w, flaky(1)), "squash");
    assert.equal(merged.gateReruns, 1);
    assert.equal((await readFile(runs, "utf8")).trim().split("\n").length, 2, "the cached red was not run again as the first run; its re-run was");
    assert.ok(f.gateCache.passedTrees(command).includes(await treeOf(f, merged.head)), "the green re-run is what the cache keeps");
    for (const tree of f.gateCache.passedTrees(command)) gatedTrees.add(tree);
  });

  it("(k) another host's landing lock makes it busy; a stale one is taken over and released", async () => {
    const w = await workerPr(f, "Add theta", { "theta.txt": "theta\n" });
    const before = await mainTip(f);
    const otherRefs = new GitRefStore({ controlDir: join(await tempDir("afk-lock-"), "control.git"), remoteUrl: f.forge.gitUrl, token: f.forge.token });
    const ref = landingLockRef(NS);
    const fresh = await otherRefs.create(
      ref,
      formatLandingLock({ instance: "fleet-two", host: "host-two", at: new Date().toISOString(), issue: 999, ttlSeconds: 600 }),
    );
    assert.ok(fresh.won);
    const busy = expectOutcome(await land(f, w), "busy");
    assert.match(busy.why, /fleet-two on host-two/);
    await assertNothingLanded(f, w, before);

    const old = new Date(Date.now() - 3_600_000).toISOString();
    const stale = await otherRefs.swap(
      ref,
      fresh.won ? fresh.sha : "",
      formatLandingLock({ instance: "fleet-two", host: "host-two", at: old, issue: 999, ttlSeconds: 600 }),
    );
    assert.ok(stale.won);
    await assertLanded(f, w, await land(f, w), "squash");
    assert.equal(await f.refs.read(ref), null, "the taken-over lock is released too");

    // A fresh lock of our own instance on our own host is a leftover of a crash: taken over.
    const w2 = await workerPr(f, "Add lambda", { "lambda.txt": "lambda\n" });
    const leftover = await otherRefs.create(
      ref,
      formatLandingLock({ instance: "fleet-one", host: "host-one", at: new Date().toISOString(), issue: 1, ttlSeconds: 600 }),
    );
    assert.ok(leftover.won);
    await assertLanded(f, w2, await land(f, w2), "squash");
    assert.equal(await f.refs.read(ref), null);
  });

  it("(l) two landings at once in one process are serialized: the second syncs instead of merging blindly", async () => {
    const a = await workerPr(f, "Add iota", { "iota.txt": "iota\n" });
    const b = await workerPr(f, "Add kappa", { "kappa.txt": "kappa\n" });
    const [ra, rb] = await Promise.all([land(f, a), land(f, b)]);
    assert.deepEqual([ra.outcome, rb.outcome], ["merged", "synced"]);
    await assertLanded(f, a, ra, "squash");
    const synced = expectOutcome(rb, "synced");
    await green(f, synced.head);
    await assertLanded(f, b, await land(f, b, undefined, undefined, synced.head), "squash");
  });

  it("(m) a single landing sweeps a dead train's branch and draft PR, only the fleet's own", async () => {
    // What hosts killed mid-train left: train branches named as the fleet names them, with draft PRs.
    const seed = await mainTip(f);
    await git(f.human, "fetch", "--quiet", "origin");
    const branchAt = async (branch: string): Promise<void> => {
      // A candidate commit of its own (a PR needs a commit the base lacks).
      const sha = (await git(f.human, "commit-tree", `${seed}^{tree}`, "-p", seed, "-m", `candidate on ${branch}`)).stdout.trim();
      await git(f.human, "push", "--quiet", "origin", `${sha}:refs/heads/${branch}`);
    };
    const draft = async (branch: string, token?: string): Promise<number> => {
      const r = await api(
        f.forge,
        "POST",
        repoPath(f.forge, "/pulls"),
        { title: `train ${branch}`, head: branch, base: BASE, draft: true },
        token ? { token } : {},
      );
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body.number as number;
    };
    const deadOurs = "afk/train/m0dead-a1b2c3-1";
    const deadBare = "afk/train/m0dead-a1b2c3-2"; // its draft was never opened
    const deadTheirs = "afk/train/m0dead-d4e5f6-1"; // a fleet-named branch whose PR a human opened
    const oddName = "afk/train/not-a-train"; // not named as the fleet names train branches
    for (const b of [deadOurs, deadBare, deadTheirs, oddName]) await branchAt(b);
    const ours = await draft(deadOurs);
    const theirs = await draft(deadTheirs, f.forge.users.human);

    const w = await workerPr(f, "Add mu", { "mu.txt": "mu\n" });
    const result = await land(f, w);
    await assertLanded(f, w, result, "squash");
    assert.deepEqual([...(result.swept ?? [])].sort(), [deadOurs, deadBare].sort(), "the landing swept the fleet's dead trains");
    for (const b of [deadOurs, deadBare]) assert.equal(await branchExists(f, b), false, `${b} is deleted`);
    for (const b of [deadTheirs, oddName]) assert.equal(await branchExists(f, b), true, `${b} is left alone`);
    assert.equal((await f.gh.getPull(ours)).state, "closed", "the fleet's dead draft PR is closed");
    assert.equal((await f.gh.getPull(theirs)).state, "open", "another login's PR is left alone");

    // The next landing finds only the human's: it leaves it alone again.
    const again = await workerPr(f, "Add nu", { "nu.txt": "nu\n" });
    const next = await land(f, again);
    await assertLanded(f, again, next, "squash");
    assert.equal(next.swept, undefined);
    assert.equal(await branchExists(f, deadTheirs), true);
  });

  it("every value the base ever took was seeded, pushed by a human, or a gated tree", async () => {
    const log = (await bare(f, "log", "-g", "--format=%H", `refs/heads/${BASE}`)).split("\n").filter((s) => s !== "");
    assert.ok(log.length >= 15, `the reflog holds the history (${log.length} entries)`);
    const bad: string[] = [];
    for (const sha of new Set(log)) {
      if (seedCommits.has(sha) || humanCommits.has(sha)) continue;
      if (gatedTrees.has(await treeOf(f, sha))) continue;
      bad.push(`${sha} ${await bare(f, "log", "-1", "--format=%an: %s", sha)}`);
    }
    assert.deepEqual(bad, [], "the base only ever moved to gated trees");
    assert.equal(await f.refs.read(landingLockRef(NS)), null, "no landing lock is left behind");
  });
});

describe("landPull where GitHub merges onto a moved base (no strict protection)", () => {
  it("reports verified: false when the base moves inside the merge call", async () => {
    const f = await startFleet();
    try {
      const w = await workerPr(f, "Racy", { "racy.txt": "racy\n" });
      const before = await mainTip(f);
      await control(f, "POST", "/_forge/once", { kind: "base_moves_before_merge" });
      const result = expectOutcome(await land(f, w), "merged");
      assert.equal(result.verified, false, "the landed tree is not the gated one");
      assert.match(result.verifyNote ?? "", /base moved inside the merge call/);
      assert.equal(result.baseBefore, before);
      assert.notEqual(await treeOf(f, result.mergeSha), await treeOf(f, w.head));

      // The push strategy closes the race: a moved base refuses the fast-forward.
      const w2 = await workerPr(f, "Racy push", { "racy-push.txt": "push\n" });
      const pushCfg = config((c) => (c.landing.strategy = "push"));
      await humanCommit(f, "late.txt", "late\n"); // the base moves after the gate
      const synced = expectOutcome(await land(f, w2, pushCfg), "synced");
      await green(f, synced.head);
      const pushed = expectOutcome(await land(f, w2, pushCfg, undefined, synced.head), "merged");
      assert.equal(pushed.verified, true);
      assert.equal(await mainTip(f), pushed.mergeSha);
      assert.equal(await treeOf(f, pushed.mergeSha), await treeOf(f, synced.head), "the base holds the gated tree");
      assert.deepEqual(f.forge.violations(), []);
    } finally {
      await f.forge.dispose();
    }
  });
});

/** Whether a process runs (a zombie waiting for a slow init to reap it does not). */
async function alive(pid: number): Promise<boolean> {
  for (let i = 0; i < 40; i += 1) {
    let state: string | null = null;
    try {
      const stat = await readFile(`/proc/${pid}/stat`, "utf8");
      state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT" && existsSync("/proc/self/stat")) return false;
      try {
        process.kill(pid, 0);
        state = "R";
      } catch {
        return false;
      }
    }
    if (state === "Z" || state === "X") return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

describe("runGate", () => {
  const env = gateEnv();
  const base = { env, timeoutSeconds: 30, excerptBytes: 4096 };

  it("passes on exit 0 with stdin closed, and keeps the output", async () => {
    const dir = await tempDir("afk-gate-");
    const run = await runGate({ ...base, cwd: dir, command: "cat; printf 'ok\\n'; printf 'warn\\n' >&2" });
    assert.equal(run.passed, true);
    assert.equal(run.exitCode, 0);
    assert.equal(run.timedOut, false);
    assert.equal(run.excerpt, "ok\nwarn\n");
  });

  it("keeps a bounded tail, cut at a character boundary, without escape sequences", async () => {
    const dir = await tempDir("afk-gate-");
    const run = await runGate({
      ...base,
      cwd: dir,
      excerptBytes: 101,
      command: "i=0; while [ $i -lt 500 ]; do printf 'é'; i=$((i+1)); done; printf '\\n\\033[31mEND\\033[0m\\n'; exit 2",
    });
    assert.equal(run.passed, false);
    assert.equal(run.exitCode, 2);
    assert.ok(run.excerpt.startsWith("…"));
    assert.ok(run.excerpt.endsWith("\nEND\n"), JSON.stringify(run.excerpt));
    assert.ok(!run.excerpt.includes("\uFFFD"), "no broken character");
    assert.ok(Buffer.byteLength(run.excerpt) <= 101 + Buffer.byteLength("…"));
  });

  it("kills the whole process group on timeout", async () => {
    const dir = await tempDir("afk-gate-");
    const run = await runGate({ ...base, cwd: dir, timeoutSeconds: 1, killGraceMs: 500, command: 'sleep 30 & echo "bg $!"; sleep 30' });
    assert.equal(run.timedOut, true);
    assert.equal(run.passed, false);
    assert.match(run.excerpt, /killed after 1s/);
    const pid = Number(/bg (\d+)/.exec(run.excerpt)?.[1]);
    assert.ok(pid > 0);
    assert.equal(await alive(pid), false, "the background process is gone");
  });

  it("hands the command only the environment it is given, and redacts tokens from the excerpt", async () => {
    const dir = await tempDir("afk-gate-");
    const token = `ghp_${"a".repeat(36)}`;
    const host = { PATH: process.env.PATH, HOME: process.env.HOME, GITHUB_TOKEN: token, NPM_TOKEN: "npm-secret-value" };
    const plain = await runGate({ ...base, env: gateEnv({ base: host }), cwd: dir, command: 'echo "gh=${GITHUB_TOKEN:-unset} npm=${NPM_TOKEN:-unset}"' });
    assert.equal(plain.excerpt, "gh=unset npm=unset\n");
    const named = await runGate({
      ...base,
      env: gateEnv({ base: host, passthrough: ["GITHUB_TOKEN", "NPM_*"], deny: ["NPM_TOKEN"] }),
      cwd: dir,
      secrets: [],
      command: 'echo "gh=${GITHUB_TOKEN:-unset} npm=${NPM_TOKEN:-unset}"',
    });
    assert.equal(named.excerpt, "gh=[redacted] npm=unset\n");
  });

  it("reports a command that cannot start as red, never throws", async () => {
    const run = await runGate({ ...base, cwd: "/nonexistent/afk", command: "true" });
    assert.equal(run.passed, false);
    assert.match(run.error ?? "", /not a directory/);
  });
});
