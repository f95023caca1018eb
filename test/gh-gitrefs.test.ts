// GitRefStore against a real bare repository in a temporary directory (a path remote): the
// compare-and-swap semantics of claims, message round trips, ref-name guards, and the race
// that invariant 1 (docs/architecture.md) rests on — of N concurrent claimers exactly one wins, every time.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GitRefStore } from "../server/gh/gitrefs.js";
import { RefNameError } from "../server/gh/refstore.js";
import { UsageError } from "../server/gh/errors.js";
import { gitEnv } from "../server/gh/git.js";

async function tempRemote(t: { after(fn: () => Promise<void>): void }): Promise<{ root: string; remote: string }> {
  const root = await mkdtemp(join(tmpdir(), "afk-gitrefs-"));
  t.after(() => rm(root, { recursive: true, force: true }));
  const remote = join(root, "remote.git");
  execFileSync("git", ["init", "--bare", "--quiet", remote]);
  return { root, remote };
}

function remoteRefs(remote: string): Map<string, string> {
  const out = execFileSync("git", ["for-each-ref", "--format=%(refname) %(objectname)"], { cwd: remote, encoding: "utf8" });
  return new Map(
    out
      .split("\n")
      .filter(Boolean)
      .map((line) => line.split(" ") as [string, string]),
  );
}

test("create, swap and remove are compare-and-swap operations", async (t) => {
  const { root, remote } = await tempRemote(t);
  const a = new GitRefStore({ controlDir: join(root, "ctl-a"), remoteUrl: remote });
  const b = new GitRefStore({ controlDir: join(root, "ctl-b"), remoteUrl: remote });
  const ref = "refs/afk/claim/42";

  assert.deepEqual(await a.list("refs/afk/"), [], "an empty namespace lists as empty");
  assert.equal(await a.read(ref), null);

  const first = await a.create(ref, "instance: A\nhost: alpha");
  assert.ok(first.won, "creating an absent ref wins");
  assert.equal(remoteRefs(remote).get(ref), first.sha);

  const second = await b.create(ref, "instance: B\nhost: beta");
  assert.deepEqual(second, { won: false, current: first.sha }, "creating an existing ref loses and reports the holder");

  const staleSwap = await b.swap(ref, "0123456789abcdef0123456789abcdef01234567", "instance: B");
  assert.deepEqual(staleSwap, { won: false, current: first.sha }, "a swap from the wrong sha loses");

  const swapped = await b.swap(ref, first.sha, "instance: B\nhost: beta\nreclaimed: yes");
  assert.ok(swapped.won, "a swap from the current sha wins");
  assert.notEqual(swapped.sha, first.sha);
  assert.equal(await a.read(ref), swapped.sha, "read bypasses every cache");

  const lateSwap = await a.swap(ref, first.sha, "instance: A");
  assert.deepEqual(lateSwap, { won: false, current: swapped.sha }, "the old holder's swap loses: its sha is a spent fencing token");

  const staleRemove = await a.remove(ref, first.sha);
  assert.deepEqual(staleRemove, { won: false, current: swapped.sha }, "a remove from the wrong sha loses and leaves the ref");
  assert.equal(remoteRefs(remote).get(ref), swapped.sha);

  const removed = await b.remove(ref, swapped.sha);
  assert.ok(removed.won, "a remove from the current sha wins");
  assert.equal(remoteRefs(remote).has(ref), false);

  const again = await a.remove(ref, swapped.sha);
  assert.ok(again.won, "removing an absent ref wins");
  assert.deepEqual(await b.list("refs/afk/"), [], "list prunes refs deleted remotely");
});

