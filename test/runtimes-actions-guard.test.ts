// The actions runtime's branch guard (server/runtimes/actions/guard.ts) on real git, beat by beat:
// a tip origin holds that no beat reported is judged only once a later beat shows it is not the
// run's own push on its way; the run's own pushes are never put back; a foreign one is, from the
// host, at the run's newest reported tip, and said once; at the run's end every push is reported.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { git as gitRun, gitRaw } from "../server/gh/git.js";
import type { BeatFacts } from "../server/runtimes/actions/beat.js";
import { BranchGuard } from "../server/runtimes/actions/guard.js";
import type { RemoteGit } from "../server/runtimes/actions/reach.js";
import { tempDir } from "./support/forge-fixtures.js";

const BRANCH = "afk/7-guarded";

/** An origin, the host's repository (the guard's git) and a runner's clone, all local. */
async function world(): Promise<{ host: RemoteGit; runner: string; origin: string; commit: (cwd: string, name: string) => Promise<string> }> {
  const dir = await tempDir("afk-guard-");
  const origin = join(dir, "origin.git");
  const run = (args: string[], cwd: string) => gitRun(args, { cwd });
  await gitRun(["init", "-q", "--bare", "-b", "main", origin], { cwd: dir });
  const env = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" };
  const commit = async (cwd: string, name: string): Promise<string> => {
    await gitRun(["commit", "-q", "--allow-empty", "-m", name], { cwd, env });
    return (await run(["rev-parse", "HEAD"], cwd)).stdout.trim();
  };
  const runner = join(dir, "runner");
  await gitRun(["clone", "-q", origin, runner], { cwd: dir });
  await run(["checkout", "-q", "-b", BRANCH], runner);
  await commit(runner, "start");
  await run(["push", "-q", "origin", `HEAD:refs/heads/${BRANCH}`], runner);
  const hostDir = join(dir, "host.git");
  await gitRun(["clone", "-q", "--bare", origin, hostDir], { cwd: dir });
  const host: RemoteGit = {
    dir: hostDir,
    run: (args, cwd) => gitRun(args, { cwd: cwd ?? hostDir }),
    runRaw: (args, cwd) => gitRaw(args, { cwd: cwd ?? hostDir }),
    network: (args) => gitRun(args, { cwd: hostDir }),
    fetchRaw: (args) => gitRaw(args, { cwd: hostDir }),
  };
  return { host, runner, origin, commit };
}

const tipOf = async (origin: string): Promise<string> => (await gitRun(["rev-parse", `refs/heads/${BRANCH}`], { cwd: origin })).stdout.trim();

function beat(seq: number, pushed: string): BeatFacts {
  const at = new Date().toISOString();
  return { v: 1, run_id: 1, issue: 7, attempt: 1, seq, at, activity_at: at, busy: "unknown", why: "", pushed, exit: null, lines: 0, dropped: 0 };
}

describe("the actions runtime's branch guard", () => {
  it("a push of the run's own whose beat is on its way is kept; another's is judged at the next beat, put back at the run's tip, and said once", async () => {
    const { host, runner, origin, commit } = await world();
    const start = await tipOf(origin);
    const lines: string[] = [];
    const guard = new BranchGuard({ git: host, issue: 7, branch: BRANCH, start, since: Date.now(), say: (l) => lines.push(l) });
    guard.beat(beat(1, start));

    // The runner pushes; the listing sees the tip before the beat that reports it.
    const own = await commit(runner, "own work");
    await gitRun(["push", "-q", "origin", `HEAD:refs/heads/${BRANCH}`], { cwd: runner });
    await guard.check(await tipOf(origin), false);
    assert.equal(await guard.verdict(own), "pending", "not judged before a later beat");
    guard.beat(beat(2, own));
    await guard.check(await tipOf(origin), false);
    assert.equal(await guard.verdict(own), "own");
    assert.equal(await tipOf(origin), own);

    // Another run's token pushes on top of it.
    const other = join(runner, "..", "other");
    await gitRun(["clone", "-q", "-b", BRANCH, origin, other], { cwd: join(runner, "..") });
    const foreign = await commit(other, "hostile");
    await gitRun(["push", "-q", "origin", `HEAD:refs/heads/${BRANCH}`], { cwd: other });
    await guard.check(await tipOf(origin), false);
    assert.equal(await tipOf(origin), foreign, "a tip seen with beat 2 is not judged at beat 2");
    await guard.check(await tipOf(origin), false);
    assert.equal(await tipOf(origin), foreign, "nor by a second look at the same beat");
    guard.beat(beat(3, own));
    await guard.check(await tipOf(origin), false);
    assert.equal(await tipOf(origin), own, "beat 3 does not report it: put back at the run's tip");
    assert.equal(await guard.verdict(foreign), "foreign");
    assert.equal(await guard.settled(foreign, 1_000), "foreign");
    assert.equal(guard.notices.length, 1);
    assert.match(guard.notices[0]!, new RegExp(`moved ${BRANCH} to ${foreign.slice(0, 12)} .*put the branch back at ${own.slice(0, 12)}`));
    assert.equal(guard.trusted(), own);

    // A push the run's last beat did not report, after the run ended: foreign at once.
    const late = await commit(other, "late");
    await gitRun(["push", "-q", "-f", "origin", `HEAD:refs/heads/${BRANCH}`], { cwd: other });
    await guard.check(await tipOf(origin), true);
    guard.end(true);
    assert.equal(await tipOf(origin), own);
    assert.equal(await guard.verdict(late), "foreign");
    assert.equal(guard.notices.length, 2);
    assert.ok(
      lines.every((l) => l.startsWith("afk: ")),
      lines.join("\n"),
    );
  });

  it("a push nobody decides within the wait is unknown, not blamed; an ended run without its last beat judges nothing", async () => {
    const { host, runner, origin, commit } = await world();
    const start = await tipOf(origin);
    const guard = new BranchGuard({ git: host, issue: 7, branch: BRANCH, start, since: Date.now(), say: () => undefined });
    const pushed = await commit(runner, "unreported");
    await gitRun(["push", "-q", "origin", `HEAD:refs/heads/${BRANCH}`], { cwd: runner });
    await guard.check(await tipOf(origin), false);
    assert.equal(await guard.settled(pushed, 50), "unknown");
    await guard.check(await tipOf(origin), false);
    guard.end(false);
    assert.equal(await guard.verdict(pushed), "unknown");
    assert.equal(await tipOf(origin), pushed, "left as it is");
    assert.deepEqual(guard.notices, []);
  });
});
