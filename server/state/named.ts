// What became of every issue number a human typed into an `issues` selector: those that will not
// run now, each with its reason, in the lists' order, and the blockers a list pulled in that
// wait too. Pure: which numbers are no issue at all (absent, a pull request) the host looks up
// and passes in; a plan without those facts says only that a number is not open.
import type { Frontier } from "./frontier.js";
import type { Selector } from "./selectors.js";

/** What a number is in the repository, as the host found it (a closed issue is an "issue"). */
export type NumberKind = "issue" | "pull" | "absent";

export interface NamedSkip {
  number: number;
  /** Index of the selector that names it (or pulls it in). */
  selector: number;
  /** An exclusion kind (frontier.ts), or "closed", "pull_request", "absent", "not_open" (not open, not looked up). */
  reason: string;
  text: string;
  /** Pulled in as an open blocker of these named issues (absent: named itself). */
  blocks?: number[];
}

/** Every number the selectors' `issues` lists name, once, in order, with the first selector naming it. */
export function namedNumbers(selectors: readonly Selector[]): Array<{ number: number; selector: number }> {
  const seen = new Set<number>();
  const out: Array<{ number: number; selector: number }> = [];
  selectors.forEach((selector, i) => {
    for (const number of selector.issues ?? []) {
      if (seen.has(number)) continue;
      seen.add(number);
      out.push({ number, selector: i });
    }
  });
  return out;
}

/** The named numbers that are no issue of the repository: the start refuses them (a typo must not run the rest). */
export function notIssues(named: ReadonlyArray<{ number: number }>, kinds: ReadonlyMap<number, NumberKind>): { absent: number[]; pulls: number[] } {
  const absent = named.filter((n) => kinds.get(n.number) === "absent").map((n) => n.number);
  const pulls = named.filter((n) => kinds.get(n.number) === "pull").map((n) => n.number);
  return { absent, pulls };
}

/**
 * The named issues that will not be dispatched now, in the lists' order, then the pulled-in
 * blockers that wait (by number). `openPulls`: open pull requests (a number naming one is no
 * issue); `kinds`: what the host found the other numbers not open to be.
 */
export function namedSkips(
  selectors: readonly Selector[],
  frontier: Frontier,
  openPulls: ReadonlySet<number>,
  kinds: ReadonlyMap<number, NumberKind> = new Map(),
): NamedSkip[] {
  const dispatched = new Set(frontier.dispatch.map((d) => d.number));
  const excluded = new Map(frontier.excluded.map((e) => [e.number, e]));
  const out: NamedSkip[] = [];
  for (const { number, selector } of namedNumbers(selectors)) {
    if (dispatched.has(number)) continue;
    const e = excluded.get(number);
    if (e) {
      out.push({ number, selector, reason: e.reason.kind, text: e.text });
      continue;
    }
    const kind = openPulls.has(number) ? "pull" : kinds.get(number);
    if (kind === "pull") out.push({ number, selector, reason: "pull_request", text: `#${number} is a pull request, not an issue` });
    else if (kind === "absent") out.push({ number, selector, reason: "absent", text: `no issue #${number} in this repository` });
    else if (kind === "issue") out.push({ number, selector, reason: "closed", text: "closed" });
    else out.push({ number, selector, reason: "not_open", text: "not open (closed, or no issue at all)" });
  }
  for (const e of frontier.excluded) {
    if (!e.blocks) continue;
    const selector = e.reason.kind === "not_ready" ? e.reason.selector : selectors.findIndex((s) => s.issues?.some((n) => e.blocks!.includes(n)));
    out.push({ number: e.number, selector, reason: e.reason.kind, text: e.text, blocks: e.blocks });
  }
  return out;
}