test("messages round-trip through list, and list covers only the prefix", async (t) => {
  const { root, remote } = await tempRemote(t);
  const store = new GitRefStore({ controlDir: join(root, "ctl"), remoteUrl: remote });
  const messages: Record<string, string> = {
    "refs/afk/claim/1": "instance: V1StGXR8_Z5jdHi6B-myT\nhost: box-1\nat: 2026-11-30T09:00:00.000Z",
    "refs/afk/claim/2": '--upload-pack=touch /tmp/pwned\n\nbody with "quotes", $HOME, `ticks` and ünïcödé ✓',
    "refs/afk/heartbeat/V1StGXR8_Z5jdHi6B-myT": "at: 2026-11-30T09:00:05.000Z",
  };
  for (const [ref, message] of Object.entries(messages)) {
    const outcome = await store.create(ref, message);
    assert.ok(outcome.won, `create ${ref}`);
  }
  execFileSync("git", ["update-ref", "refs/heads/main", (await store.read("refs/afk/claim/1"))!], { cwd: remote });

  const all = await store.list("refs/afk/");
  assert.deepEqual(
    all.map((entry) => [entry.ref, entry.message]),
    Object.entries(messages).sort(([a], [b]) => a.localeCompare(b)),
  );
  for (const entry of all) assert.match(entry.sha, /^[0-9a-f]{40}$/);

  const claims = await store.list("refs/afk/claim/");
  assert.deepEqual(
    claims.map((entry) => entry.ref),
    ["refs/afk/claim/1", "refs/afk/claim/2"],
  );
  const commit = execFileSync("git", ["cat-file", "-p", claims[0]!.sha], { cwd: remote, encoding: "utf8" });
  assert.match(commit, /^tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904$/m, "claims are empty-tree commits");
  assert.doesNotMatch(commit, /^parent /m, "claims carry no history");
});

test("an idle namespace is listed with one ls-remote: no fetch while nothing moves, a fetch as soon as something does", async (t) => {
  const { root, remote } = await tempRemote(t);
  // A git on PATH that logs where it runs and what it is asked, then runs the real one.
  const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  const shims = join(root, "bin");
  const log = join(root, "git.log");
  await mkdir(shims);
  await writeFile(join(shims, "git"), `#!/bin/sh\nprintf '%s %s\\n' "$PWD" "$*" >>${JSON.stringify(log)}\nexec ${JSON.stringify(real)} "$@"\n`, {
    mode: 0o755,
  });
  const path = process.env.PATH;
  process.env.PATH = `${shims}:${path ?? ""}`;
  t.after(() => {
    process.env.PATH = path;
  });
  const reader = new GitRefStore({ controlDir: join(root, "ctl-reader"), remoteUrl: remote });
  const writer = new GitRefStore({ controlDir: join(root, "ctl-writer"), remoteUrl: remote });
  const created = await writer.create("refs/afk/claim/1", "instance: W");
  assert.ok(created.won);
  let seen = 0;
  /** The reader's listing git runs since the last call: ls-remote, fetch, for-each-ref. */
  const runs = async (): Promise<string[]> => {
    const lines = (await readFile(log, "utf8")).split("\n").filter((l) => l.startsWith(join(root, "ctl-reader")));
    const fresh = lines.slice(seen);
    seen = lines.length;
    return fresh.map((l) => /\b(ls-remote|fetch|for-each-ref)\b/.exec(l)?.[1]).filter((v): v is string => v !== undefined);
  };
  const listing = async () => (await reader.list("refs/afk/")).map((e) => `${e.ref} ${e.sha} ${e.message}`);

  const first = await listing();
  assert.deepEqual(first, [`refs/afk/claim/1 ${created.sha} instance: W`]);
  assert.deepEqual(await runs(), ["fetch", "for-each-ref"], "the first listing fetches");
  assert.deepEqual(await listing(), first);
  assert.deepEqual(await runs(), ["fetch", "for-each-ref"], "the second fetches too, and finds nothing new: the namespace is quiet");
  for (let i = 0; i < 3; i += 1) {
    assert.deepEqual(await listing(), first);
    assert.deepEqual(await runs(), ["ls-remote"], "while it stays quiet, one ls-remote and the last listing");
  }
  const swapped = await writer.swap("refs/afk/claim/1", created.sha, "instance: W2");
  assert.ok(swapped.won);
  assert.deepEqual(await listing(), [`refs/afk/claim/1 ${(swapped as { sha: string }).sha} instance: W2`], "a moved ref is seen at once");
  assert.deepEqual(await runs(), ["ls-remote", "fetch", "for-each-ref"]);
  const heartbeat = await writer.create("refs/afk/heartbeat/W", "alive");
  assert.ok(heartbeat.won);
  assert.equal((await listing()).length, 2, "a new ref too");
  assert.deepEqual(await runs(), ["fetch", "for-each-ref"], "after a change the next listing fetches at once (a busy namespace pays no ls-remote)");
  assert.equal((await listing()).length, 2);
  assert.deepEqual(await runs(), ["fetch", "for-each-ref"], "and finds it quiet again");
  assert.equal((await listing()).length, 2);
  assert.deepEqual(await runs(), ["ls-remote"]);
  assert.ok((await writer.remove("refs/afk/heartbeat/W", (heartbeat as { sha: string }).sha)).won);
  assert.deepEqual(await listing(), [`refs/afk/claim/1 ${(swapped as { sha: string }).sha} instance: W2`], "a deleted ref is gone at once");
  assert.deepEqual(await runs(), ["ls-remote", "fetch", "for-each-ref"]);
  assert.equal((await listing()).length, 1);
  assert.deepEqual(await runs(), ["fetch", "for-each-ref"]);
  // The reader's own writes (its heartbeat beats between idle ticks) are not changes to fetch:
  // the listing takes them in as git would read them back.
  const own = await reader.create("refs/afk/heartbeat/R", "instance: R\nat: now\n");
  assert.ok(own.won);
  await runs();
  const withOwn = await listing();
  assert.deepEqual(await runs(), ["ls-remote"], "its own write is no change");
  const truth = (await writer.list("refs/afk/")).map((e) => `${e.ref} ${e.sha} ${e.message}`);
  assert.deepEqual(withOwn, truth, "and the listing is what a fetch reads");
});

