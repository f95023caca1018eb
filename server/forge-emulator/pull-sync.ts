// What GitHub does after a ref moves: an open pull request's head follows its branch, and
// a pull request whose head became reachable from its base (someone pushed the commits to
// the base branch) is marked merged, closing the issues it names if the base is the
// default branch. Deleting a head branch closes nothing. Callers hold the write lock.
import type { ForgeEmulator } from "./core.js";
import { closeIssue } from "./issues.js";
import { closingReferences } from "./keywords.js";
import { pullRequestEvent } from "./actions-events.js";
import { isoNow, type IssueRecord, type PullRecord } from "./state.js";

export interface MergeFacts {
  by: string;
  mergeCommitSha: string;
  baseSha: string;
}

/** Records a merge and applies its consequences (closing keywords on the default branch). */
export function markMerged(forge: ForgeEmulator, issue: IssueRecord, pull: PullRecord, facts: MergeFacts): void {
  const now = isoNow();
  pull.merged = true;
  pull.mergedAt = now;
  pull.mergedBy = facts.by;
  pull.mergeCommitSha = facts.mergeCommitSha;
  pull.baseSha = facts.baseSha;
  closeIssue(forge, issue, facts.by, "completed");
  if (pull.base === forge.defaultBranch) {
    const text = `${issue.title}\n${issue.body ?? ""}`;
    for (const n of closingReferences(text, forge.urls.fullName)) {
      const target = forge.state.issue(n);
      if (target && !target.pull && target.state === "open") closeIssue(forge, target, facts.by, "completed");
    }
  }
  forge.state.changed();
}

function openPulls(forge: ForgeEmulator): IssueRecord[] {
  return forge.state.issues().filter((i) => i.pull !== null && i.state === "open");
}

/** The facts a sync looks at: each open PR with the tips of its head and base branches. */
function fingerprint(open: IssueRecord[], tips: Map<string, string>): string {
  return open.map((i) => `${i.number}:${i.pull!.base}=${tips.get(i.pull!.base)}:${i.pull!.head}=${tips.get(i.pull!.head)}`).join(",");
}

/**
 * For readers: if branches moved outside the forge's sight (a push straight into the bare
 * repository on disk, or a restart), catch up before answering about pull requests.
 */
export async function syncPullsIfStale(forge: ForgeEmulator, tips: Map<string, string>): Promise<boolean> {
  const open = openPulls(forge);
  if (open.length === 0 || fingerprint(open, tips) === forge.lastPullSync) return false;
  await forge.writeLock.run(() => syncPulls(forge, forge.urls.owner));
  return true;
}

export async function syncPulls(forge: ForgeEmulator, by: string): Promise<void> {
  const open = openPulls(forge);
  if (open.length === 0) return;
  const tips = await forge.git.branchTips();
  let changed = false;
  const moved: IssueRecord[] = [];
  for (const issue of open) {
    const pull = issue.pull!;
    const tip = tips.get(pull.head);
    if (tip && tip !== pull.headSha) {
      pull.headSha = tip;
      issue.updatedAt = isoNow();
      changed = true;
      moved.push(issue);
    }
  }
  // A head that moved is a `synchronize` event: its pull_request workflows run on the new head
  // (a PR that turns out merged below gets its runs all the same, as on GitHub).
  for (const issue of moved) await pullRequestEvent(forge, issue, "synchronize");
  // Nothing relevant moved since the last check (e.g. a push of claim refs only): done.
  const seen = fingerprint(open, tips);
  if (seen === forge.lastPullSync) {
    if (changed) forge.state.changed();
    return;
  }
  forge.lastPullSync = seen;
  // One `for-each-ref --merged` per base branch answers "is the head in the base?" for all PRs.
  const bases = new Set(open.map((i) => i.pull!.base));
  for (const base of bases) {
    const baseTip = tips.get(base);
    if (!baseTip) continue;
    const merged = await forge.git.branchesMergedInto(baseTip);
    for (const issue of open) {
      const pull = issue.pull!;
      if (pull.base !== base || pull.head === base) continue;
      if (tips.get(pull.head) === pull.headSha && merged.has(pull.head)) {
        markMerged(forge, issue, pull, { by, mergeCommitSha: pull.headSha, baseSha: baseTip });
      }
    }
  }
  if (changed) forge.state.changed();
}
