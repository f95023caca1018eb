// Which of the demo's fleet requests went to its designed failures: the attempts that fail on
// purpose (a CI failure retried, a worker giving up, an issue already satisfied, escalations).
// Each rate-limited request of the fleet is tied to what it names: an issue, a PR (by number, or
// by a head sha the fleet saw on it), or nothing (lists, the base's rules: shared). A request is
// a failure's when it names an issue that did not land, a PR that was closed unmerged, or the
// attempt labels (which exist only because an attempt failed). Shared requests are all left on
// the landed issues, so the figure without failures is, if anything, too high.
import type { ResponseRecord } from "../server/forge-emulator/index.js";
import { parseFleetBranch } from "../server/state/markers.js";

export interface Attribution {
  /** Rate-limited requests of the fleet seen (the demo's setup included). */
  counted: number;
  /** Of those, spent on designed failures. */
  failures: number;
  /** Of those, tied to no issue or PR (lists, rules, labels list, login). */
  shared: number;
}

interface PullFacts {
  number: number;
  head?: { ref?: string; sha?: string };
}

/** Collects the forge's answers while the demo runs; `attribute` reads them afterwards. */
export class RequestLog {
  readonly records: ResponseRecord[] = [];
  readonly observe = (r: ResponseRecord): void => {
    this.records.push(r);
  };
}

export function attribute(records: readonly ResponseRecord[], login: string, landed: ReadonlySet<number>): Attribution {
  const issueOfPull = new Map<number, number>();
  const pullOfHead = new Map<string, number>();
  const merged = new Set<number>();
  const learn = (p: PullFacts): void => {
    const issue = p.head?.ref ? parseFleetBranch(p.head.ref) : null;
    if (issue !== null) issueOfPull.set(p.number, issue);
    if (p.head?.sha) pullOfHead.set(p.head.sha, p.number);
  };
  // What the fleet learnt of its PRs: every 200 listing, each PR it opened, each merge.
  for (const r of records) {
    if (r.login !== login || r.status >= 300 || r.body === null) continue;
    if (/\/pulls$/.test(r.path)) for (const p of Array.isArray(r.body) ? (r.body as PullFacts[]) : [r.body as PullFacts]) learn(p);
    const merge = /\/pulls\/(\d+)\/merge$/.exec(r.path);
    if (merge && r.method === "PUT") merged.add(Number(merge[1]));
  }
  const out: Attribution = { counted: 0, failures: 0, shared: 0 };
  for (const r of records) {
    if (r.login !== login || !r.counted) continue;
    out.counted += 1;
    let pull: number | null = null;
    let issue: number | null = null;
    const numbered = /\/(issues|pulls)\/(\d+)(\/|$)/.exec(r.path);
    const commit = /\/commits\/([0-9a-f]{40})\//.exec(r.path);
    if (numbered) {
      const n = Number(numbered[2]);
      if (issueOfPull.has(n)) pull = n;
      else issue = n;
    } else if (commit) pull = pullOfHead.get(commit[1]!) ?? null;
    else if (r.method === "POST" && /\/pulls$/.test(r.path)) pull = (r.body as PullFacts | null)?.number ?? null;
    if (pull !== null) issue = issueOfPull.get(pull) ?? null;
    const attemptLabels = /\/labels(\/|$)/.test(r.path) && r.method !== "GET";
    if (issue === null && !attemptLabels) out.shared += 1;
    else if (attemptLabels || (issue !== null && !landed.has(issue)) || (pull !== null && !merged.has(pull))) out.failures += 1;
  }
  return out;
}
