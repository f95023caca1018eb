// Which open issues wait on which: native "blocked by" links united with the body's
// `## Blocked by` section. A blocker is open while the snapshot lists it as an open issue or PR
// and not as known closed — or, for a native link, while GitHub reports the link itself open
// (a blocker in another repository is never in our lists, and treating it as closed would
// dispatch work that can only come back "blocked", again and again). Dependency cycles among
// open issues are found (Tarjan) so their members are reported once instead of waiting on each
// other forever.

import type { IssueFacts } from "./facts.js";
import type { SnapshotIssue } from "./snapshot.js";

export interface DependencyAnalysis {
  /** Open issue → its open blockers (sorted). Issues without any are absent. */
  openBlockers: Map<number, number[]>;
  /** Open issue in a cycle → the members of its cycle (sorted). */
  cycleOf: Map<number, number[]>;
  /** Every cycle, each sorted, ordered by smallest member. */
  cycles: number[][];
}

/** Anything that answers membership: a Set, or a Map keyed by number. */
export interface NumberLookup {
  has(n: number): boolean;
}

export interface OpenSets {
  openIssues: NumberLookup;
  openPulls: NumberLookup;
  knownClosed: NumberLookup;
}

export function isOpenNumber(n: number, sets: OpenSets): boolean {
  return (sets.openIssues.has(n) || sets.openPulls.has(n)) && !sets.knownClosed.has(n);
}

/** `factsOf` gives each issue's blockers (rebuild passes the ones it already derived). */
export function analyzeDependencies(
  issues: readonly SnapshotIssue[],
  sets: OpenSets,
  factsOf: (issue: SnapshotIssue, index: number) => Pick<IssueFacts, "blockers" | "openLinks">,
): DependencyAnalysis {
  const openBlockers = new Map<number, number[]>();
  for (let i = 0; i < issues.length; i++) {
    const issue = issues[i]!;
    const { blockers: named, openLinks } = factsOf(issue, i);
    if (named.length === 0) continue;
    let open: number[] | null = null;
    for (let j = 0; j < named.length; j++) {
      const n = named[j]!;
      if (isOpenNumber(n, sets) || (openLinks.length > 0 && openLinks.includes(n) && !sets.knownClosed.has(n))) {
        (open ??= []).push(n);
      }
    }
    if (open !== null) {
      openBlockers.set(issue.number, open);
    }
  }
  // Only issues can block issues in a cycle: a PR has no blockers of its own.
  const nodes = [...openBlockers.keys()].sort((a, b) => a - b);
  // Edges between issues that themselves wait on something: only those can close a cycle.
  const edgesOf = new Map<number, number[]>();
  for (const n of nodes) {
    edgesOf.set(
      n,
      openBlockers.get(n)!.filter((k) => openBlockers.has(k)),
    );
  }
  const edges = (n: number): readonly number[] => edgesOf.get(n) ?? [];
  const cycles: number[][] = [];
  const cycleOf = new Map<number, number[]>();
  for (const scc of stronglyConnected(nodes, edges)) {
    const first = scc[0]!;
    const isCycle = scc.length > 1 || edges(first).includes(first);
    if (isCycle) {
      const members = [...scc].sort((a, b) => a - b);
      cycles.push(members);
      for (const m of members) {
        cycleOf.set(m, members);
      }
    }
  }
  cycles.sort((a, b) => a[0]! - b[0]!);
  return { openBlockers, cycleOf, cycles };
}

/** Tarjan's strongly connected components, iterative (a 10,000-long chain must not overflow). */
export function stronglyConnected(nodes: readonly number[], edges: (n: number) => readonly number[]): number[][] {
  const index = new Map<number, number>();
  const low = new Map<number, number>();
  const onStack = new Set<number>();
  const stack: number[] = [];
  const result: number[][] = [];
  let next = 0;

  const visit = (n: number): void => {
    index.set(n, next);
    low.set(n, next);
    next++;
    stack.push(n);
    onStack.add(n);
  };

  for (const root of nodes) {
    if (index.has(root)) {
      continue;
    }
    visit(root);
    const work: Array<{ node: number; succ: readonly number[]; i: number }> = [{ node: root, succ: edges(root), i: 0 }];
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      if (frame.i < frame.succ.length) {
        const w = frame.succ[frame.i++]!;
        if (!index.has(w)) {
          visit(w);
          work.push({ node: w, succ: edges(w), i: 0 });
        } else if (onStack.has(w)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(w)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) {
        low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const scc: number[] = [];
        for (;;) {
          const w = stack.pop()!;
          onStack.delete(w);
          scc.push(w);
          if (w === frame.node) {
            break;
          }
        }
        result.push(scc);
      }
    }
  }
  return result;
}
