// GitHub's merge queue, for branches whose rulesets carry a `merge_queue` rule: pull requests
// are enqueued (GraphQL `enqueuePullRequest`), the queue builds a merge group for the entry at
// its front on `refs/heads/gh-readonly-queue/<base>/pr-<n>-<base sha>` (the base tip merged
// with the PR's head), CI reports checks on the group's head, and when the base's required
// checks pass there the base fast-forwards to the group commit and the PR is merged. A group
// that fails a required check, a conflict, a moved head or a closed PR removes the entry with
// a reason (a RemovedFromMergeQueueEvent on the PR's timeline). One group is built at a time.
import { recordActivity } from "./activity.js";
import { ZERO_SHA } from "./bare-git.js";
import { checkOutcomes } from "./checks.js";
import type { ForgeEmulator } from "./core.js";
import { protectionRefusal } from "./merge.js";
import { markMerged, syncPulls } from "./pull-sync.js";
import { mergeQueueFor, requiredChecksFor, type MergeQueueSettings } from "./protection.js";
import { isoNow, type IssueRecord, type QueueEntryRecord, type QueueEventRecord } from "./state.js";

export const GROUP_PREFIX = "refs/heads/gh-readonly-queue/";
const GITHUB_COMMITTER = { name: "GitHub", email: "noreply@github.com" };

function entries(forge: ForgeEmulator): QueueEntryRecord[] {
  return (forge.state.data.mergeQueue ??= []);
}

/** The queue of `base` in order: jumped entries first, then by arrival. */
export function queueOf(forge: ForgeEmulator, base: string): QueueEntryRecord[] {
  return entries(forge)
    .filter((e) => e.base === base)
    .sort((a, b) => Number(b.jump) - Number(a.jump) || a.id - b.id);
}

export function entryOf(forge: ForgeEmulator, pr: number): QueueEntryRecord | undefined {
  return entries(forge).find((e) => e.pr === pr);
}

export function queueEvents(forge: ForgeEmulator, pr: number): QueueEventRecord[] {
  return (forge.state.data.queueEvents ?? []).filter((e) => e.pr === pr);
}

function record(forge: ForgeEmulator, event: Omit<QueueEventRecord, "id" | "at">): void {
  (forge.state.data.queueEvents ??= []).push({ id: forge.state.nextId(), at: isoNow(), ...event });
}

export class QueueRefusal extends Error {}

/**
 * Adds an open PR to its base's queue (the caller holds the write lock). Refused when the base
 * requires no queue, the PR is closed, a draft, not at `expectedHead`, or fails the base's
 * merge requirements (checks on its head, reviews); being up to date is the queue's job. An
 * entry already queued is returned as it is.
 */
export async function enqueue(forge: ForgeEmulator, issue: IssueRecord, by: string, expectedHead: string | null, jump: boolean): Promise<QueueEntryRecord> {
  const pull = issue.pull!;
  const existing = entryOf(forge, issue.number);
  if (existing) return existing;
  if (issue.state !== "open") throw new QueueRefusal("Pull request is closed");
  if (pull.draft) throw new QueueRefusal("Pull request is still a draft");
  if (!mergeQueueFor(forge, pull.base)) throw new QueueRefusal(`Merge queue is not enabled for the base branch ${pull.base}`);
  const head = await forge.git.readRef(`refs/heads/${pull.head}`);
  if (!head) throw new QueueRefusal("Head branch does not exist");
  if (expectedHead !== null && expectedHead !== head)
    throw new QueueRefusal(`Expected head oid ${expectedHead} does not match the pull request's head ${head}`);
  const baseSha = await forge.git.readRef(`refs/heads/${pull.base}`);
  if (!baseSha) throw new QueueRefusal(`Base branch ${pull.base} does not exist`);
  const refusal = await protectionRefusal(forge, { issue, pull }, head, baseSha, { upToDate: false });
  if (refusal) throw new QueueRefusal(`Pull request is not mergeable: ${refusal}`);
  const entry: QueueEntryRecord = {
    id: forge.state.nextId(),
    pr: issue.number,
    base: pull.base,
    headOid: head,
    enqueuedAt: isoNow(),
    enqueuer: by,
    jump,
    groupRef: null,
    groupSha: null,
    groupBase: null,
    groupAt: null,
  };
  entries(forge).push(entry);
  record(forge, { pr: issue.number, kind: "added", actor: by, reason: null, beforeCommit: null });
  forge.state.changed();
  return entry;
}

/** Removes an entry (its group ref too) and records why on the PR's timeline. */
export async function removeEntry(forge: ForgeEmulator, entry: QueueEntryRecord, actor: string, reason: string): Promise<void> {
  await dropGroup(forge, entry);
  forge.state.data.mergeQueue = entries(forge).filter((e) => e !== entry);
  record(forge, { pr: entry.pr, kind: "removed", actor, reason, beforeCommit: entry.groupBase });
  forge.state.changed();
}

async function dropGroup(forge: ForgeEmulator, entry: QueueEntryRecord): Promise<void> {
  if (entry.groupRef && entry.groupSha) await forge.git.casDeleteRef(entry.groupRef, entry.groupSha);
  entry.groupRef = entry.groupSha = entry.groupBase = entry.groupAt = null;
}

/** The entry's state as GitHub names it (MergeQueueEntryState). */
export function entryState(forge: ForgeEmulator, entry: QueueEntryRecord): "QUEUED" | "AWAITING_CHECKS" | "MERGEABLE" | "UNMERGEABLE" {
  if (!entry.groupSha) return "QUEUED";
  const required = requiredChecksFor(forge, entry.base).contexts;
  const outcomes = checkOutcomes(forge, entry.groupSha);
  if (required.some((c) => outcomes.get(c) === "failure")) return "UNMERGEABLE";
  return required.every((c) => outcomes.get(c) === "success") ? "MERGEABLE" : "AWAITING_CHECKS";
}

