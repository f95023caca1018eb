// Everything the forge knows besides git objects and refs: users, labels, issues (pull
// requests are issues with a `pull` part, sharing one number sequence as on GitHub),
// comments, checks, statuses, protection and rulesets. `PersistedState` is what lands on
// disk; `ForgeState` wraps it with the indices that keep lookups O(1).

import type { ActionsData } from "./actions-types.js";

export const STATE_VERSION = 1;

export type {
  UserRecord,
  LabelRecord,
  PullRecord,
  IssueRecord,
  CommentRecord,
  CheckRunRecord,
  StatusRecord,
  RequiredCheck,
  RequiredReviews,
  ProtectionRecord,
  ReviewState,
  ReviewRecord,
  ReviewCommentRecord,
  RuleRecord,
  RulesetRecord,
  QueueEntryRecord,
  QueueEventRecord,
  ActivityType,
  ActivityRecord,
} from "./records.js";
import type {
  ActivityRecord,
  UserRecord,
  LabelRecord,
  IssueRecord,
  CommentRecord,
  CheckRunRecord,
  StatusRecord,
  ProtectionRecord,
  ReviewRecord,
  ReviewCommentRecord,
  RulesetRecord,
  QueueEntryRecord,
  QueueEventRecord,
} from "./records.js";

export interface PersistedState {
  version: number;
  repo: string;
  defaultBranch: string;
  createdAt: string;
  pushedAt: string;
  nextNumber: number;
  nextId: number;
  users: UserRecord[];
  labels: LabelRecord[];
  issues: IssueRecord[];
  comments: CommentRecord[];
  checkRuns: CheckRunRecord[];
  statuses: StatusRecord[];
  protections: ProtectionRecord[];
  rulesets: RulesetRecord[];
  /** Absent in state files written before reviews existed. */
  reviews?: ReviewRecord[];
  reviewComments?: ReviewCommentRecord[];
  /** Absent in state files written before merge queues existed. */
  mergeQueue?: QueueEntryRecord[];
  queueEvents?: QueueEventRecord[];
  /** Absent in state files written before the Actions subset existed. */
  actions?: ActionsData;
  /** Ref updates for `GET /activity`, oldest first, the newest 5,000 kept. Absent in older state files. */
  activity?: ActivityRecord[];
}

