// The RefStore contract: one set of cases run against the fake (test/support/fake-refs.ts) and
// against GitRefStore pushing to the local forge over HTTP, so the fake cannot drift from git.
// What the fleet's claims, heartbeats and landing lock rest on: create-only, swap from the held
// sha, delete pinned to a sha (an absent ref deletes fine), listing by prefix with messages,
// exactly one winner of concurrent creates, and the same refusals of bad names.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { RefStore } from "../server/state/ports.js";
import { GitRefStore } from "../server/gh/gitrefs.js";
import { RefNameError } from "../server/gh/refstore.js";
import { UsageError } from "../server/gh/errors.js";
import { FakeRefStore } from "./support/fake-refs.js";
import { FakeRepo } from "./support/fake-git.js";
import { branchTip, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";

/** A repository seen through ref stores: each `open()` is another host's store on the same remote. */
interface RefsSubject {
  open(): Promise<RefStore>;
  /** The base branch's tip, as the repository itself holds it. */
  mainTip(): Promise<string>;
}

const SPENT = "0123456789abcdef0123456789abcdef01234567";

function refStoreContract(name: string, subject: () => RefsSubject): void {
  describe(`RefStore contract: ${name}`, () => {
    let n = 0;
    /** A namespace of its own per case, so the cases share one remote without meeting. */
    const ns = (): string => `refs/afk/c${(n += 1)}/`;

    test("create is create-only: the second creator loses and is told the holder", async () => {
      const [a, b] = [await subject().open(), await subject().open()];
      const ref = `${ns()}claim/42`;
      assert.equal(await a.read(ref), null);
      const first = await a.create(ref, "instance: A\nhost: alpha");
      assert.ok(first.won);
      assert.match(first.sha, /^[0-9a-f]{40}$/);
      assert.equal(await b.read(ref), first.sha, "another host's store reads it");
      assert.deepEqual(await b.create(ref, "instance: B"), { won: false, current: first.sha });
      assert.deepEqual(await a.create(ref, "instance: A again"), { won: false, current: first.sha }, "even its creator cannot create it twice");
    });

    test("swap moves a ref only from the sha it holds; a spent sha loses", async () => {
      const [a, b] = [await subject().open(), await subject().open()];
      const ref = `${ns()}claim/7`;
      const first = await a.create(ref, "instance: A");
      assert.ok(first.won);
      assert.deepEqual(await b.swap(ref, SPENT, "instance: B"), { won: false, current: first.sha }, "from a wrong sha");
      const swapped = await b.swap(ref, first.sha, "instance: B\nreclaimed: yes");
      assert.ok(swapped.won);
      assert.notEqual(swapped.sha, first.sha, "every write is a new commit: its sha is the fencing token");
      assert.deepEqual(await a.swap(ref, first.sha, "instance: A"), { won: false, current: swapped.sha }, "the old holder's token is spent");
      assert.deepEqual(await a.swap(`${ns()}absent`, first.sha, "x"), { won: false, current: null }, "a swap of an absent ref loses");
    });

    test("remove is pinned to the held sha; removing an absent ref wins", async () => {
      const [a, b] = [await subject().open(), await subject().open()];
      const ref = `${ns()}lock`;
      const held = await a.create(ref, "lock");
      assert.ok(held.won);
      assert.deepEqual(await b.remove(ref, SPENT), { won: false, current: held.sha });
      assert.equal(await a.read(ref), held.sha, "a lost remove leaves the ref");
      assert.deepEqual(await b.remove(ref, held.sha), { won: true, sha: held.sha });
      assert.equal(await a.read(ref), null);
      assert.deepEqual(await a.remove(ref, held.sha), { won: true, sha: held.sha }, "already gone: what the caller wanted");
      const again = await a.create(ref, "lock again");
      assert.ok(again.won, "a removed ref can be created again");
    });

    test("list gives every ref under a prefix, by name, with its message, and nothing outside it", async () => {
      const [a, b] = [await subject().open(), await subject().open()];
      const root = ns();
      assert.deepEqual(await a.list(root), [], "an empty namespace lists as empty");
      const two = await a.create(`${root}claim/2`, "instance: A\nhost: alpha\nat: 2026-01-01T00:00:00.000Z");
      const one = await b.create(`${root}claim/1`, "instance: B");
      const beat = await b.create(`${root}beat/B`, "beat\n");
      assert.ok(two.won && one.won && beat.won);
      assert.deepEqual(await a.list(`${root}claim/`), [
        { ref: `${root}claim/1`, sha: one.sha, message: "instance: B" },
        { ref: `${root}claim/2`, sha: two.sha, message: "instance: A\nhost: alpha\nat: 2026-01-01T00:00:00.000Z" },
      ]);
      assert.deepEqual(
        (await a.list(root)).map((e) => [e.ref, e.message]),
        [
          [`${root}beat/B`, "beat"],
          [`${root}claim/1`, "instance: B"],
          [`${root}claim/2`, "instance: A\nhost: alpha\nat: 2026-01-01T00:00:00.000Z"],
        ],
        "one final newline is not part of the message",
      );
      assert.ok(await b.remove(`${root}claim/1`, one.sha).then((o) => o.won));
      const moved = await b.swap(`${root}claim/2`, two.sha, "instance: B");
      assert.ok(moved.won);
      assert.deepEqual(
        await a.list(`${root}claim/`),
        [{ ref: `${root}claim/2`, sha: moved.sha, message: "instance: B" }],
        "a listing sees another store's swap and remove",
      );
    });

    test("of concurrent creators exactly one wins, and every loser is told the winner", async () => {
      const stores = await Promise.all([0, 1, 2, 3].map(() => subject().open()));
      const ref = `${ns()}claim/99`;
      const outcomes = await Promise.all(stores.map((s, i) => s.create(ref, `instance: ${i}`)));
      const winners = outcomes.filter((o) => o.won);
      assert.equal(winners.length, 1, JSON.stringify(outcomes));
      const sha = winners[0]?.won ? winners[0].sha : "";
      for (const o of outcomes) if (!o.won) assert.equal(o.current, sha);
      assert.equal(await stores[0]?.read(ref), sha);
    });

    test("branches are refs of the same repository: read gives the base's tip", async () => {
      const store = await subject().open();
      assert.equal(await store.read("refs/heads/main"), await subject().mainTip());
      assert.equal(await store.read("refs/heads/no-such-branch"), null);
    });

    test("bad names, prefixes and shas are refused before anything is written", async () => {
      const store = await subject().open();
      await assert.rejects(store.create("refs/afk/../x", "m"), RefNameError);
      await assert.rejects(store.read("refs/afk"), RefNameError);
      await assert.rejects(store.swap(`${ns()}x`, "HEAD", "m"), UsageError);
      await assert.rejects(store.remove(`${ns()}x`, "abc"), UsageError);
      await assert.rejects(store.list("refs/afk"), UsageError);
      await assert.rejects(store.list("refs/"), UsageError);
    });
  });
}

// The fake: every store on one in-memory repository.
{
  const repo = new FakeRepo();
  refStoreContract("the fake", () => ({
    open: async () => new FakeRefStore(repo),
    mainTip: async () => repo.read("refs/heads/main") ?? "",
  }));
}

// The real thing: GitRefStore, each with its own control repository, pushing to the local forge over HTTP.
{
  let forge: TestForge | undefined;
  before(async () => {
    forge = await startTestForge();
  });
  after(async () => {
    await forge?.dispose();
  });
  const live = (): TestForge => {
    if (!forge) throw new Error("the forge is not started");
    return forge;
  };
  refStoreContract("GitRefStore on the local forge over HTTP", () => ({
    open: async () => new GitRefStore({ controlDir: await tempDir("afk-contract-refs-"), remoteUrl: live().gitUrl, token: live().token }),
    mainTip: () => branchTip(live()),
  }));
}
