// Landing trains: several green PRs of ours land with one gate run (docs/how-it-works.md, "Landing trains").
// The PRs are merged in dispatch order onto the base tip as ONE commit (first parent the base
// tip, the PR heads after it) on a branch `afk/train/<id>`; that commit is gated once (the local
// command on its tree, or the required checks on it, through a draft PR so CI runs), and on
// green the base fast-forwards to exactly it, with a lease on the tip the train was built on.
// Every PR head is then in the base, so GitHub marks each PR merged. A red train is bisected:
// halves, then singles, so one bad PR costs about log2(k) more gate runs and is sent back with
// its own evidence while the others land. A base that moves under the train restarts it on the
// new tip. The Not Rocket Science Rule (docs/architecture.md, invariant 2) holds as for one PR:
// the base only ever points at a gated tree, and its first-parent line gains one commit per train.
// Only our own PRs ride (the same checks as landPull, invariant 3), every member is fenced by
// its claim just before the base moves, and the landing lock is held (and renewed) throughout.
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { RequiredChecks } from "../gh/forge.js";
import { evaluateGate } from "../state/gate.js";
import { checkEvidence } from "./ci-evidence.js";
import { listDeadTrains, sweepDeadTrains, TRAIN_BRANCH_PREFIX } from "./dead-trains.js";
import type { HostLandings } from "./held-locks.js";
import { MAX_SYNC_ROUNDS, type GateEvidence, type LandingContext, type LandInput } from "./land-types.js";
import { commandGateEvidence, runCommandGate, secretsOf } from "./command-gate.js";
import { lostClaim, screenPulls } from "./own-pulls.js";
import { wrapUpLanded } from "./landed.js";
import { LandingGit } from "./landing-git.js";
import { acquireLock, DEFAULT_LOCK_TTL_SECONDS, landingKey, landingLockRef, lockTakerOf, renewLock, type LockTaker } from "./landing-lock.js";

/** One green PR that rides a train: what landPull takes for it. */
export type TrainMember = LandInput;

export type TrainMemberOutcome =
  /** `queue`: GitHub's merge queue merged it (queue-batch.ts), not a train. */
  | {
      outcome: "merged";
      member: TrainMember;
      train: string;
      mergeSha: string;
      /** The base tip the landing moved on from (its commits and files are head's past it). */
      baseBefore: string;
      issueClosed: boolean;
      branchDeleted: boolean;
      queue?: true;
      /** When the base moved (ISO). */ mergedAt?: string;
    }
  /** Gated alone (after bisection) and red: its own evidence. `gateRuns`: the train's gate runs when it was found. */
  | { outcome: "gate_red"; member: TrainMember; evidence: GateEvidence; gateRuns: number; why: string }
  | { outcome: "conflict"; member: TrainMember; files: string[]; why: string }
  | { outcome: "not_ours" | "fenced" | "retry_later"; member: TrainMember; why: string };

export interface TrainResult {
  /** The train's id: its branches are `afk/train/<id>-<n>`. */
  id: string;
  /** "busy": another host holds the landing lock (`holder`); nothing was tried. */
  outcome: "ran" | "busy";
  holder?: string;
  why: string;
  /** One entry per member whose fate the train decided; a member not listed waits for a later one. */
  members: TrainMemberOutcome[];
  /** Candidates gated (CI runs or local gate runs; a cached local result counts too). */
  gateRuns: number;
  /** Times the base moved under the train and it was rebuilt on the new tip. */
  restarts: number;
  /** No CI reported anything on a candidate: this repository's CI does not run on trains. */
  ciSilent: boolean;
  /** Each landing: the train branch, its commit (now the base tip), the issues it landed. */
  landings: Array<{ train: string; sha: string; issues: number[] }>;
  /** Dead trains' branches (a host killed mid-train) this train deleted, their draft PRs closed. */
  swept?: string[];
}

