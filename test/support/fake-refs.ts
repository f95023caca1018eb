// An in-memory RefStore (server/state/ports.ts) over a FakeRepo: the same compare-and-swap as
// GitRefStore's pushes with a lease, the same refusals of bad names, prefixes and shas, and one
// repository for every store made on it (two hosts' stores see each other's claims, as two
// control repositories pushing to one remote do). Each write is an empty-tree commit carrying
// the message, read back without its final newline, as for-each-ref reads it.
//
// Not modelled: the network (no latency, no transient failure), a remote that refuses the
// namespace (GitRefStore throws a GitError), the listing cache (every list is fresh here).
import type { CasOutcome, RefEntry, RefStore } from "../../server/state/ports.js";
import { assertSafeRefName } from "../../server/gh/refstore.js";
import { assertSafePrefix, assertSha } from "../../server/gh/gitrefs.js";
import { FakeRepo } from "./fake-git.js";

export class FakeRefStore implements RefStore {
  /** Calls made, by operation: a test counts round trips as it would count git calls. */
  readonly calls = { list: 0, create: 0, swap: 0, remove: 0, read: 0 };

  constructor(readonly repo: FakeRepo = new FakeRepo()) {}

  async list(prefix: string): Promise<RefEntry[]> {
    assertSafePrefix(prefix);
    this.calls.list += 1;
    await Promise.resolve();
    return this.repo.list(prefix).map(({ ref, sha }) => ({ ref, sha, message: this.repo.get(sha)?.message ?? "" }));
  }

  async create(ref: string, message: string): Promise<CasOutcome> {
    assertSafeRefName(ref);
    this.calls.create += 1;
    return this.write(ref, null, message);
  }

  async swap(ref: string, expectedSha: string, message: string): Promise<CasOutcome> {
    assertSafeRefName(ref);
    assertSha(expectedSha);
    this.calls.swap += 1;
    return this.write(ref, expectedSha, message);
  }

  async remove(ref: string, expectedSha: string): Promise<CasOutcome> {
    assertSafeRefName(ref);
    assertSha(expectedSha);
    this.calls.remove += 1;
    await Promise.resolve();
    const current = this.repo.read(ref);
    // Deleting a ref that is already gone is what the caller wanted.
    if (current === null || this.repo.cas(ref, expectedSha, null)) return { won: true, sha: expectedSha };
    return { won: false, current };
  }

  async read(ref: string): Promise<string | null> {
    assertSafeRefName(ref);
    this.calls.read += 1;
    await Promise.resolve();
    return this.repo.read(ref);
  }

  private async write(ref: string, expected: string | null, message: string): Promise<CasOutcome> {
    await Promise.resolve();
    const sha = this.repo.commit([], new Map(), message.replace(/\n$/, ""));
    if (this.repo.cas(ref, expected, sha)) return { won: true, sha };
    return { won: false, current: this.repo.read(ref) };
  }
}
