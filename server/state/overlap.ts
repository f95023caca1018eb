// Conflicts seen early, as policy: which paths an issue names (code spans and path-like words
// in its body that exist in the base tree), which ready issues to start first so that parallel
// workers do not edit the files in-flight PRs already change (an equally ranked alternative
// goes first; nothing is skipped), and which in-flight PRs a landing left unmergeable. Pure:
// the fleet reads the tree, the diffs and the merge results from git and passes them in.
import type { DispatchItem } from "./frontier.js";

const CODE_SPAN = /`([^`\n]{1,200})`/g;
const PATH_WORD = /(?:^|[\s("'[])((?:[\w.-]+\/)*[\w.-]+\.[A-Za-z0-9]{1,8})(?=$|[\s)"',:;\]]|\.(?:\s|$))/gm;

/** Paths the issue body names that exist in the base tree, sorted. */
export function namedPaths(body: string, tree: ReadonlySet<string>): string[] {
  const found = new Set<string>();
  const consider = (raw: string): void => {
    const p = raw
      .trim()
      .replace(/^\.\//, "")
      .replace(/[.,:;]+$/, "");
    if (tree.has(p)) found.add(p);
  };
  for (const m of body.matchAll(CODE_SPAN)) consider(m[1]!);
  for (const m of body.matchAll(PATH_WORD)) consider(m[1]!);
  return [...found].sort();
}

export interface OverlapHold {
  issue: number;
  /** The named paths that in-flight PRs change. */
  paths: string[];
  /** The issue started in its place. */
  instead: number;
}

/**
 * The frontier in the order to dispatch `room` issues: within each rank (selector, then an
 * `issues` list's order, then high priority, as the frontier ranks them), issues whose named paths no in-flight PR changes come
 * before those that overlap. `holds` lists the issues that plain order would have started now
 * and that waited for an equally ranked one without overlap.
 */
export function overlapOrder(
  dispatch: readonly DispatchItem[],
  room: number,
  pathsOf: ReadonlyMap<number, readonly string[]>,
  inFlight: ReadonlySet<string>,
): { order: DispatchItem[]; holds: OverlapHold[] } {
  const overlapOf = (item: DispatchItem): string[] => (pathsOf.get(item.number) ?? []).filter((p) => inFlight.has(p));
  const order: DispatchItem[] = [];
  for (let i = 0; i < dispatch.length;) {
    let j = i;
    const rank = (x: DispatchItem): string => `${x.selector}:${x.rank ?? ""}:${x.high ? 1 : 0}`;
    while (j < dispatch.length && rank(dispatch[j]!) === rank(dispatch[i]!)) j++;
    const group = dispatch.slice(i, j);
    order.push(...group.filter((x) => overlapOf(x).length === 0), ...group.filter((x) => overlapOf(x).length > 0));
    i = j;
  }
  const now = new Set(order.slice(0, room).map((x) => x.number));
  const plain = dispatch.slice(0, room);
  const replacements = order.slice(0, room).filter((x) => !plain.some((p) => p.number === x.number));
  const holds: OverlapHold[] = [];
  for (const item of plain) {
    if (now.has(item.number)) continue;
    holds.push({ issue: item.number, paths: overlapOf(item), instead: replacements[holds.length]?.number ?? 0 });
  }
  return { order, holds };
}

/**
 * The holds `status` shows: this pass's, and earlier ones still true (the issue still waits in
 * the frontier and still names a path an in-flight PR changes). A hold is decided in the one pass
 * that started another issue first; the plan keeps saying so until it no longer holds.
 */
export function standingHolds(
  previous: readonly OverlapHold[],
  now: readonly OverlapHold[],
  dispatch: readonly DispatchItem[],
  overlap: { pathsOf: ReadonlyMap<number, readonly string[]>; inFlight: ReadonlySet<string> } | null,
): OverlapHold[] {
  if (overlap === null) return [...now];
  const waiting = new Set(dispatch.map((d) => d.number));
  const out = [...now];
  for (const h of previous) {
    if (out.some((x) => x.issue === h.issue) || !waiting.has(h.issue)) continue;
    const paths = (overlap.pathsOf.get(h.issue) ?? []).filter((p) => overlap.inFlight.has(p));
    if (paths.length > 0) out.push({ ...h, paths });
  }
  return out.sort((a, b) => a.issue - b.issue);
}

/** In-flight PRs of ours that no longer merge with the new base: fail them now, not at their landing turn. */
export function earlyConflicts(
  claims: ReadonlyArray<{ issue: number; pr: number | null; status: string }>,
  conflicts: ReadonlyMap<number, readonly string[]>,
): Array<{ issue: number; pr: number; files: string[] }> {
  const out: Array<{ issue: number; pr: number; files: string[] }> = [];
  for (const c of claims) {
    const files = conflicts.get(c.issue);
    if (c.pr === null || !files || files.length === 0) continue;
    if (c.status === "failure" || c.status === "changes_requested" || c.status === "no_pr") continue; // already on its way
    out.push({ issue: c.issue, pr: c.pr, files: [...files].sort() });
  }
  return out;
}
