// One place gathers everything a tick observes, with the fewest requests: the open issues and
// PRs (paginated, each page conditional so an unchanged page answers 304 at no rate-limit
// cost), dependency and sub-issue links only for issues whose summaries say they have some,
// checks only on the heads of the fleet's own PRs, the base's required checks (and required
// approvals: then the reviews of the fleet's own PRs), and the claim and heartbeat refs in one
// git fetch (which costs no REST rate limit at all).
import type { Forge, Issue, IssueLink, PullRequest } from "./forge.js";
import { ForgeError } from "./errors.js";
import type { RefStore } from "./refstore.js";
import type { ClaimRef, LandedPull, Snapshot, SnapshotIssue, SnapshotPull } from "../state/snapshot.js";
import { parseNamespace } from "../state/claims.js";
import { parseFleetBranch, sameLogin } from "../state/markers.js";

export interface GatherOptions {
  /** The fleet's own login (markers and assignments are read relative to it). */
  login: string;
  defaultBranch: string;
  base: string;
  namespace: string;
  /** "required": read checks on the fleet's PR heads; "local": checks are never read. */
  gateMode: "required" | "local";
  /** `worktree.branch_prefix`: the fleet's own PRs are the ones on these branches. */
  branchPrefix?: string;
  /** The review stage is on: read the fleet's PRs' reviews (its rounds are markers there). */
  reviews?: boolean;
  /** Claimed issues whose closing the fleet expects (their PR merged): not read one by one when unlisted. */
  expectClosed?: ReadonlySet<number>;
  /** This fleet's instance: a PR of its claims the listing missed is read on its own (see missedFleetPulls). */
  instance?: string;
  /** What the gathers of this forge client remember between them (its connection keeps it). */
  memory: GatherMemory;
  now: Date;
}

type Links = [IssueLink[], IssueLink[]];

/**
 * What the gather remembers between reads of one forge client; its owner (the repository's
 * connection) keeps it and hands it to every gather.
 */
export class GatherMemory {
  /**
   * The fleet's open PRs as last listed: issue → PR number; null until the first listing. The
   * open-PR listing is paged like the issues': a PR merged or closed on a page already read, while
   * a later page is read, moves an open PR across the page boundary unseen. A claim whose PR is
   * missing would look like one with no PR: a stop would release it (leaving its PR with no
   * claim), and a tick would start a worker to continue work that is already proposed, pushing to
   * a head being gated.
   */
  fleetPulls: Map<number, number> | null = null;
  /**
   * An issue's dependency and sub-issue links as last read, keyed by what the listing says of
   * them. Those lists hold whole issues, so any change to a blocker or sub-issue (a comment, a
   * label, a board) changes their ETag and costs a 200; what the snapshot takes from them (which
   * issues, and whether a blocker is open) changes only with the listed summaries or the issue's
   * own update time (a link added or removed), so the lists are read again only then.
   */
  readonly links = new Map<number, { key: string; readAt: number; links: Promise<Links> }>();

  /** The fleet closed this PR itself (a retry): its absence from the next listing needs no read. */
  forgetFleetPull(number: number): void {
    if (!this.fleetPulls) return;
    for (const [issue, pr] of this.fleetPulls) if (pr === number) this.fleetPulls.delete(issue);
  }
}

