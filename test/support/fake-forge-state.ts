// What the fake forge holds (issues and pull requests in one number space, labels, comments, check
// runs and statuses, protection, reviews), and the test's hands on it: what a test would do
// through the local forge's REST or git (open an issue, push a branch, post a check) without the
// Forge interface, which has no such calls. test/support/fake-forge.ts serves the Forge port from it.
import type { CheckRun, CommitStatus, Comment, Label, PullReview, RequiredChecks, ReviewComment } from "../../server/gh/forge.js";
import { FakeRepo } from "./fake-git.js";

export interface FakePull {
  head: string;
  base: string;
  draft: boolean;
  merged: boolean;
  mergedAt: string | null;
  mergeCommitSha: string | null;
  /** The head and base as last seen (a closed PR keeps the head it had). */
  headSha: string;
  baseSha: string;
}

export interface FakeIssue {
  number: number;
  id: number;
  title: string;
  body: string;
  state: "open" | "closed";
  stateReason: string | null;
  labels: string[];
  author: string;
  assignees: string[];
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  blockedBy: number[];
  subIssues: number[];
  parent: number | null;
  pull: FakePull | null;
}

export interface FakeForgeOptions {
  /** "owner/name" (default "afk/demo", as the local forge). */
  repo?: string;
  /** The token's login (default "afk-bot", the local forge's default user). */
  login?: string;
  /** The repository (shared with a FakeRefStore, so both see one set of refs). */
  git?: FakeRepo;
  /** Timestamps (default the machine's clock; pass a VirtualClock's `date`). */
  clock?: () => Date;
}

/** GitHub's timestamps: whole seconds. */
const iso = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, "Z");

export class FakeForgeState {
  readonly git: FakeRepo;
  readonly login: string;
  readonly slug: string;
  readonly issues = new Map<number, FakeIssue>();
  readonly labels: Label[] = [];
  readonly comments: Array<Comment & { issue: number }> = [];
  readonly reviewComments = new Map<number, ReviewComment[]>();
  readonly reviews = new Map<number, PullReview[]>();
  /** Per sha, oldest first. */
  readonly checkRuns = new Map<string, CheckRun[]>();
  readonly statuses = new Map<string, CommitStatus[]>();
  readonly protection = new Map<string, RequiredChecks>();
  private readonly clock: () => Date;
  private nextNumber = 1;
  private nextIdValue = 1000;

  constructor(options: FakeForgeOptions = {}) {
    this.slug = options.repo ?? "afk/demo";
    this.login = options.login ?? "afk-bot";
    this.git = options.git ?? new FakeRepo();
    this.clock = options.clock ?? (() => new Date());
  }

  now(): string {
    return iso(this.clock());
  }

  nextId(): number {
    return (this.nextIdValue += 1);
  }

  allocNumber(): number {
    return this.nextNumber++;
  }

  htmlUrl(kind: "issues" | "pull", n: number): string {
    return `https://github.com/${this.slug}/${kind}/${n}`;
  }

  label(name: string): Label | undefined {
    return this.labels.find((l) => l.name.toLowerCase() === name.toLowerCase());
  }

  /** A label by any spelling; an unknown name is made (as GitHub does when one is added to an issue). */
  labelMade(name: string): Label {
    let label = this.label(name);
    if (!label) {
      label = { name, color: "ededed", description: null };
      this.labels.push(label);
    }
    return label;
  }

  tip(branch: string): string | null {
    return this.git.read(`refs/heads/${branch}`);
  }

  // ---- the test's hands --------------------------------------------------------------------

  /** Opens an issue as the token's login; returns its number. */
  openIssue(input: { title: string; body?: string; labels?: string[] }): number {
    const now = this.now();
    const number = this.allocNumber();
    this.issues.set(number, {
      number,
      id: this.nextId(),
      title: input.title,
      body: input.body ?? "",
      state: "open",
      stateReason: null,
      labels: (input.labels ?? []).map((name) => this.labelMade(name).name),
      author: this.login,
      assignees: [],
      createdAt: now,
      updatedAt: now,
      closedAt: null,
      blockedBy: [],
      subIssues: [],
      parent: null,
      pull: null,
    });
    return number;
  }

  /** `issue` is blocked by `blocker`. */
  block(issue: number, blocker: number): void {
    this.must(issue).blockedBy.push(blocker);
  }

  /** `child` is a sub-issue of `parent`. */
  nest(parent: number, child: number): void {
    this.must(parent).subIssues.push(child);
    this.must(child).parent = parent;
  }

  /** Writes `files` in one commit on `from`'s tip (default: the branch's own, else main's) and moves `branch` there; returns the sha. */
  push(branch: string, files: Record<string, string>, from?: string): string {
    const ref = `refs/heads/${branch}`;
    const current = this.git.read(ref);
    const parent = from === undefined ? (current ?? this.tip("main")) : this.tip(from);
    if (!parent) throw new Error(`fake forge: no branch to start ${branch} from`);
    const sha = this.git.commitOn(parent, files, `${branch}: ${Object.keys(files).join(", ")}`);
    if (!this.git.cas(ref, current, sha)) throw new Error(`fake forge: ${branch} moved during the push`);
    return sha;
  }

  /** A check run on `sha` (completed with `conclusion`, or still running with null). */
  postCheck(sha: string, name: string, conclusion: string | null): void {
    const id = this.nextId();
    const run: CheckRun = {
      id,
      name,
      status: conclusion === null ? "in_progress" : "completed",
      conclusion,
      title: conclusion,
      summary: `${name} ${conclusion ?? "running"}`,
      text: null,
      detailsUrl: null,
      htmlUrl: `https://github.com/${this.slug}/runs/${id}`,
      appId: null,
    };
    this.checkRuns.set(sha, [...(this.checkRuns.get(sha) ?? []), run]);
  }

  /** A GitHub Actions job's check run on `sha` (the app github-actions; `suite`: its workflow run, default a new one); returns its id. */
  postActionsJob(sha: string, name: string, conclusion: string | null, suite = this.nextId()): number {
    this.postCheck(sha, name, conclusion);
    const run = this.checkRuns.get(sha)!.at(-1)!;
    Object.assign(run, { app: "github-actions", suiteId: suite });
    return run.id;
  }

  postStatus(sha: string, context: string, state: string): void {
    this.statuses.set(sha, [...(this.statuses.get(sha) ?? []), { context, state, description: null, targetUrl: null }]);
  }

  /** Classic protection on `branch`: required `contexts` (none: no check rule), `approvals` approving reviews. */
  protect(branch: string, rule: { contexts: string[]; strict?: boolean; approvals?: number }): void {
    this.protection.set(branch, {
      contexts: [...rule.contexts].sort(),
      strict: rule.strict ?? false,
      source: rule.contexts.length > 0 ? "protection" : "none",
      readable: true,
      approvals: rule.approvals ?? 0,
      dismissStaleApprovals: false,
    });
  }

  must(number: number): FakeIssue {
    const issue = this.issues.get(number);
    if (!issue) throw new Error(`fake forge: no issue #${number}`);
    return issue;
  }
}
