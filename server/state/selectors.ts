// Ordered work selectors. A selector picks an issue when every facet it names matches; an
// issue's priority is the index of the first selector that picks it, so a lower selector only
// gets what the ones above it left (one producer, not competing loops).

import { DEFAULT_READY_LABEL, TAG_LABEL_PREFIX } from "./markers.js";
import type { SnapshotIssue } from "./snapshot.js";

/**
 * One selector, in the fleet config's canonical shape: a facet that is null (or absent, or an
 * empty `tags` list) does not filter — except `label`, which when absent means the ready label
 * (as the config documents) and only when null means "any label".
 */
export interface Selector {
  /** A label the issue carries (case-insensitive). Absent: `labels.ready`. Null: no label filter. */
  label?: string | null;
  /** Explicit issue numbers. */
  issues?: readonly number[] | null;
  /** Every tag must be present as a `<tag_prefix><value>` label (AND). */
  tags?: readonly string[] | null;
  /** The issue's author login; "@me" is the fleet's own login. */
  user?: string | null;
  /** Issues of epic N: its native sub-issues, a `prd: #N` body line, a `prd:N` label, or parent N. */
  epic?: number | null;
  /** Milestone title (case-insensitive). */
  milestone?: string | null;
  /** With `issues`: their open blockers (transitively) are picked too. Absent: true. */
  blockers?: boolean;
  /** The engine the issues it picks run (route.ts: below an issue's labels and the ladder). */
  engine?: string | undefined;
  /** The model the issues it picks run. */
  model?: string | undefined;
}

/** What selectors need to know beyond one issue: the fleet login and each epic's sub-issues. */
export interface SelectorContext {
  repo: string;
  login: string;
  /** The label an absent `label` facet stands for. */
  readyLabel: string;
  /** Prefix of tag labels ("tag:"). */
  tagPrefix: string;
  /** Epic number → its native sub-issue numbers. */
  subIssuesOf: ReadonlyMap<number, ReadonlySet<number>>;
  /** Open issue → its open blockers (native links). */
  openBlockersOf?: ReadonlyMap<number, readonly number[]>;
}

/** Per-issue facts the facets read, computed once per rebuild. */
export interface SelectorFacts {
  labels: readonly string[]; // lower-cased
  prdRefs: ReadonlySet<number>; // `prd: #N` lines and `prd:N` labels
}

export function selectorContext(
  repo: string,
  login: string,
  issues: readonly SnapshotIssue[],
  labels: { ready: string; tag_prefix?: string } = { ready: DEFAULT_READY_LABEL },
): SelectorContext {
  const subIssuesOf = new Map<number, Set<number>>();
  for (const issue of issues) {
    if (issue.subIssues.length > 0) {
      let set = subIssuesOf.get(issue.number);
      if (!set) {
        set = new Set();
        subIssuesOf.set(issue.number, set);
      }
      for (const n of issue.subIssues) {
        set.add(n);
      }
    }
  }
  const openBlockersOf = new Map<number, number[]>();
  for (const issue of issues) {
    const open = issue.blockedBy.filter((b) => b.state === "open").map((b) => b.number);
    if (open.length > 0) openBlockersOf.set(issue.number, open);
  }
  return { repo, login, readyLabel: labels.ready, tagPrefix: labels.tag_prefix ?? TAG_LABEL_PREFIX, subIssuesOf, openBlockersOf };
}

function normalizeLogin(user: string, login: string): string {
  const trimmed = user.trim();
  if (trimmed.toLowerCase() === "@me") {
    return login.toLowerCase();
  }
  return trimmed.replace(/^@/, "").toLowerCase();
}

function tagLabel(tag: string, prefix: string): string {
  const t = tag.trim().toLowerCase();
  const p = prefix.toLowerCase();
  return t.startsWith(p) ? t : `${p}${t}`;
}

/** A selector with its case-folded values prepared once (see `compileSelectors`). */
interface CompiledSelector {
  label: string | null;
  issues: readonly number[] | null;
  tags: readonly string[] | null;
  user: string | null;
  epic: number | null;
  epicSubIssues: ReadonlySet<number> | undefined;
  milestone: string | null;
  /** Open blockers of the named issues (not named themselves) → the named issues they hold up. */
  pulled: ReadonlyMap<number, number[]>;
  /** Issue → its place in an `issues` list: a named issue by its index, a pulled blocker just before the first issue it holds up. */
  rank: ReadonlyMap<number, number> | null;
}

/** Why an issue that an `issues` selector names (or pulls in as a blocker) is not picked by it. */
export interface NamedMiss {
  /** Index of the first `issues` selector that names it or pulls it in. */
  selector: number;
  /** The facets it fails, as facts ("no label ready-for-agent"). */
  missing: string[];
  /** Pulled in as an open blocker of these named issues (absent: named itself). */
  blocks?: number[];
}

/**
 * Places in an `issues` list: named issue i at 2i+1, a pulled blocker at 2j where j is the
 * first listed issue it holds up, so it sorts just before that issue (dispatch order is the
 * list's, not the numbers').
 */
function listRanks(named: readonly number[], pulled: ReadonlyMap<number, number[]>): Map<number, number> {
  const index = new Map<number, number>();
  named.forEach((n, i) => {
    if (!index.has(n)) index.set(n, i);
  });
  const rank = new Map<number, number>();
  for (const [n, i] of index) rank.set(n, 2 * i + 1);
  for (const [n, roots] of pulled) rank.set(n, 2 * Math.min(...roots.map((r) => index.get(r)!)));
  return rank;
}