export interface TrainOptions {
  /** Between looks at a candidate's checks (required CI); default 10 s. */
  pollMs?: number;
  /**
   * Before the `poll`-th look (from 0) at a candidate's checks, instead of a fixed `pollMs`: the
   * fleet's watch backoff (server/state/wake.ts), soon at first, when an instant CI has most
   * likely just answered. Each look is a conditional request, free while nothing changed.
   */
  pollDelayMs?: (poll: number) => number;
  /** Called between those looks (the fleet's heartbeat: a train may outlast a tick). */
  onWait?: () => Promise<void>;
  /** The longest wait for a candidate's checks; default `gate.timeout_seconds`. */
  ciTimeoutMs?: number;
  /** The longest wait for a first check of any kind on a candidate; default 10 minutes (within ciTimeoutMs). */
  silentMs?: number;
}

export { TRAIN_BRANCH_PREFIX };

/** Lands `members` (dispatch order) as trains; see the module comment. */
export function landTrain(ctx: LandingContext, members: readonly TrainMember[], options: TrainOptions = {}): Promise<TrainResult> {
  return ctx.landings.line.run(landingKey(ctx), () => new Train(ctx, options).run(members));
}

type GateOutcome = { state: "green" } | { state: "red"; evidence: GateEvidence } | { state: "moved" } | { state: "stuck"; why: string };