export async function gatherSnapshot(forge: Forge, refs: RefStore, options: GatherOptions): Promise<Snapshot> {
  const repo = `${forge.repo.owner}/${forge.repo.name}`;
  // The tick's requests, all conditional (a 304 costs no rate limit): the two lists are the whole
  // picture of the backlog and its PRs, paid for only when something in them changed; the claims
  // are git refs (no API request); the rules and protection change almost never.
  const [issues, pulls, entries, requiredChecks] = await Promise.all([
    forge.listOpenIssues(),
    forge.listOpenPulls(),
    refs.list(`${options.namespace}/`),
    // Read under a local gate too: required approvals hold a PR whatever gates it.
    forge.requiredChecks(options.base),
  ]);
  const readReviews = options.reviews === true || (requiredChecks.approvals ?? 0) > 0;
  const { claims, heartbeats } = parseNamespace(options.namespace, entries);
  issues.push(...(await claimedButUnlisted(forge, issues, claims, options.expectClosed)));
  const fleetIssueOf = fleetIssueResolver(repo, options.base, options.branchPrefix);
  let landed: LandedPull[] = [];
  if (options.instance !== undefined) {
    const open = new Set(issues.map((issue) => issue.number));
    // A claim waiting for GitHub to close its issue has its PR merged: missing from the list, as expected.
    const ours = claims.filter((c) => c.instance === options.instance && open.has(c.issue) && !options.expectClosed?.has(c.issue));
    const fresh = options.memory.fleetPulls === null;
    pulls.push(
      ...(await missedFleetPulls(
        forge,
        options.memory,
        pulls,
        ours.map((c) => c.issue),
        fleetIssueOf,
      )),
    );
    if (fresh) {
      const covered = new Set(pulls.map(fleetIssueOf));
      landed = await landedPulls(
        forge,
        ours.filter((c) => !covered.has(c.issue)),
        fleetIssueOf,
        options.login,
      );
    }
    rememberFleetPulls(options.memory, pulls, fleetIssueOf);
  }

  const snapIssues = await Promise.all(issues.map((issue) => snapshotIssue(forge, options.memory, issue)));
  forgetClosedLinks(options.memory, issues);
  const snapPulls = await Promise.all(
    pulls.map(async (pull) => {
      const snap = snapshotPull(pull);
      if (isFleetPull(pull, repo, options.base, options.branchPrefix)) {
        // Conditional requests per fleet PR: its head's checks (the gate; a 200 only when CI
        // reported something new on it) and its reviews (only when approvals or the review stage need them).
        const [checks, reviews] = await Promise.all([
          options.gateMode === "required" ? forge.checksFor(pull.head.sha, requiredChecks) : undefined,
          readReviews ? forge.listReviews(pull.number) : undefined,
        ]);
        if (checks) snap.checks = checks;
        if (reviews) snap.reviews = reviews;
      }
      return snap;
    }),
  );

  // Blockers named natively come with their state; a closed one is known closed.
  const knownClosed = new Set<number>();
  for (const issue of snapIssues) {
    for (const link of issue.blockedBy) if (link.state === "closed") knownClosed.add(link.number);
  }

  return {
    repo,
    login: options.login,
    defaultBranch: options.defaultBranch,
    base: options.base,
    takenAt: options.now.toISOString(),
    issues: snapIssues,
    pulls: snapPulls,
    claims,
    heartbeats,
    requiredChecks,
    knownClosed: [...knownClosed].sort((a, b) => a - b),
    ...(landed.length > 0 ? { landed } : {}),
  };
}

/**
 * A claim on an open issue that no open PR carries may be a landing a crash kept from its wrap-up
 * (the base moved; the issue not yet closed, the claim not released): a restart's own claims (its
 * first gather), a dead peer's stale one (its reclaim). Taken for a claim with no PR, it would send
 * a worker to redo landed work. One read of the most recently updated closed PRs (the merge came
 * just before the crash) finds the fleet's PR for such a claim that merged after the claim was
 * taken (a reopened issue's earlier PR merged before its new claim, and is not counted). One
 * request per call with such claims; none without.
 */
/** GitHub's times have whole seconds, and the claim's is the claiming host's clock: a merge this much "before" its claim still counts. */
const MERGE_CLAIM_SKEW_MS = 10_000;

export async function landedPulls(
  forge: Forge,
  bareClaims: ReadonlyArray<Pick<ClaimRef, "issue" | "at">>,
  issueOf: (pull: PullRequest) => number | null,
  login: string,
): Promise<LandedPull[]> {
  const bare = new Map(bareClaims.filter((c) => c.at !== null).map((c) => [c.issue, Date.parse(c.at!)]));
  if (bare.size === 0) return [];
  const landed = new Map<number, LandedPull>();
  // One request (a page of closed PRs), made only for claims no open PR carries: after a crash.
  for (const pull of await forge.listRecentlyClosedPulls()) {
    const issue = issueOf(pull);
    const claimedAt = issue === null ? undefined : bare.get(issue);
    if (issue === null || claimedAt === undefined || pull.mergedAt === null || !sameLogin(pull.author, login)) continue;
    if (Date.parse(pull.mergedAt) + MERGE_CLAIM_SKEW_MS < claimedAt || landed.has(issue)) continue;
    landed.set(issue, { issue, pr: pull.number, mergedAt: pull.mergedAt, head: { ref: pull.head.ref, sha: pull.head.sha } });
  }
  return [...landed.values()].sort((a, b) => a.issue - b.issue);
}

