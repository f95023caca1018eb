// Only our own work lands (docs/architecture.md, invariant 3): the PR must be open, from a
// fleet branch naming this issue in this very repository, opened by the fleet's login, against
// our base; and every write is fenced by the claim's sha, so a zombie lands nothing.
import type { Forge, PullRequest } from "../gh/forge.js";
import { FencedError } from "../state/claims.js";
import { parseFleetBranch, sameLogin } from "../state/markers.js";
import type { LandingContext, LandInput } from "./land-types.js";

/**
 * The PR as GitHub has it now, through the open-PR list: a conditional read, free (304) when
 * no PR changed since this tick's snapshot listed them, where reading the PR itself costs a
 * request every time. A PR missing from the list is read by number, to say why (merged, closed).
 * The head's freshness does not rest on this read: git fetches the branch tip under the lock,
 * and the merge names the gated sha.
 */
export async function readPull(forge: Forge, number: number): Promise<PullRequest> {
  const listed = (await forge.listOpenPulls()).find((p) => p.number === number);
  return listed ?? (await forge.getPull(number));
}

/** Why a PR is not ours to land, or null when it is. */
export function notOurs(
  ctx: Pick<LandingContext, "forge" | "login" | "base" | "config">,
  input: Pick<LandInput, "issue" | "pr">,
  pull: PullRequest,
): string | null {
  const repo = `${ctx.forge.repo.owner}/${ctx.forge.repo.name}`;
  const prefix = ctx.config.worktree.branch_prefix;
  if (pull.merged) return `PR #${input.pr} is already merged`;
  if (pull.state !== "open") return `PR #${input.pr} is closed`;
  if (pull.head.repoFullName === null || pull.head.repoFullName.toLowerCase() !== repo.toLowerCase()) {
    return `PR #${input.pr} comes from another repository (${pull.head.repoFullName ?? "a deleted fork"}), not ${repo}: fork PRs are never landed by the fleet`;
  }
  if (parseFleetBranch(pull.head.ref, prefix) !== input.issue) {
    return `PR #${input.pr}'s branch ${JSON.stringify(pull.head.ref)} is not a fleet branch for #${input.issue} (expected ${prefix}${input.issue}-...)`;
  }
  if (!sameLogin(pull.author, ctx.login)) {
    return `PR #${input.pr} was opened by ${pull.author}, not by the fleet's login ${ctx.login}`;
  }
  if (pull.base.ref !== ctx.base) return `PR #${input.pr} targets ${pull.base.ref}, not the fleet's base ${ctx.base}`;
  return null;
}

/** Why the claim is no longer ours (taken over, deleted), or null while it is. */
export async function lostClaim(ctx: Pick<LandingContext, "lease">, input: Pick<LandInput, "issue" | "claimSha">): Promise<string | null> {
  try {
    await ctx.lease.fence(input.issue, input.claimSha);
    return null;
  } catch (error) {
    if (error instanceof FencedError) return error.message;
    throw error;
  }
}

/** Of several green PRs, those that may land now (with their branch), and why each other may not. */
export interface Screened {
  riders: Array<{ member: LandInput; branch: string }>;
  refused: Array<{ outcome: "not_ours" | "fenced" | "retry_later"; member: LandInput; why: string }>;
}

/** Only our own open, undrafted PRs at their gated heads, under claims still ours, land. */
export async function screenPulls(ctx: LandingContext, members: readonly LandInput[]): Promise<Screened> {
  // One conditional request for all members (see readPull); a member missing from it, one more.
  const open = new Map((await ctx.forge.listOpenPulls()).map((p) => [p.number, p]));
  const screened: Screened = { riders: [], refused: [] };
  for (const member of members) {
    const pull = open.get(member.pr) ?? (await ctx.forge.getPull(member.pr));
    const foreign = notOurs(ctx, member, pull);
    const lost = foreign === null ? await lostClaim(ctx, member) : null;
    if (foreign !== null) screened.refused.push({ outcome: "not_ours", member, why: foreign });
    else if (lost !== null) screened.refused.push({ outcome: "fenced", member, why: lost });
    else if (pull.draft) screened.refused.push({ outcome: "retry_later", member, why: `PR #${member.pr} is a draft` });
    else if (pull.head.sha !== member.head)
      screened.refused.push({ outcome: "retry_later", member, why: `PR #${member.pr}'s head moved to ${pull.head.sha.slice(0, 12)} since it was gated` });
    else {
      const vetoed = await vetoOf(ctx, member, pull.head.ref);
      if (vetoed !== null) screened.refused.push({ outcome: "retry_later", member, why: vetoed });
      else screened.riders.push({ member, branch: pull.head.ref });
    }
  }
  return screened;
}

/** The worker runtime's word on who pushed the head (LandingContext.vetHead): why it may not land, or null. */
export async function vetoOf(ctx: Pick<LandingContext, "vetHead">, input: LandInput, branch: string): Promise<string | null> {
  return ctx.vetHead ? ctx.vetHead({ issue: input.issue, pr: input.pr, branch, head: input.head }) : null;
}
