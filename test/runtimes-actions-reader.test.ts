// The actions runtime's run-ref reader (server/runtimes/actions/reach.ts) against the local forge
// over HTTP: a listing is one fetch of the run refs that moved and one read of the newest beat of
// each run in flight; it brings what runners pushed, drops a run ref deleted on origin, lists the
// watched branches, and a handle's beat read after it asks git nothing more.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { git as gitRun, gitRaw } from "../server/gh/git.js";
import { readBeats, writeBeat, type BeatFacts } from "../server/runtimes/actions/beat.js";
import { copiedRunRef, RunRefReader, type ActionsReach, type RemoteGit } from "../server/runtimes/actions/reach.js";
import { authedGitUrl, cloneRepo, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";

const NS = "refs/afk";

function facts(issue: number, seq: number): BeatFacts {
  const at = new Date().toISOString();
  return { v: 1, run_id: 100 + issue, issue, attempt: 1, seq, at, activity_at: at, busy: true, why: "", pushed: null, exit: null, lines: 1, dropped: 0 };
}

describe("the actions runtime's run-ref reader", () => {
  let forge: TestForge;
  let runner: string;
  let host: RemoteGit;
  /** Every git command the host's side ran, by its first argument. */
  const calls: string[] = [];

  before(async () => {
    forge = await startTestForge({ repo: "afk/reader" });
    runner = await cloneRepo(forge);
    const hostDir = join(await tempDir("afk-reader-"), "host.git");
    await gitRun(["clone", "-q", "--bare", authedGitUrl(forge), hostDir], { cwd: join(hostDir, "..") });
    const counted = <T>(args: string[], run: () => Promise<T>): Promise<T> => (calls.push(args[0]!), run());
    host = {
      dir: hostDir,
      run: (args, cwd, input) => counted(args, () => gitRun(args, { cwd: cwd ?? hostDir, ...(input !== undefined ? { input } : {}) })),
      runRaw: (args, cwd) => counted(args, () => gitRaw(args, { cwd: cwd ?? hostDir })),
      network: (args) => counted(args, () => gitRun(args, { cwd: hostDir })),
      fetchRaw: (args) => counted(args, () => gitRaw(args, { cwd: hostDir })),
    };
  });
  after(async () => {
    await forge.dispose();
  });

  /** A runner's beat on issue `n`'s run ref, pushed to the forge; returns its sha. */
  const pushBeat = async (n: number, seq: number, parent: string | null): Promise<string> => {
    const sha = await writeBeat(runner, { facts: facts(n, seq), output: [{ s: "o", l: `beat ${seq} of #${n}`, t: Date.now() }], verdict: null, parent });
    await gitRun(["push", "-q", "--force", "origin", `${sha}:${NS}/run/${n}`], { cwd: runner });
    return sha;
  };

  it("lists the watched runs' tips and branches, reads their newest beats in the same listing, and follows pushes and deletions", async () => {
    const reach = { repo: forge.repo, api: null as never, git: host, namespace: NS, base: "main" } satisfies ActionsReach;
    let clock = 0;
    const reader = new RunRefReader(reach, 30_000, () => clock);
    const first = new Map<number, string>();
    for (const n of [1, 2, 3]) first.set(n, await pushBeat(n, 1, null));
    await gitRun(["push", "-q", "origin", "HEAD:refs/heads/afk/1-one"], { cwd: runner });
    const branchTip = (await gitRun(["rev-parse", "HEAD"], { cwd: runner })).stdout.trim();
    reader.watch(1, "afk/1-one");
    reader.watch(2, "afk/2-gone");

    calls.length = 0;
    const one = await reader.current();
    assert.deepEqual([...one.tips.entries()].sort(), [
      [1, first.get(1)],
      [2, first.get(2)],
    ]);
    assert.deepEqual(Object.fromEntries(one.branches), { "afk/1-one": branchTip, "afk/2-gone": null });
    assert.deepEqual(calls, ["ls-remote", "fetch"], "one listing: the branches, then one fetch (the beats' read is one cat-file besides)");
    // Issue 3 is not watched, but the fetch brought its ref too: a run adopted later finds it here.
    assert.equal((await gitRun(["rev-parse", copiedRunRef(3)], { cwd: host.dir })).stdout.trim(), first.get(3));

    // Within the listing's age the same listing answers, with no git at all.
    calls.length = 0;
    clock += 10_000;
    assert.equal(await reader.current(), one);
    assert.deepEqual(calls, []);

    // Runner 1 beats again, run 2's ref is deleted on origin: the next listing follows both.
    const second = await pushBeat(1, 2, first.get(1)!);
    await gitRun(["push", "-q", "origin", `:${NS}/run/2`], { cwd: runner });
    clock += 30_000;
    const two = await reader.current();
    assert.deepEqual([...two.tips.entries()], [[1, second]]);
    assert.equal((await gitRaw(["rev-parse", "--verify", "--quiet", copiedRunRef(2)], { cwd: host.dir })).exitCode, 1, "the deleted run ref's copy is pruned");

    // A handle's read of the new beat: the listing brought it, so neither fetch nor beat read asks git.
    calls.length = 0;
    assert.equal(await reader.fetch(1, second), true);
    const known = reader.known(1, second);
    assert.ok(known, "the listing read the newest beat");
    assert.equal(known.parent, first.get(1));
    const beats = await readBeats(host.dir, second, first.get(1)!, known);
    assert.deepEqual(
      beats.map((b) => [b.facts.seq, b.output.map((l) => l.l)]),
      [[2, ["beat 2 of #1"]]],
    );
    assert.deepEqual(calls, []);
    assert.equal(reader.known(1, first.get(1)!), undefined, "an older tip is not the one read");

    // A tip no listing read (pushed since): fetched alone, and read.
    const third = await pushBeat(1, 3, second);
    assert.equal(await reader.fetch(1, third), true);
    assert.equal(reader.known(1, third)?.parent, second);

    // Unwatched: no longer read, nor its branch listed.
    reader.unwatch(1, "afk/1-one");
    reader.unwatch(2, "afk/2-gone");
    clock += 30_000;
    calls.length = 0;
    const three = await reader.current();
    assert.equal(three.tips.size, 0);
    assert.equal(three.branches.size, 0);
    assert.deepEqual(calls, ["fetch"]);
  });

  it("a listing that cannot fetch fails with git's reason, and the next one recovers", async () => {
    const broken: RemoteGit = {
      ...host,
      fetchRaw: (args) =>
        gitRaw(
          args.map((a) => (a === "origin" ? "http://127.0.0.1:9/nothing.git" : a)),
          { cwd: host.dir },
        ),
    };
    let clock = 0;
    let useBroken = true;
    const reach: ActionsReach = {
      repo: forge.repo,
      api: null as never,
      git: { ...host, fetchRaw: (args) => (useBroken ? broken.fetchRaw(args) : host.fetchRaw(args)) },
      namespace: NS,
      base: "main",
    };
    const reader = new RunRefReader(reach, 30_000, () => clock);
    reader.watch(1, "afk/1-one");
    await assert.rejects(reader.current(), /cannot fetch the run refs: .*(127\.0\.0\.1|connect|Failed)/i);
    useBroken = false;
    clock += 1;
    const listing = await reader.current();
    assert.ok(listing.tips.get(1), "the next listing reads the run ref");
  });
});