/** GitHub's timestamps: ISO 8601 in UTC, seconds precision. */
export function isoNow(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function emptyState(repo: string, defaultBranch: string): PersistedState {
  const now = isoNow();
  return {
    version: STATE_VERSION,
    repo,
    defaultBranch,
    createdAt: now,
    pushedAt: now,
    nextNumber: 1,
    // Ids start far from issue numbers so that code mixing the two up fails loudly.
    nextId: 1_000_001,
    users: [],
    labels: [],
    issues: [],
    comments: [],
    checkRuns: [],
    statuses: [],
    protections: [],
    rulesets: [],
    reviews: [],
  };
}

export class ForgeState {
  private readonly issuesByNumber = new Map<number, IssueRecord>();
  private readonly issuesById = new Map<number, IssueRecord>();
  private readonly labelsByKey = new Map<string, LabelRecord>();
  private readonly usersByLogin = new Map<string, UserRecord>();
  private readonly usersByToken = new Map<string, UserRecord>();
  private readonly commentsById = new Map<number, CommentRecord>();
  private readonly commentsByIssue = new Map<number, CommentRecord[]>();
  private readonly checkRunsById = new Map<number, CheckRunRecord>();
  private readonly checkRunsBySha = new Map<string, CheckRunRecord[]>();
  private readonly statusesBySha = new Map<string, StatusRecord[]>();
  /** Bumped on every change: cheap cache keys for derived data. */
  revision = 0;

  constructor(
    readonly data: PersistedState,
    private readonly onChange: () => void = () => {},
  ) {
    for (const u of data.users) this.indexUser(u);
    for (const l of data.labels) this.labelsByKey.set(l.name.toLowerCase(), l);
    for (const i of data.issues) {
      this.issuesByNumber.set(i.number, i);
      this.issuesById.set(i.id, i);
    }
    for (const c of data.comments) this.indexComment(c);
    for (const r of data.checkRuns) this.indexCheckRun(r);
    for (const s of data.statuses) pushTo(this.statusesBySha, s.sha, s);
  }

  /** Records that something changed: persisted soon (coalesced), caches invalidated. */
  changed(): void {
    this.revision++;
    this.onChange();
  }

  nextId(): number {
    return this.data.nextId++;
  }

  // Users

  users(): readonly UserRecord[] {
    return this.data.users;
  }

  user(login: string): UserRecord | undefined {
    return this.usersByLogin.get(login.toLowerCase());
  }

  userByToken(token: string): UserRecord | undefined {
    return this.usersByToken.get(token);
  }

  addUser(user: UserRecord): void {
    this.data.users.push(user);
    this.indexUser(user);
    this.changed();
  }

  /** Adds the user, or replaces the one with its login (another repository of one forge shares its record). */
  putUser(user: UserRecord): void {
    const at = this.data.users.findIndex((u) => u.login.toLowerCase() === user.login.toLowerCase());
    if (at < 0) return this.addUser(user);
    this.usersByToken.delete(this.data.users[at]!.token);
    this.data.users[at] = user;
    this.indexUser(user);
    this.changed();
  }

  private indexUser(u: UserRecord): void {
    this.usersByLogin.set(u.login.toLowerCase(), u);
    this.usersByToken.set(u.token, u);
  }

  // Labels (names compare case-insensitively, as on GitHub)

  labels(): readonly LabelRecord[] {
    return this.data.labels;
  }

  label(name: string): LabelRecord | undefined {
    return this.labelsByKey.get(name.toLowerCase());
  }

  addLabel(label: LabelRecord): void {
    this.data.labels.push(label);
    this.labelsByKey.set(label.name.toLowerCase(), label);
    this.changed();
  }

  renameLabel(label: LabelRecord, newName: string): void {
    const oldKey = label.name.toLowerCase();
    this.labelsByKey.delete(oldKey);
    for (const issue of this.data.issues) {
      issue.labels = issue.labels.map((n) => (n.toLowerCase() === oldKey ? newName : n));
    }
    label.name = newName;
    this.labelsByKey.set(newName.toLowerCase(), label);
    this.changed();
  }

  deleteLabel(label: LabelRecord): void {
    const key = label.name.toLowerCase();
    this.labelsByKey.delete(key);
    this.data.labels = this.data.labels.filter((l) => l !== label);
    for (const issue of this.data.issues) issue.labels = issue.labels.filter((n) => n.toLowerCase() !== key);
    this.changed();
  }

  // Issues and pull requests

  issues(): readonly IssueRecord[] {
    return this.data.issues;
  }

  issue(number: number): IssueRecord | undefined {
    return this.issuesByNumber.get(number);
  }

  issueById(id: number): IssueRecord | undefined {
    return this.issuesById.get(id);
  }

  addIssue(issue: IssueRecord): void {
    this.data.issues.push(issue);
    this.issuesByNumber.set(issue.number, issue);
    this.issuesById.set(issue.id, issue);
    this.changed();
  }

  allocNumber(): number {
    return this.data.nextNumber++;
  }

  // Comments

  comment(id: number): CommentRecord | undefined {
    return this.commentsById.get(id);
  }

  commentsFor(issue: number): readonly CommentRecord[] {
    return this.commentsByIssue.get(issue) ?? [];
  }

  allComments(): readonly CommentRecord[] {
    return this.data.comments;
  }

  addComment(c: CommentRecord): void {
    this.data.comments.push(c);
    this.indexComment(c);
    this.changed();
  }

  deleteComment(c: CommentRecord): void {
    this.data.comments = this.data.comments.filter((x) => x !== c);
    this.commentsById.delete(c.id);
    const list = this.commentsByIssue.get(c.issue);
    if (list)
      this.commentsByIssue.set(
        c.issue,
        list.filter((x) => x !== c),
      );
    this.changed();
  }

  private indexComment(c: CommentRecord): void {
    this.commentsById.set(c.id, c);
    pushTo(this.commentsByIssue, c.issue, c);
  }

  // Checks and statuses

  checkRun(id: number): CheckRunRecord | undefined {
    return this.checkRunsById.get(id);
  }

  checkRunsFor(sha: string): readonly CheckRunRecord[] {
    return this.checkRunsBySha.get(sha) ?? [];
  }

  addCheckRun(r: CheckRunRecord): void {
    this.data.checkRuns.push(r);
    this.indexCheckRun(r);
    this.changed();
  }

  private indexCheckRun(r: CheckRunRecord): void {
    this.checkRunsById.set(r.id, r);
    pushTo(this.checkRunsBySha, r.headSha, r);
  }

  statusesFor(sha: string): readonly StatusRecord[] {
    return this.statusesBySha.get(sha) ?? [];
  }

  addStatus(s: StatusRecord): void {
    this.data.statuses.push(s);
    pushTo(this.statusesBySha, s.sha, s);
    this.changed();
  }

  // Protection and rulesets

  protection(branch: string): ProtectionRecord | undefined {
    return this.data.protections.find((p) => p.branch === branch);
  }

  setProtection(p: ProtectionRecord): void {
    this.data.protections = this.data.protections.filter((x) => x.branch !== p.branch).concat(p);
    this.changed();
  }

  deleteProtection(branch: string): void {
    this.data.protections = this.data.protections.filter((x) => x.branch !== branch);
    this.changed();
  }

  rulesets(): readonly RulesetRecord[] {
    return this.data.rulesets;
  }

  addRuleset(r: RulesetRecord): void {
    this.data.rulesets.push(r);
    this.changed();
  }

  // Pull request reviews

  reviewsFor(pull: number): readonly ReviewRecord[] {
    return (this.data.reviews ?? []).filter((r) => r.pull === pull);
  }

  addReview(r: ReviewRecord): void {
    (this.data.reviews ??= []).push(r);
    this.changed();
  }

  reviewCommentsFor = (pull: number): readonly ReviewCommentRecord[] => (this.data.reviewComments ?? []).filter((c) => c.pull === pull);
  addReviewComment(c: ReviewCommentRecord): void {
    (this.data.reviewComments ??= []).push(c);
    this.changed();
  }
}

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
