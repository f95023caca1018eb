// Conflicts between the fleet's own in-flight work, as policy: which pairs of in-flight heads are
// worth a merge test (only those whose changed files touch), the landing order the conflicting
// pairs suggest, and whether a PR found conflicting with the base is retried now or waits for the
// in-flight work that changes its conflicting files to land first. Pure: the fleet runs git
// (server/fleet/conflict-watch.ts) and passes the results in.

/** A pair of the fleet's in-flight heads that do not merge with each other (`a` < `b`). */
export interface PairConflict {
  a: number;
  b: number;
  prA: number | null;
  prB: number | null;
  files: string[];
}

/** A PR seen not to merge with the base, kept across passes while its retry waits. */
export interface PendingConflict {
  pr: number;
  files: readonly string[];
  /** Where it was seen: the check after our own landing, a landing's sync, or a base moved by anyone. */
  source: "early" | "landing" | "base";
  heldSeconds: number;
  /** The claims it waits for, fixed when the hold began (null: not decided yet). */
  blockers: readonly number[] | null;
}

/** A conflict retry that waits, as status and the board show it. */
export interface ConflictHold {
  issue: number;
  pr: number;
  files: string[];
  /** The in-flight issues whose work changes those files: the retry starts once they landed or were abandoned. */
  waitingFor: number[];
  heldSeconds: number;
  maxSeconds: number;
}

/** What decide needs to let a conflict retry wait: every claim's paths, and the bound. */
export interface ConflictWaitInput {
  /** Issue → the files its in-flight work changes and the paths its body names. */
  pathsOf: ReadonlyMap<number, readonly string[]>;
  /** A hold never lasts longer (`conflicts.hold_max_seconds`, scaled). */
  maxSeconds: number;
}

/** Whether two path lists touch: a path in both, or a file in one that is a folder in the other. */
export function touching(x: readonly string[], y: readonly string[]): string[] {
  const files = new Set(x);
  const dirs = new Set<string>();
  for (const p of x) for (let i = p.indexOf("/"); i > 0; i = p.indexOf("/", i + 1)) dirs.add(p.slice(0, i));
  const out = new Set<string>();
  for (const p of y) {
    if (files.has(p) || dirs.has(p)) out.add(p);
    for (let i = p.indexOf("/"); i > 0; i = p.indexOf("/", i + 1)) if (files.has(p.slice(0, i))) out.add(p.slice(0, i));
  }
  return [...out].sort();
}

/** The pairs worth a merge test: heads whose changed files touch (others cannot conflict in content). */
export function pairsToTest<T extends { issue: number; files: readonly string[] }>(heads: readonly T[]): Array<[T, T]> {
  const sorted = [...heads].sort((p, q) => p.issue - q.issue);
  const out: Array<[T, T]> = [];
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length; j++) if (touching(sorted[i]!.files, sorted[j]!.files).length > 0) out.push([sorted[i]!, sorted[j]!]);
  }
  return out;
}

/**
 * The claims in the order their green PRs should land: a PR that conflicts with fewer other
 * in-flight PRs first. Landing one of a conflicting pair fails the other, so landing those that
 * conflict with the fewest fails the fewest (A against B and C, which do not conflict: B and C
 * land, only A is redone). Stable: without conflicting pairs the order is unchanged.
 */
export function landingOrder<T extends { issue: number }>(claims: readonly T[], pairs: readonly PairConflict[]): T[] {
  if (pairs.length === 0) return [...claims];
  const partners = new Map<number, number>();
  for (const p of pairs) for (const n of [p.a, p.b]) partners.set(n, (partners.get(n) ?? 0) + 1);
  return [...claims].sort((x, y) => (partners.get(x.issue) ?? 0) - (partners.get(y.issue) ?? 0));
}

/**
 * Whether a PR that no longer merges with the base waits before its retry, and for whom. It waits
 * for the fleet's other in-flight claims whose work touches its conflicting files (changed files,
 * or paths their issue names): retried now, it would be redone beside them and conflict again when
 * the first of them lands. The set is fixed when the hold begins (work started later never extends
 * it), and shrinks as they land or are abandoned. A claim that is itself waiting on a conflict
 * counts only if it waits longer (so two holds never wait on each other: the queue is ordered by
 * how long each waited, then by issue). Bounded by `maxSeconds`. Returns [] to retry now.
 */
export function conflictWaitsFor(
  issue: number,
  pending: PendingConflict,
  claims: ReadonlyArray<{ issue: number; issueOpen: boolean }>,
  conflicts: ReadonlyMap<number, PendingConflict>,
  wait: ConflictWaitInput,
): number[] {
  if (pending.heldSeconds >= wait.maxSeconds) return [];
  const ahead = (other: number): boolean => {
    const o = conflicts.get(other);
    if (!o) return true;
    return o.heldSeconds > pending.heldSeconds || (o.heldSeconds === pending.heldSeconds && other < issue);
  };
  const open = new Set(claims.filter((c) => c.issueOpen && c.issue !== issue).map((c) => c.issue));
  const candidates = pending.blockers ?? [...open].filter((n) => touching(pending.files, wait.pathsOf.get(n) ?? []).length > 0);
  return candidates.filter((n) => open.has(n) && ahead(n)).sort((x, y) => x - y);
}
