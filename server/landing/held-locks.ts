// The landings of one host: their line (landings are serialized per repository and instance in a
// process: one job at a time per key, `KeyedSerial`) and the landing locks they hold right now, so
// that every exit path can release them: the landing's own `finally` on a normal end, and the
// shutdown path's abandon or hand-over (a process that exits mid-landing would otherwise block
// every host's landings for a whole lock TTL). One `HostLandings` per FleetHost, handed to its
// fleets' landings through LandingContext.
import type { RefStore } from "../gh/refstore.js";
import { KeyedSerial } from "../kit/serial.js";

interface HeldLock {
  refs: RefStore;
  ref: string;
  sha: string;
}

export class HostLandings {
  /** One line of landings per repository and instance (landing-lock.ts landingKey). */
  readonly line = new KeyedSerial<string>();
  private readonly held = new Set<HeldLock>();

  /** Records a lock just taken; the returned function releases it (compare-and-swap) and forgets it. */
  hold(refs: RefStore, ref: string, sha: string): () => Promise<void> {
    return this.holdRenewable(refs, ref, sha).release;
  }

  /**
   * Like `hold`, for a lock its holder renews (a train's long gate): `moved` records the lock's
   * new sha after each renewal, so release and shutdown remove the current one.
   */
  holdRenewable(refs: RefStore, ref: string, sha: string): { release: () => Promise<void>; moved: (sha: string) => void; sha: () => string } {
    const lock: HeldLock = { refs, ref, sha };
    this.held.add(lock);
    return {
      release: async () => {
        try {
          await refs.remove(ref, lock.sha);
        } finally {
          this.held.delete(lock);
        }
      },
      moved: (next) => {
        lock.sha = next;
      },
      sha: () => lock.sha,
    };
  }

  /** How many landing locks this host holds now. */
  heldLocks(): number {
    return this.held.size;
  }

  /** Releases every lock still held (best effort); returns how many were released. */
  async releaseHeld(): Promise<number> {
    const locks = [...this.held];
    const results = await Promise.all(
      locks.map(async (lock) => {
        const outcome = await lock.refs.remove(lock.ref, lock.sha).catch(() => null);
        if (outcome?.won) this.held.delete(lock);
        return outcome?.won === true;
      }),
    );
    return results.filter(Boolean).length;
  }
}