/** Builds the group of `entry` on `baseTip`; false (and the entry removed) on a conflict. */
async function buildGroup(forge: ForgeEmulator, entry: QueueEntryRecord, baseTip: string, settings: MergeQueueSettings): Promise<boolean> {
  await dropGroup(forge, entry);
  const merged = await forge.mergeTree(baseTip, entry.headOid);
  if (!merged.clean) {
    await removeEntry(forge, entry, "github-merge-queue", `The merge group could not be created: merging ${entry.base} into the pull request conflicts`);
    return false;
  }
  const issue = forge.state.issue(entry.pr)!;
  const parents = settings.mergeMethod === "MERGE" ? [baseTip, entry.headOid] : [baseTip];
  const subject =
    settings.mergeMethod === "MERGE" ? `Merge pull request #${entry.pr} from ${forge.urls.owner}/${issue.pull!.head}` : `${issue.title} (#${entry.pr})`;
  const author = forge.signature(entry.enqueuer);
  // Each build is a new commit (as on GitHub, where a re-queued PR gets a fresh group and fresh checks).
  const commit = await forge.git.commitTree(
    merged.tree,
    parents,
    `${subject}\n\n${issue.title}\n\nMerge queue entry ${entry.id} on ${baseTip.slice(0, 12)}`,
    author,
    { ...GITHUB_COMMITTER, date: author.date },
  );
  const ref = `${GROUP_PREFIX}${entry.base}/pr-${entry.pr}-${baseTip}`;
  if (!(await forge.git.casRef(ref, commit, ZERO_SHA, "merge queue: create merge group")))
    await forge.git.casRef(ref, commit, (await forge.git.readRef(ref)) ?? ZERO_SHA);
  Object.assign(entry, { groupRef: ref, groupSha: commit, groupBase: baseTip, groupAt: Date.now() });
  forge.state.changed();
  return true;
}

/**
 * Moves every queue as far as it can go now (the caller holds the write lock): drops entries
 * whose PR closed or moved, builds the front entry's group on the current base tip, and merges
 * or removes it once its required checks concluded. Cheap when no queue has entries.
 */
export async function advanceQueues(forge: ForgeEmulator): Promise<void> {
  for (const base of new Set(entries(forge).map((e) => e.base))) {
    for (let guard = 0; guard < 100; guard++) {
      if (!(await advanceOne(forge, base))) break;
    }
  }
}

/** One step on `base`'s queue; true when it changed something worth another look. */
async function advanceOne(forge: ForgeEmulator, base: string): Promise<boolean> {
  const entry = queueOf(forge, base)[0];
  const settings = mergeQueueFor(forge, base);
  if (!entry) return false;
  const issue = forge.state.issue(entry.pr);
  if (!settings) {
    await removeEntry(forge, entry, "github-merge-queue", `The base branch ${base} no longer requires a merge queue`);
    return true;
  }
  if (!issue?.pull || issue.state !== "open") {
    await removeEntry(forge, entry, "github-merge-queue", "The pull request was closed");
    return true;
  }
  const head = await forge.git.readRef(`refs/heads/${issue.pull.head}`);
  if (head !== entry.headOid) {
    await removeEntry(forge, entry, "github-merge-queue", "The pull request's head branch was updated");
    return true;
  }
  const baseTip = await forge.git.readRef(`refs/heads/${base}`);
  if (!baseTip) return false;
  if (entry.groupBase !== baseTip) return buildGroup(forge, entry, baseTip, settings);
  const required = requiredChecksFor(forge, base).contexts;
  const outcomes = checkOutcomes(forge, entry.groupSha!);
  const failing = required.filter((c) => outcomes.get(c) === "failure");
  if (failing.length > 0) {
    await removeEntry(forge, entry, "github-merge-queue", `The merge group failed required status checks: ${failing.join(", ")}`);
    return true;
  }
  if (!required.every((c) => outcomes.get(c) === "success")) {
    if (Date.now() - (entry.groupAt ?? Date.now()) <= settings.checkResponseTimeoutMinutes * 60_000) return false;
    await removeEntry(
      forge,
      entry,
      "github-merge-queue",
      `The merge group's required status checks did not report within ${settings.checkResponseTimeoutMinutes} minutes`,
    );
    return true;
  }
  if (!(await forge.git.casRef(`refs/heads/${base}`, entry.groupSha!, baseTip, `merge queue: merge #${entry.pr}`))) return true;
  const enqueuer = forge.state.user(entry.enqueuer);
  await recordActivity(forge, { login: entry.enqueuer, id: enqueuer?.id }, `refs/heads/${base}`, baseTip, entry.groupSha!, "merge_queue_merge");
  const pull = issue.pull;
  pull.headSha = entry.headOid;
  markMerged(forge, issue, pull, { by: entry.enqueuer, mergeCommitSha: entry.groupSha!, baseSha: baseTip });
  await dropGroup(forge, entry);
  forge.state.data.mergeQueue = entries(forge).filter((e) => e !== entry);
  forge.state.data.pushedAt = isoNow();
  forge.state.changed();
  await syncPulls(forge, entry.enqueuer);
  return true;
}

/** After any write: advance the queues if there are any (takes the write lock). */
export function kickQueues(forge: ForgeEmulator): Promise<void> {
  if (entries(forge).length === 0) return Promise.resolve();
  return forge.writeLock.run(() => advanceQueues(forge));
}