/**
 * Claimed issues the open listing lacks, read one by one; those still open are returned. The
 * listing is paged: an item closed (or a PR merged: GitHub lists PRs among issues) on a page
 * already read, while a later page is read, moves an open issue across the page boundary unseen,
 * and a claim on it would be released as "the issue is closed" and its PR left without a claim
 * (seen in the chaos run's two-host drain). Costs one request per claim on an issue that really
 * closed, once: its claim is released in the same tick. A deleted or transferred issue is closed.
 */
async function claimedButUnlisted(
  forge: Forge,
  listed: readonly Issue[],
  claims: readonly { issue: number }[],
  expectClosed?: ReadonlySet<number>,
): Promise<Issue[]> {
  const seen = new Set(listed.map((issue) => issue.number));
  const missing = [...new Set(claims.map((c) => c.issue))].filter((n) => !seen.has(n) && !expectClosed?.has(n));
  // One request per claimed issue the listing lacks (see above), usually none.
  const read = await Promise.all(
    missing.map((n) =>
      forge.getIssue(n).catch((error: unknown) => {
        if (error instanceof ForgeError && (error.kind === "not_found" || error.status === 410)) return null;
        throw error;
      }),
    ),
  );
  return read.filter((issue): issue is Issue => issue !== null && issue.state === "open");
}

function rememberFleetPulls(memory: GatherMemory, pulls: readonly PullRequest[], issueOf: (pull: PullRequest) => number | null): void {
  const memo = new Map<number, number>();
  for (const pull of pulls) {
    const issue = issueOf(pull);
    if (issue !== null && pull.number > (memo.get(issue) ?? 0)) memo.set(issue, pull.number);
  }
  memory.fleetPulls = memo;
}

/**
 * The fleet's PRs for `claimed` issues that the last listing had and this one lacks, read one by
 * one; those still open (and still the fleet's for the same issue) are returned. Costs one request
 * per such PR that really closed while its issue stayed claimed and open (a human closed it), once:
 * the memo forgets it with the listing. A PR merged by a landing is not read again (its issue
 * closes and its claim is released), nor one a retry closed (`forgetFleetPull`).
 */
export async function missedFleetPulls(
  forge: Forge,
  memory: GatherMemory,
  listed: readonly PullRequest[],
  claimed: readonly number[],
  issueOf: (pull: PullRequest) => number | null,
): Promise<PullRequest[]> {
  const memo = memory.fleetPulls;
  const covered = new Set(listed.map(issueOf).filter((n): n is number => n !== null));
  if (!memo) return relisted(forge, listed, claimed, issueOf, covered);
  if (memo.size === 0) return [];
  const numbers = new Set(listed.map((p) => p.number));
  const missing = [...new Set(claimed)]
    .filter((n) => !covered.has(n) && memo.has(n) && !numbers.has(memo.get(n)!))
    .map((n) => ({ issue: n, pr: memo.get(n)! }));
  // One request per PR the listing lacks (see above): without it a claim would look PR-less and be released.
  const read = await Promise.all(
    missing.map(({ pr }) =>
      forge.getPull(pr).catch((error: unknown) => {
        if (error instanceof ForgeError && (error.kind === "not_found" || error.status === 410)) return null;
        throw error;
      }),
    ),
  );
  return read
    .filter((pull, i): pull is NonNullable<typeof pull> => pull !== null && pull.state === "open" && !pull.merged && issueOf(pull) === missing[i]!.issue)
    .map(pullOnly);
}

/**
 * A fresh process (a restart that recognises its instance) remembers no PRs, so its first listing
 * has nothing to be checked against: a claim of ours shown without a PR may be one whose PR the
 * race hid, and taking it for a claim with no PR would start a worker pushing to a head under gate
 * (or, at a stop, release it). Then the listing is read once more: its pages are conditional, so
 * each unchanged page answers 304 at no rate-limit cost, and the page a merge changed is read anew,
 * after that merge, with the hidden PR on it. The fleet's PRs for such claims it adds are returned.
 */