test("ref names and prefixes that git could misread are refused before git runs", async (t) => {
  const { root, remote } = await tempRemote(t);
  const store = new GitRefStore({ controlDir: join(root, "ctl"), remoteUrl: remote });
  for (const bad of [
    "refs/afk/../heads/main",
    "-refs/afk/claim/1",
    "refs/afk/-claim/1",
    "--force",
    "refs/x",
    "refs/afk/claim/1 ",
    "refs/afk/claim/1:refs/heads/main",
    "refs/afk/claim/.x",
    "heads/main",
  ]) {
    await assert.rejects(store.create(bad, "m"), RefNameError, `create ${JSON.stringify(bad)}`);
    await assert.rejects(store.read(bad), RefNameError, `read ${JSON.stringify(bad)}`);
  }
  await assert.rejects(store.swap("refs/afk/claim/1", "--force", "m"), UsageError, "an expected sha must be a sha");
  await assert.rejects(store.remove("refs/afk/claim/1", "HEAD"), UsageError);
  for (const bad of ["refs/afk", "--upload-pack=x/", "refs/", "refs/../", "refs/afk/*/"]) {
    await assert.rejects(store.list(bad), (error: unknown) => error instanceof UsageError || error instanceof RefNameError, `list ${JSON.stringify(bad)}`);
  }
  assert.throws(() => new GitRefStore({ controlDir: join(root, "c2"), remoteUrl: "https://x-access-token:ghp_secret@github.com/o/n.git" }), UsageError);
  assert.throws(() => new GitRefStore({ controlDir: join(root, "c3"), remoteUrl: "--upload-pack=evil" }), UsageError);
  assert.equal(remoteRefs(remote).size, 0, "nothing reached the remote");
});

test("the token reaches git only through GIT_CONFIG_* as a scoped extraHeader", () => {
  const token = "ghp_exampleTokenValue1234";
  const env = gitEnv({ token, url: "https://github.com/afk/demo.git" });
  assert.equal(env.GIT_TERMINAL_PROMPT, "0");
  assert.equal(env.LC_ALL, "C");
  assert.equal(env.GIT_CONFIG_KEY_0, "http.https://github.com/.extraHeader");
  assert.equal(env.GIT_CONFIG_VALUE_0, `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`);
  const plain = Object.entries(env).filter(([, value]) => value.includes(token));
  assert.deepEqual(plain, [], "no variable carries the token in the clear");
});