/** The open blockers of `named`, transitively, each with the named issues it holds up. */
export function pulledBlockers(named: readonly number[], openBlockersOf: ReadonlyMap<number, readonly number[]>): Map<number, number[]> {
  const out = new Map<number, number[]>();
  const own = new Set(named);
  for (const root of named) {
    const seen = new Set<number>([root]);
    const queue = [...(openBlockersOf.get(root) ?? [])];
    while (queue.length > 0) {
      const n = queue.shift()!;
      if (seen.has(n)) continue;
      seen.add(n);
      if (!own.has(n)) out.set(n, [...(out.get(n) ?? []), root]);
      queue.push(...(openBlockersOf.get(n) ?? []));
    }
  }
  for (const roots of out.values()) roots.sort((a, b) => a - b);
  return out;
}

/**
 * `selectorPriority` for many issues: each selector's lower-cased label, tag labels, login and
 * milestone are prepared once instead of once per issue. Returns -1 when no selector picks.
 */
export function compileSelectors(
  selectors: readonly Selector[],
  ctx: SelectorContext,
): ((issue: SnapshotIssue, facts: SelectorFacts) => number) & {
  pulledFor: (issue: number, selector: number) => number[] | undefined;
  rankFor: (issue: number, selector: number) => number | undefined;
  namedMiss: (issue: SnapshotIssue, facts: SelectorFacts) => NamedMiss | undefined;
} {
  const compiled: CompiledSelector[] = selectors.map((selector) => {
    const label = selector.label === undefined ? ctx.readyLabel : selector.label;
    const epic = selector.epic ?? null;
    const pulled =
      selector.issues != null && selector.blockers !== false ? pulledBlockers(selector.issues, ctx.openBlockersOf ?? new Map()) : new Map<number, number[]>();
    return {
      label: label === null ? null : label.toLowerCase(),
      issues: selector.issues ?? null,
      tags: selector.tags != null ? selector.tags.map((tag) => tagLabel(tag, ctx.tagPrefix)) : null,
      user: selector.user != null ? normalizeLogin(selector.user, ctx.login) : null,
      epic,
      epicSubIssues: epic !== null ? ctx.subIssuesOf.get(epic) : undefined,
      milestone: selector.milestone != null ? selector.milestone.trim().toLowerCase() : null,
      pulled,
      rank: selector.issues != null ? listRanks(selector.issues, pulled) : null,
    };
  });
  const picks = (c: CompiledSelector, issue: SnapshotIssue, facts: SelectorFacts): boolean => {
    const labels = facts.labels;
    // An open blocker of a named issue is picked for that issue's sake, whatever its other facets
    // say, but it must be ready as any issue is: it carries the selector's label (a blocker still
    // under triage waits for a human, and the named issue waits for it).
    if (c.pulled.has(issue.number)) return c.label === null || labels.includes(c.label);
    if (c.label !== null && !labels.includes(c.label)) return false;
    if (c.issues !== null && !c.issues.includes(issue.number)) return false;
    if (c.tags !== null) {
      for (let i = 0; i < c.tags.length; i++) {
        if (!labels.includes(c.tags[i]!)) return false;
      }
    }
    if (c.user !== null && issue.author.toLowerCase() !== c.user) return false;
    if (c.epic !== null) {
      const epic = c.epic;
      const member = c.epicSubIssues?.has(issue.number) === true || issue.parent === epic || facts.prdRefs.has(epic);
      if (!member) return false;
    }
    if (c.milestone !== null && (issue.milestone === null || issue.milestone.trim().toLowerCase() !== c.milestone)) {
      return false;
    }
    return true;
  };
  const priority = (issue: SnapshotIssue, facts: SelectorFacts): number => {
    for (let i = 0; i < compiled.length; i++) {
      if (picks(compiled[i]!, issue, facts)) return i;
    }
    return -1;
  };
  /** The named issues an issue was pulled in for by selector `i` (undefined: picked on its own). */
  const pulledFor = (issue: number, i: number): number[] | undefined => compiled[i]?.pulled.get(issue);
  /** Its place in selector `i`'s list (undefined: that selector names no issues). */
  const rankFor = (issue: number, i: number): number | undefined => compiled[i]?.rank?.get(issue);
  /** For an issue no selector picks: the first `issues` selector that names it or pulls it in, and what it lacks. */
  const namedMiss = (issue: SnapshotIssue, facts: SelectorFacts): NamedMiss | undefined => {
    for (let i = 0; i < compiled.length; i++) {
      const c = compiled[i]!;
      if (c.rank === null || !c.rank.has(issue.number)) continue;
      const blocks = c.pulled.get(issue.number);
      if (blocks) return { selector: i, missing: c.label === null ? [] : [`no label ${c.label}`], blocks };
      return { selector: i, missing: missedFacets(c, issue, facts) };
    }
    return undefined;
  };
  return Object.assign(priority, { pulledFor, rankFor, namedMiss });
}

/** The facets of `c` other than `issues` that the issue fails, worded as facts about it. */
function missedFacets(c: CompiledSelector, issue: SnapshotIssue, facts: SelectorFacts): string[] {
  const out: string[] = [];
  if (c.label !== null && !facts.labels.includes(c.label)) out.push(`no label ${c.label}`);
  for (const tag of c.tags ?? []) if (!facts.labels.includes(tag)) out.push(`no label ${tag}`);
  if (c.user !== null && issue.author.toLowerCase() !== c.user) out.push(`not opened by ${c.user}`);
  if (c.epic !== null && !(c.epicSubIssues?.has(issue.number) === true || issue.parent === c.epic || facts.prdRefs.has(c.epic)))
    out.push(`not in epic #${c.epic}`);
  if (c.milestone !== null && (issue.milestone === null || issue.milestone.trim().toLowerCase() !== c.milestone)) out.push(`not in milestone ${c.milestone}`);
  return out;
}