async function relisted(
  forge: Forge,
  listed: readonly PullRequest[],
  claimed: readonly number[],
  issueOf: (pull: PullRequest) => number | null,
  covered: ReadonlySet<number>,
): Promise<PullRequest[]> {
  const bare = new Set(claimed.filter((n) => !covered.has(n)));
  if (bare.size === 0) return [];
  const numbers = new Set(listed.map((p) => p.number));
  // Once per process: its unchanged pages' requests answer 304, free of rate limit.
  return (await forge.listOpenPulls()).filter((pull) => {
    const issue = issueOf(pull);
    return issue !== null && bare.has(issue) && !numbers.has(pull.number);
  });
}

/** A PR's listing fields alone (a single read carries mergeability too, which a listing lacks). */
function pullOnly(pull: PullRequest): PullRequest {
  const { number, title, body, state, draft, merged, author, head, base, htmlUrl, updatedAt } = pull;
  return { number, title, body, state, draft, merged, author, head, base, htmlUrl, updatedAt };
}

/**
 * GitHub's update times have whole seconds: a link changed in the second of an earlier read keeps
 * the same time, so a read that close to the update (or closer than clocks may disagree) is not
 * trusted, and the next gather reads the lists again.
 */
const LINK_SETTLE_MS = 5_000;

function issueLinks(forge: Forge, memory: GatherMemory, issue: Issue): Promise<Links> {
  if (issue.blockedByCount === 0 && issue.subIssueCount === 0) return Promise.resolve([[], []]);
  const memo = memory.links;
  const key = `${issue.updatedAt} ${issue.blockedByCount} ${issue.subIssueCount}`;
  const known = memo.get(issue.number);
  if (known?.key === key && known.readAt - Date.parse(issue.updatedAt) >= LINK_SETTLE_MS) return known.links;
  // Two conditional requests at most, and only for an issue that has links and changed since.
  const links = Promise.all([
    issue.blockedByCount > 0 ? forge.listBlockedBy(issue.number) : Promise.resolve([]),
    issue.subIssueCount > 0 ? forge.listSubIssues(issue.number) : Promise.resolve([]),
  ]);
  memo.set(issue.number, { key, readAt: Date.now(), links });
  links.catch(() => memo.delete(issue.number)); // a failure is not remembered
  return links;
}

function forgetClosedLinks(memory: GatherMemory, open: readonly Issue[]): void {
  const memo = memory.links;
  if (memo.size === 0) return;
  const listed = new Set(open.map((issue) => issue.number));
  for (const number of memo.keys()) if (!listed.has(number)) memo.delete(number);
}

async function snapshotIssue(forge: Forge, memory: GatherMemory, issue: Issue): Promise<SnapshotIssue> {
  const [blockedBy, subIssues] = await issueLinks(forge, memory, issue);
  return {
    number: issue.number,
    id: issue.id,
    title: issue.title,
    body: issue.body,
    labels: issue.labels,
    author: issue.author,
    assignees: issue.assignees,
    milestone: issue.milestone,
    blockedBy,
    subIssues: subIssues.map((s) => s.number),
    subIssueCount: issue.subIssueCount,
    ...(issue.subIssuesCompleted !== undefined ? { subIssuesCompleted: issue.subIssuesCompleted } : {}),
    parent: issue.parent,
    updatedAt: issue.updatedAt,
    ...(issue.comments !== undefined ? { comments: issue.comments } : {}),
  };
}

function snapshotPull(pull: PullRequest): SnapshotPull {
  return {
    number: pull.number,
    title: pull.title,
    body: pull.body,
    author: pull.author,
    draft: pull.draft,
    head: pull.head,
    baseRef: pull.base.ref,
    updatedAt: pull.updatedAt,
  };
}

/** The fleet reads checks only for its own PRs: same repository, a fleet branch, our base. */
/** The issue a PR works on when it is one of the fleet's (see isFleetPull), else null. */
export function fleetIssueResolver(repo: string, base: string, branchPrefix?: string): (pull: PullRequest) => number | null {
  return (pull) => (isFleetPull(pull, repo, base, branchPrefix) ? parseFleetBranch(pull.head.ref, branchPrefix) : null);
}

export function isFleetPull(pull: PullRequest, repo: string, base: string, branchPrefix?: string): boolean {
  return (
    pull.head.repoFullName !== null &&
    pull.head.repoFullName.toLowerCase() === repo.toLowerCase() &&
    parseFleetBranch(pull.head.ref, branchPrefix) !== null &&
    pull.base.ref === base
  );
}
