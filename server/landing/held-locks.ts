// The landing locks this process holds right now, so that every exit path can release them:
// the landing's own `finally` on a normal end, and the shutdown path's abandon on a second
// signal (a process that exits mid-landing would otherwise block every host's landings for a
// whole lock TTL).
import type { RefStore } from "../gh/refstore.js";

interface HeldLock {
  refs: RefStore;
  ref: string;
  sha: string;
}

const held = new Set<HeldLock>();

/** Records a lock just taken; the returned function releases it (compare-and-swap) and forgets it. */
export function holdLandingLock(refs: RefStore, ref: string, sha: string): () => Promise<void> {
  const lock: HeldLock = { refs, ref, sha };
  held.add(lock);
  return async () => {
    try {
      await refs.remove(ref, sha);
    } finally {
      held.delete(lock);
    }
  };
}

/**
 * Like holdLandingLock, for a lock its holder renews (a train's long gate): `moved` records the
 * lock's new sha after each renewal, so release and shutdown remove the current one.
 */
export function holdRenewableLandingLock(
  refs: RefStore,
  ref: string,
  sha: string,
): { release: () => Promise<void>; moved: (sha: string) => void; sha: () => string } {
  const lock: HeldLock = { refs, ref, sha };
  held.add(lock);
  return {
    release: async () => {
      try {
        await refs.remove(ref, lock.sha);
      } finally {
        held.delete(lock);
      }
    },
    moved: (next) => {
      lock.sha = next;
    },
    sha: () => lock.sha,
  };
}

/** How many landing locks this process holds now. */
export function heldLandingLocks(): number {
  return held.size;
}

/** Releases every lock still held (best effort); returns how many were released. */
export async function releaseHeldLandingLocks(): Promise<number> {
  const locks = [...held];
  const results = await Promise.all(
    locks.map(async (lock) => {
      const outcome = await lock.refs.remove(lock.ref, lock.sha).catch(() => null);
      if (outcome?.won) held.delete(lock);
      return outcome?.won === true;
    }),
  );
  return results.filter(Boolean).length;
}
