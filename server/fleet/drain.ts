// The last word of a stop: every claim of this instance that has no open PR is released, read
// from GitHub at this moment rather than from the last tick's working set. A tick that was
// acting when the stop came, a retry between two attempts, a tick that failed on a flaky
// answer: none of them may leave a claim nobody works on (docs/architecture.md, invariant 4).
import type { Forge, PullRequest } from "../gh/forge.js";
import { missedFleetPulls, type GatherMemory } from "../gh/gather.js";
import type { ReleasedLeft } from "../board/render.js";
import type { RefStore } from "../gh/refstore.js";
import { parseNamespace } from "../state/claims.js";
import type { Lease } from "../gh/lease.js";
import { parseFleetBranch, sameLogin } from "../state/markers.js";
import type { FleetRuntime } from "./effects/effect.js";
import { errorData, errorText } from "./supervisor-log.js";

export interface DrainDeps {
  refs: RefStore;
  forge: Forge;
  lease: Lease;
  namespace: string;
  /** The fleet's login: only its own PRs keep a claim. */
  login: string;
  branchPrefix: string;
  /** What the gathers remember of the fleet's PRs (the connection's). */
  memory: GatherMemory;
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
  const issueOf = (pull: PullRequest): number | null =>
    pull.head.repoFullName?.toLowerCase() === repo && sameLogin(pull.author, deps.login) ? parseFleetBranch(pull.head.ref, deps.branchPrefix) : null;
  // One conditional request: which claims have a PR (those are kept) is in the PR list alone.
  const listed = await deps.forge.listOpenPulls();
  // A PR the paged listing missed (one closed on an earlier page moved it) is read on its own:
  // releasing its claim would leave the PR with none.
  const missed = await missedFleetPulls(
    deps.forge,
    deps.memory,
    listed,
    mine.map((c) => c.issue),
    issueOf,
  );
  const proposed = new Set<number>();
  for (const pull of [...listed, ...missed]) {
    const issue = issueOf(pull);
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

/** The fleet a drain works for: its lease, connection, board and voice. */
type DrainingFleet = Pick<FleetRuntime, "registration" | "deps" | "memory" | "board" | "log">;

/**
 * Runs releaseClaimsWithoutPr for a stopping fleet, trying again on a flaky answer, and marks
 * each released claim's board. Returns the claims kept with a PR, or null when GitHub could not
 * be read (they are then reclaimed once the lease lapses).
 */
export async function drainClaims(fleet: DrainingFleet, busy: ReadonlySet<number>, onReleased: (issue: number) => void): Promise<number[] | null> {
  const { conn, lease, namespace } = fleet.deps;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const drained = await releaseClaimsWithoutPr(
        {
          refs: conn.refs,
          forge: conn.forge,
          lease,
          namespace,
          login: conn.login,
          branchPrefix: fleet.registration.config.worktree.branch_prefix,
          memory: conn.gatherMemory,
        },
        busy,
      );
      for (const n of drained.released) {
        onReleased(n);
        fleet.memory.forget(n);
        fleet.log("info", "released", `#${n}: claim released (the project stopped and it has no PR)`, n);
        await releasedBoard(fleet, n, "the fleet stopped before this issue had a PR");
      }
      return drained.kept;
    } catch (error) {
      const next = attempt < 2 ? "trying again" : "giving up: they are reclaimed once the lease lapses";
      fleet.log("warn", "drain_failed", `stop: could not check for claims without a PR (${errorText(error)}); ${next}`, undefined, errorData(error));
    }
  }
  return null;
}

/**
 * Marks the board of a claim let go unfinished as released (best effort: it is a projection),
 * saying where the issue stands: back in the backlog (the default), closed, or taken back by a human.
 */
export async function releasedBoard(fleet: Pick<FleetRuntime, "registration" | "board" | "log">, n: number, note: string, left?: ReleasedLeft): Promise<void> {
  const cfg = fleet.registration.config;
  if (!cfg.board.enabled) return;
  await fleet.board
    .released(n, cfg.retry + 1, note, left)
    .catch((error: unknown) => fleet.log("warn", "board_failed", `#${n}: board not marked released: ${(error as Error).message}`, n));
}