class Train {
  readonly id = `${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
  private readonly lg: LandingGit;
  private readonly result: TrainResult;
  private readonly local: boolean;
  private lock: ReturnType<HostLandings["holdRenewable"]> | null = null;
  private lockTaker!: LockTaker;
  /** The series number of the branch (and draft PR) candidates go to now: a landing ends one. */
  private seq = 1;
  /** What the current train branch holds on the remote ("" = absent), and its draft PR. */
  private branchSha = "";
  private draft: number | null = null;
  private required: RequiredChecks | null = null;
  private readonly branchOf = new Map<number, string>();
  private lockIssue = 0;

  constructor(
    private readonly ctx: LandingContext,
    private readonly options: TrainOptions,
  ) {
    this.lg = new LandingGit(ctx.workRepo, ctx.auth);
    this.local = ctx.config.gate.ci === "local";
    this.result = { id: this.id, outcome: "ran", why: "", members: [], gateRuns: 0, restarts: 0, ciSilent: false, landings: [] };
  }

  private get branch(): string {
    return `${TRAIN_BRANCH_PREFIX}${this.id}-${this.seq}`;
  }

  async run(members: readonly TrainMember[]): Promise<TrainResult> {
    if (!this.local) {
      // No request under the fleet (its tick's rules are in ctx).
      this.required = this.ctx.requiredChecks ?? (await this.ctx.forge.requiredChecks(this.ctx.base));
      if (this.required.mergeQueue === true) {
        for (const member of members)
          this.decided({
            outcome: "retry_later",
            member,
            why: `${this.ctx.base} requires GitHub's merge queue: its PRs land through the queue, not in trains`,
          });
        return this.done("the base requires a merge queue");
      }
    }
    const riders = await this.screen(members);
    if (riders.length === 0) return this.done("no member could ride");
    const ttl = (this.ctx.config.landing.lock_ttl_seconds ?? DEFAULT_LOCK_TTL_SECONDS) + (this.local ? this.ctx.config.gate.timeout_seconds : 0);
    this.lockTaker = lockTakerOf(this.ctx, this.ctx.lockTtlSeconds ?? ttl);
    this.lockIssue = riders[0]!.issue;
    const lock = await acquireLock(this.lockTaker, this.lockIssue);
    if (!lock.held) return { ...this.result, outcome: "busy", why: lock.why, holder: lock.holder };
    this.lock = this.ctx.landings.holdRenewable(this.ctx.refs, landingLockRef(this.ctx.config.namespace), lock.sha);
    try {
      await this.sweep();
      await this.ride(riders);
    } finally {
      await this.cleanUp().catch(() => undefined);
      await this.lock.release().catch(() => undefined);
    }
    return this.done(
      `${this.result.landings.reduce((n, l) => n + l.issues.length, 0)} of ${members.length} landed in ${this.result.landings.length} train(s) after ${this.result.gateRuns} gate run(s)`,
    );
  }

  private done(why: string): TrainResult {
    return { ...this.result, why };
  }

  private decided(outcome: TrainMemberOutcome): void {
    this.result.members.push(outcome);
  }

  /** Only our own open, undrafted PRs at their gated heads, under claims still ours, ride. */
  private async screen(members: readonly TrainMember[]): Promise<TrainMember[]> {
    const { riders, refused } = await screenPulls(this.ctx, members);
    for (const r of refused) this.decided(r);
    for (const r of riders) this.branchOf.set(r.member.issue, r.branch);
    return riders.map((r) => r.member);
  }

  /** True (and decided) when the claim is no longer ours. */
  private async fenced(member: TrainMember): Promise<boolean> {
    const lost = await lostClaim(this.ctx, member);
    if (lost !== null) this.decided({ outcome: "fenced", member, why: lost });
    return lost !== null;
  }

  private async ride(riders: TrainMember[]): Promise<void> {
    const fetched = await this.lg.fetchBranches(
      this.ctx.base,
      riders.map((m) => this.branchOf.get(m.issue)!),
      this.id,
    );
    let baseTip = fetched.base;
    const ready = riders.filter((m) => {
      const tip = fetched.heads.get(this.branchOf.get(m.issue)!);
      if (tip === m.head) return true;
      this.decided({
        outcome: "retry_later",
        member: m,
        why: tip ? `${this.branchOf.get(m.issue)} moved to ${short(tip)} since it was gated` : `the branch ${this.branchOf.get(m.issue)} is gone`,
      });
      return false;
    });
    // Groups still to gate, in order: the whole train first, then halves of a red one.
    const queue: Group[] = ready.length > 0 ? [{ members: ready, parentRed: null, implied: null }] : [];
    while (queue.length > 0) {
      const next = queue[0]!;
      if (next.implied) {
        // Its left sibling landed green, so the red of their parent is in here: no run needed.
        queue.shift();
        if (next.members.length === 1) this.red(next.members[0]!, next.implied);
        else queue.unshift(...halves(next.members, next.implied));
        continue;
      }
      const built = await this.lg.trainCommit(
        baseTip,
        next.members.map((m) => ({ key: m.issue, sha: m.head })),
        this.message(next.members),
      );
      for (const [issue, files] of built.conflicts) {
        const member = next.members.find((m) => m.issue === issue)!;
        this.decided({
          outcome: "conflict",
          member,
          files,
          why: `PR #${member.pr} conflicts with ${this.ctx.base} and the PRs before it in the train in ${files.join(", ")}`,
        });
      }
      const group = next.members.filter((m) => built.merged.includes(m.issue));
      if (group.length !== next.members.length) next.parentRed = null; // no longer the same candidate
      next.members = group;
      if (built.sha === null || group.length === 0) {
        queue.shift();
        continue;
      }
      await this.renew();
      const gate = await this.gate(built.sha, baseTip, group);
      if (gate.state === "moved" || gate.state === "stuck") {
        if (gate.state === "stuck" || this.result.restarts >= MAX_SYNC_ROUNDS) {
          const why = gate.state === "stuck" ? gate.why : `the base kept moving: the train restarted ${this.result.restarts} times`;
          for (const g of queue) for (const m of g.members) this.decided({ outcome: "retry_later", member: m, why });
          return;
        }
        baseTip = await this.restart(queue);
        continue;
      }
      if (gate.state === "red") {
        queue.shift();
        // Its right sibling (if next) no longer holds the red for sure.
        if (queue[0]) queue[0].parentRed = null;
        if (group.length === 1) this.red(group[0]!, gate.evidence);
        else queue.unshift(...halves(group, gate.evidence));
        continue;
      }
      // Green: every rider must still be ours right now; a lost claim's work must not land.
      // Read side by side: each is one ls-remote, and the base waits for all of them.
      const lost = await Promise.all(group.map((m) => this.fenced(m)));
      const fenced = group.filter((_, i) => lost[i]);
      if (fenced.length > 0) {
        next.members = group.filter((m) => !fenced.includes(m));
        next.parentRed = null;
        continue; // rebuilt and gated again without them
      }
      const pushed = await this.lg.pushRef(built.sha, `refs/heads/${this.ctx.base}`, baseTip);
      if (!pushed.ok) {
        if (pushed.lostRace && this.result.restarts < MAX_SYNC_ROUNDS) {
          baseTip = await this.restart(queue);
          continue;
        }
        for (const g of queue)
          for (const m of g.members)
            this.decided({ outcome: "retry_later", member: m, why: `the push of the train to ${this.ctx.base} was refused: ${pushed.why}` });
        return;
      }
      queue.shift();
      if (queue[0]?.parentRed) queue[0].implied = queue[0].parentRed;
      await this.landed(group, built.sha, baseTip, new Date().toISOString());
      baseTip = built.sha;
    }
  }

  /** The base moved under the train: rebuild on the new tip, and infer nothing from runs on the old one. */
  private async restart(queue: Group[]): Promise<string> {
    this.result.restarts += 1;
    for (const g of queue) g.parentRed = g.implied = null;
    return this.lg.fetchBase(this.ctx.base, this.id);
  }

  private red(member: TrainMember, evidence: GateEvidence): void {
    this.decided({ outcome: "gate_red", member, evidence, gateRuns: this.result.gateRuns, why: evidence.summary });
  }

  private message(group: readonly TrainMember[]): string {
    const list = group.map((m) => `#${m.issue} (PR #${m.pr})`).join(", ");
    return `Land train ${this.branch}: ${list}\n\n${group.map((m) => `- #${m.issue}: ${m.title}`).join("\n")}\n`;
  }

  /** The base now holds the group's commit: finish each member as landPull does. */
  private async landed(group: readonly TrainMember[], sha: string, baseBefore: string, mergedAt: string): Promise<void> {
    const train = this.branch;
    this.result.landings.push({ train, sha, issues: group.map((m) => m.issue) });
    for (const member of group) {
      const { issueClosed, branchDeleted } = await wrapUpLanded(this.ctx, this.lg, member.issue, this.branchOf.get(member.issue)!, member.head);
      this.decided({ outcome: "merged", member, train, mergeSha: sha, baseBefore, issueClosed, branchDeleted, mergedAt });
    }
    // The draft PR (if any) is merged with the base now; the next candidates need a fresh one.
    await this.dropBranch();
    this.seq += 1;
  }

  private async renew(): Promise<void> {
    if (!this.lock) return;
    const next = await renewLock(this.lockTaker, this.lock.sha(), this.lockIssue);
    if (next === null) throw new Error("the landing lock was taken over during the train: nothing more lands from it");
    this.lock.moved(next);
  }

  /** Gates one candidate (see the module comment). */
  private async gate(sha: string, baseTip: string, group: readonly TrainMember[]): Promise<GateOutcome> {
    this.result.gateRuns += 1;
    const secrets = secretsOf(this.ctx);
    if (this.local) {
      const run = await runCommandGate(this.ctx, sha, null);
      return run.passed ? { state: "green" } : { state: "red", evidence: commandGateEvidence(run) };
    }
    // Required CI: the candidate goes to the train branch with a draft PR, where CI runs on it.
    const pushed = await this.lg.pushRef(sha, `refs/heads/${this.branch}`, this.branchSha);
    if (!pushed.ok) return { state: "stuck", why: `the train branch ${this.branch} could not be pushed: ${pushed.why}` };
    this.branchSha = sha;
    if (this.draft === null) {
      // One request per train (not per bisection step: later candidates reuse the draft PR by a
      // push to its branch). Many CI setups run on pull requests only.
      const pull = await this.ctx.forge.createPull({
        title: `afk train ${this.branch}`,
        // No closing keywords: the train PR only carries CI; each member PR closes its own issue.
        body: `A landing train of the fleet: PRs ${group.map((m) => `#${m.pr}`).join(", ")} merged onto ${this.ctx.base}, gated once. It lands by a fast-forward of ${this.ctx.base}; nothing to review here.`,
        head: this.branch,
        base: this.ctx.base,
        draft: true,
      });
      this.draft = pull.number;
    }
    // No request under the fleet (its tick's rules are in ctx, or run() read them).
    this.required ??= this.ctx.requiredChecks ?? (await this.ctx.forge.requiredChecks(this.ctx.base));
    const pollMs = this.options.pollMs ?? 10_000;
    const deadline = Date.now() + (this.options.ciTimeoutMs ?? this.ctx.config.gate.timeout_seconds * 1000);
    // CI that skips drafts (or train branches) never reports anything: found out sooner.
    const silentDeadline =
      Date.now() + Math.min(this.options.ciTimeoutMs ?? Infinity, this.options.silentMs ?? 600_000, this.ctx.config.gate.timeout_seconds * 1000);
    for (let poll = 0; ; poll += 1) {
      // Conditional requests every pollMs while the train's CI runs: a 200 only when it reported something.
      const checks = await this.ctx.forge.checksFor(sha);
      const verdict = evaluateGate(checks, this.required);
      if (verdict.state === "green") return { state: "green" };
      if (verdict.state === "red") {
        return {
          state: "red",
          evidence: checkEvidence(
            checks,
            verdict.failing.map((f) => f.name),
            this.ctx.config.gate.excerpt_bytes,
            secrets,
          ),
        };
      }
      if ((await this.ctx.refs.read(`refs/heads/${this.ctx.base}`)) !== baseTip) return { state: "moved" };
      if (this.ctx.stopping?.())
        return { state: "stuck", why: `the fleet is stopping: the train's wait for CI on ${short(sha)} ends here; its PRs land later` };
      const silent = checks.checkRuns.length === 0 && checks.statuses.length === 0;
      if (silent && Date.now() > silentDeadline) {
        this.result.ciSilent = true;
        return {
          state: "stuck",
          why: `no CI reported any check on the train's draft PR #${this.draft} (${short(sha)}): CI must run on draft pull requests from afk/train/ branches (see docs/how-it-works.md, "Landing trains"); PRs land one at a time until then`,
        };
      }
      if (Date.now() > deadline) return { state: "stuck", why: `the checks on the train ${short(sha)} did not finish in time: ${verdict.pending.join(", ")}` };
      await sleep(this.options.pollDelayMs?.(poll) ?? pollMs);
      await this.options.onWait?.();
      await this.renew();
    }
  }

  /** Dead trains' branches and draft PRs go (dead-trains.ts): under the lock, no other train runs. */
  private async sweep(): Promise<void> {
    const swept = await sweepDeadTrains(this.ctx, this.lg, await listDeadTrains(this.lg));
    if (swept.length > 0) this.result.swept = swept;
  }

  /** Closes the draft PR (if the landing did not merge it) and deletes the train branch. */
  private async dropBranch(): Promise<void> {
    if (this.draft !== null) {
      // One request: a draft PR left open would invite a human to review it. Closed without
      // reading it first: if GitHub already counts it merged (its head reached the base), the close
      // is refused, which is as good.
      await this.ctx.forge.closePull(this.draft).catch(() => undefined);
      this.draft = null;
    }
    if (this.branchSha !== "") {
      await this.lg.pushRef(null, `refs/heads/${this.branch}`, this.branchSha).catch(() => undefined);
      this.branchSha = "";
    }
  }

  private async cleanUp(): Promise<void> {
    await this.dropBranch();
    await this.lg.dropScope(this.id);
  }
}

/**
 * A candidate still to gate. `parentRed`: the evidence of its parent's red run, while its left
 * sibling is still to be decided; `implied`: that sibling landed green, so this group holds the red.
 */
interface Group {
  members: TrainMember[];
  parentRed: GateEvidence | null;
  implied: GateEvidence | null;
}

function halves(members: readonly TrainMember[], evidence: GateEvidence): [Group, Group] {
  const half = Math.ceil(members.length / 2);
  return [
    { members: members.slice(0, half), parentRed: null, implied: null },
    { members: members.slice(half), parentRed: evidence, implied: null },
  ];
}

function short(sha: string): string {
  return sha.slice(0, 12);
}
