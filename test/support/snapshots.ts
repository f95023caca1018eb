// Builders of snapshot pieces for tests of the core: a ready issue, and one of my claims
// (no PR yet), each with overridable fields.
import type { MineClaim } from "../../server/state/inflight.js";
import type { Snapshot, SnapshotIssue } from "../../server/state/snapshot.js";

export function snapshotIssue(number: number, over: Partial<SnapshotIssue> = {}): SnapshotIssue {
  return {
    number,
    id: 1000 + number,
    title: `issue ${number}`,
    body: "",
    labels: ["ready-for-agent"],
    author: "alice",
    assignees: [],
    milestone: null,
    blockedBy: [],
    subIssues: [],
    parent: null,
    ...over,
  };
}

export function mineClaim(issue: number, over: Partial<MineClaim> = {}): MineClaim {
  return {
    issue,
    sha: `sha${issue}`,
    instance: "me",
    host: "h",
    at: null,
    issueOpen: true,
    status: "no_pr",
    pr: null,
    head: null,
    headRef: null,
    draft: false,
    attempt: 0,
    prAttempt: null,
    failing: [],
    pending: [],
    checksRead: false,
    gate: null,
    otherPulls: [],
    reservedByHuman: false,
    review: null,
    reviewMarks: [],
    ...over,
  };
}

/** A snapshot of acme/widgets with these open issues and nothing else, taken at `now`. */
export function issuesSnapshot(issues: SnapshotIssue[], now: Date): Snapshot {
  return {
    repo: "acme/widgets",
    login: "afk-bot",
    defaultBranch: "main",
    base: "main",
    takenAt: now.toISOString(),
    issues,
    pulls: [],
    claims: [],
    heartbeats: [],
    requiredChecks: { contexts: [], strict: false, source: "none", readable: true },
  };
}
