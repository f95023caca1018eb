// The last word of a stop: every claim of this instance that has no open PR is released, read
// from GitHub at this moment rather than from the last tick's working set. A tick that was
// acting when the stop came, a retry between two attempts, a tick that failed on a flaky
// answer: none of them may leave a claim nobody works on (invariant 4).
import type { Forge } from "../gh/forge.js";
import type { RefStore } from "../gh/refstore.js";
import { parseNamespace, type Lease } from "../state/claims.js";
import { parseFleetBranch, sameLogin } from "../state/markers.js";

export interface DrainDeps {
  refs: RefStore;
  forge: Forge;
  lease: Lease;
  namespace: string;
  /** The fleet's login: only its own PRs keep a claim. */
  login: string;
  branchPrefix: string;
}

export interface DrainResult {
  released: number[];
  /** Claims kept because an open PR of ours carries them. */
  kept: number[];
}

/** Releases our claims without an open PR of ours, except `busy` ones (a worker still runs). */
export async function releaseClaimsWithoutPr(deps: DrainDeps, busy: ReadonlySet<number> = new Set()): Promise<DrainResult> {
  const entries = await deps.refs.list(`${deps.namespace}/claim/`);
  const { claims } = parseNamespace(deps.namespace, entries);
  const mine = claims.filter((c) => c.instance === deps.lease.instance);
  if (mine.length === 0) return { released: [], kept: [] };
  const repo = `${deps.forge.repo.owner}/${deps.forge.repo.name}`.toLowerCase();
  const proposed = new Set<number>();
  for (const pull of await deps.forge.listOpenPulls()) {
    if (pull.head.repoFullName?.toLowerCase() !== repo || !sameLogin(pull.author, deps.login)) continue;
    const issue = parseFleetBranch(pull.head.ref, deps.branchPrefix);
    if (issue !== null) proposed.add(issue);
  }
  const released: number[] = [];
  const kept: number[] = [];
  for (const claim of mine.sort((a, b) => a.issue - b.issue)) {
    if (proposed.has(claim.issue) || busy.has(claim.issue)) {
      kept.push(claim.issue);
      continue;
    }
    if (await deps.lease.release(claim.issue, claim.sha)) released.push(claim.issue);
  }
  return { released, kept };
}