// 12 rounds by default (96 racing creates and 96 racing swaps; each round costs ~24 git pushes);
// AFK_RACE_ROUNDS=500 for a soak.
test("race: of 8 concurrent claimers exactly one wins, every round", async (t) => {
  const { root, remote } = await tempRemote(t);
  const rounds = Number(process.env.AFK_RACE_ROUNDS ?? 12);
  const claimers = Array.from({ length: 8 }, (_, i) => new GitRefStore({ controlDir: join(root, `ctl-${i}`), remoteUrl: remote }));
  const result = await raceRounds(claimers, rounds, "refs/afk/claim/7");
  t.diagnostic(
    `path remote: ${result.rounds} rounds x ${claimers.length} claimers: create winners per round ${JSON.stringify(result.createWinnerCounts)}, swap winners per round ${JSON.stringify(result.swapWinnerCounts)}, wins by claimer ${JSON.stringify(result.winsByClaimer)}, ${result.ms} ms`,
  );
  assert.deepEqual(result.createWinnerCounts, { 1: rounds }, "exactly one create wins every round");
  assert.deepEqual(result.swapWinnerCounts, { 1: rounds }, "exactly one swap (reclaim) wins every round");
});

interface RaceResult {
  rounds: number;
  createWinnerCounts: Record<number, number>;
  swapWinnerCounts: Record<number, number>;
  winsByClaimer: number[];
  ms: number;
}

/**
 * Each round: all claimers create the same ref at once (one must win, the losers must see the
 * winner's sha), then all reclaim it from the winner's sha at once (one must win), then the
 * reclaimer releases it. (The forge test runs the same rounds over HTTP.)
 */
async function raceRounds(claimers: GitRefStore[], rounds: number, ref: string): Promise<RaceResult> {
  const started = Date.now();
  const createWinnerCounts: Record<number, number> = {};
  const swapWinnerCounts: Record<number, number> = {};
  const winsByClaimer = claimers.map(() => 0);
  await Promise.all(claimers.map((claimer) => claimer.list("refs/afk/"))); // initialise control repos outside the timing-sensitive part
  for (let round = 0; round < rounds; round += 1) {
    const created = await Promise.all(claimers.map((claimer, i) => claimer.create(ref, `instance: c${i}\nround: ${round}`)));
    const createWinners = created.flatMap((outcome, i) => (outcome.won ? [{ i, sha: outcome.sha }] : []));
    createWinnerCounts[createWinners.length] = (createWinnerCounts[createWinners.length] ?? 0) + 1;
    const holder = createWinners[0];
    assert.ok(holder, `round ${round}: nobody won the create`);
    for (const outcome of created) {
      if (!outcome.won) assert.equal(outcome.current, holder.sha, `round ${round}: a loser must see the winner's sha`);
    }
    winsByClaimer[holder.i]! += 1;

    const swapped = await Promise.all(claimers.map((claimer, i) => claimer.swap(ref, holder.sha, `instance: c${i}\nround: ${round}\nreclaim`)));
    const swapWinners = swapped.flatMap((outcome) => (outcome.won ? [outcome.sha] : []));
    swapWinnerCounts[swapWinners.length] = (swapWinnerCounts[swapWinners.length] ?? 0) + 1;
    const newHolder = swapWinners[0];
    assert.ok(newHolder, `round ${round}: nobody won the swap`);
    assert.equal(await claimers[0]!.read(ref), newHolder, `round ${round}: the remote holds the swap winner's sha`);

    const released = await claimers[round % claimers.length]!.remove(ref, newHolder);
    assert.ok(released.won, `round ${round}: release`);
  }
  return { rounds, createWinnerCounts, swapWinnerCounts, winsByClaimer, ms: Date.now() - started };
}
