// Landing one green pull request, under the Not Rocket Science Rule (DESIGN.md invariant 2): the
// base branch only ever moves to a tree that passed the gate. A PR lands only when its gated
// head H contains the base tip B read just now, and the landing call names H: a merge pinned
// to `sha: H` (a squash of H onto B has exactly H's tree; so does a merge commit of B and H), or
// a fast-forward-only push of H with `--force-with-lease=refs/heads/<base>:<B>` (bors' move,
// which also closes the last race). A base that moved means sync (merge, never rebase) and
// gate again, never a blind merge.
//
// What GitHub does not let us close: between reading B and the merge call, the base can move,
// and GitHub merges anyway unless the base branch requires up-to-date branches (strict status
// checks), in which case it answers 405. So after every merge the landed tree is compared with
// H's tree; a difference comes back as `verified: false` for the caller to raise an alarm. The
// "push" strategy, or strict protection, closes that race.
//
// Only our own work lands (invariant 3): the PR is re-read and must be open, from a fleet
// branch naming this issue in this very repository, opened by the fleet's login, against our
// base; every write is fenced by the claim's sha (a zombie lands nothing). Landings are
// serialized per repository in this process (a promise chain) and across hosts (a lock ref
// `<namespace>/lock/landing`, created compare-and-swap, stale after a TTL, always released).
import { join } from "node:path";
import type { Checks, Forge, MergeMethod, PullDetail, RequiredChecks } from "../gh/forge.js";
import { ForgeError, GitError } from "../gh/errors.js";
import { git, gitRaw, type GitAuth, type GitResult } from "../gh/git.js";
import type { RefStore } from "../gh/refstore.js";
import { redactText } from "../lanes/redact.js";
import { FencedError, type Lease } from "../state/claims.js";
import { evaluateGate } from "../state/gate.js";
import { parseFleetBranch, sameLogin } from "../state/markers.js";
import { assertInstanceId } from "../state/snapshot.js";
import type { FleetConfig } from "../../schemas/config.js";
import { GateCache, gateCommit, gateEnv, type GateCommitResult } from "../workers/gate.js";
import { PushRejectedError, WorktreeError, type WorkRepo } from "../workers/worktrees.js";
import { holdLandingLock } from "./held-locks.js";

export type LandingStrategy = FleetConfig["landing"]["strategy"];

/** What the landing reads from the fleet config. */
export type LandingConfig = Pick<FleetConfig, "landing" | "gate" | "namespace"> & {
  worktree: Pick<FleetConfig["worktree"], "branch_prefix">;
  worker?: Pick<FleetConfig["worker"], "env_passthrough" | "env_deny">;
};

export interface LandingContext {
  forge: Forge;
  /** The fleet's own login (`forge.whoami()`): only PRs it opened land. */
  login: string;
  /** The base branch PRs land on, e.g. "main". */
  base: string;
  config: LandingConfig;
  lease: Lease;
  /** Ref store of the repository: the landing lock, and reading the base tip. */
  refs: RefStore;
  workRepo: WorkRepo;
  /** For the pushes the landing makes itself (push strategy, branch deletion). */
  auth: GitAuth | null;
  instance: string;
  host: string;
  /** Local gate results per tree; share one per project so a tree is gated once. */
  gateCache?: GateCache;
  /** The gate command's environment; default `gateEnv()` with the worker passthrough lists. */
  gateEnv?: Record<string, string>;
  /** The base's required checks, when the caller read them this tick (saves requests). */
  requiredChecks?: RequiredChecks;
  /** Seconds after which another host may take the landing lock over; default `landing.lock_ttl_seconds` (+ the gate timeout for a local gate). */
  lockTtlSeconds?: number;
  now?: () => Date;
}

export interface LandInput {
  issue: number;
  /** The issue's title (only to name a worktree branch if one must be recreated). */
  title: string;
  /** Our claim's sha: the fencing token. */
  claimSha: string;
  pr: number;
  /** The head sha that was gated (whose checks the caller saw green). */
  head: string;
}

export interface CiEvidence {
  kind: "ci";
  summary: string;
  excerpt: string;
  /** The failing checks and where to read more. */
  checks: Array<{ name: string; url: string | null }>;
}

export interface LocalGateEvidence {
  kind: "local";
  summary: string;
  excerpt: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  sha: string;
  tree: string;
}

export type GateEvidence = CiEvidence | LocalGateEvidence;

export type LandResult =
  | {
      outcome: "merged";
      /** The commit the base now points at (the squash or merge commit, or H for a push). */
      mergeSha: string;
      /** The base tip the gated head contained. */
      baseBefore: string;
      /** The gated head that landed. */
      head: string;
      method: LandingStrategy;
      /** The landed tree is H's tree. False: the base moved inside the merge call (raise an alarm). */
      verified: boolean;
      verifyNote: string | null;
      issueClosed: boolean;
      branchDeleted: boolean;
      /** Syncs made during this call (local gate only; a required gate returns "synced"). */
      syncs: number;
    }
  | { outcome: "synced"; head: string; previousHead: string; baseSha: string; why: string }
  | { outcome: "not_ours"; why: string }
  | { outcome: "fenced"; why: string }
  | { outcome: "busy"; why: string }
  | { outcome: "retry_later"; why: string }
  | { outcome: "conflict"; files: string[]; baseSha: string | null; why: string }
  | { outcome: "gate_red"; head: string; evidence: GateEvidence; why: string };

/** Syncs per call before giving up for this tick (the base keeps moving). */
export const MAX_SYNC_ROUNDS = 3;
const MAX_ITERATIONS = 10;
const DEFAULT_LOCK_TTL_SECONDS = 600;

export const LANDING_LOCK_HEADER = "afk-landing-lock";

export function landingLockRef(namespace: string): string {
  return `${namespace}/lock/landing`;
}

export interface LandingLockMessage {
  instance: string;
  host: string;
  at: string;
  issue: number;
  ttlSeconds: number;
}

export function formatLandingLock(lock: LandingLockMessage): string {
  assertInstanceId(lock.instance);
  const host = lock.host.replace(/[^\x21-\x7e]/g, "?").slice(0, 255) || "?";
  return `${LANDING_LOCK_HEADER}\ninstance=${lock.instance}\nhost=${host}\nat=${lock.at}\nissue=${lock.issue}\nttl=${lock.ttlSeconds}\n`;
}

/** The lock's facts, or null when the message is not a landing lock we can read. */
export function parseLandingLock(message: string): LandingLockMessage | null {
  const lines = message.replace(/\r\n/g, "\n").split("\n").map((l) => l.trim()).filter((l) => l !== "");
  if (lines[0] !== LANDING_LOCK_HEADER) return null;
  const fields = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const eq = line.indexOf("=");
    if (eq > 0) fields.set(line.slice(0, eq), line.slice(eq + 1));
  }
  const at = fields.get("at") ?? "";
  const ttl = Number(fields.get("ttl"));
  const issue = Number(fields.get("issue"));
  if (Number.isNaN(Date.parse(at))) return null;
  return {
    instance: fields.get("instance") ?? "?",
    host: fields.get("host") ?? "?",
    at,
    issue: Number.isInteger(issue) ? issue : 0,
    // A TTL from another host's config is honoured, within sane bounds.
    ttlSeconds: Number.isFinite(ttl) ? Math.min(Math.max(ttl, 60), 86_400) : DEFAULT_LOCK_TTL_SECONDS,
  };
}

// ---- in-process serialization -------------------------------------------------------------

const queues = new Map<string, Promise<unknown>>();

function serialized<T>(key: string, job: () => Promise<T>): Promise<T> {
  const previous = queues.get(key) ?? Promise.resolve();
  const next = previous.then(job, job);
  const tail: Promise<unknown> = next.then(
    () => undefined,
    () => undefined,
  );
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return next;
}

// ---- the landing --------------------------------------------------------------------------

/**
 * Lands one PR (see the module comment). Never merges anything that is not ours or not gated;
 * ForgeErrors and GitErrors other than the refusals handled here propagate (after the lock is
 * released) for the caller to log and retry on a later tick. Releasing the claim, the status
 * board and the worktree are the caller's.
 */
export function landPull(ctx: LandingContext, input: LandInput): Promise<LandResult> {
  const key = `${ctx.forge.repo.owner}/${ctx.forge.repo.name}`.toLowerCase();
  return serialized(key, () => landSerialized(ctx, input));
}

async function landSerialized(ctx: LandingContext, input: LandInput): Promise<LandResult> {
  const pull = await ctx.forge.getPull(input.pr);
  const foreign = notOurs(ctx, input, pull);
  if (foreign) return { outcome: "not_ours", why: foreign };
  const fenced = await fence(ctx, input);
  if (fenced) return fenced;
  if (pull.draft) return { outcome: "retry_later", why: `PR #${input.pr} is a draft` };
  if (pull.head.sha !== input.head) {
    return { outcome: "retry_later", why: `PR #${input.pr}'s head moved from ${short(input.head)} to ${short(pull.head.sha)} since it was gated` };
  }

  const lock = await acquireLock(ctx, input.issue);
  if (!lock.held) return { outcome: "busy", why: lock.why };
  const release = holdLandingLock(ctx.refs, landingLockRef(ctx.config.namespace), lock.sha);
  try {
    return await landLocked(ctx, input, pull);
  } finally {
    await release().catch(() => undefined);
  }
}

/** Why a PR is not ours to land, or null when it is. */
export function notOurs(ctx: Pick<LandingContext, "forge" | "login" | "base" | "config">, input: Pick<LandInput, "issue" | "pr">, pull: PullDetail): string | null {
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

async function fence(ctx: LandingContext, input: LandInput): Promise<LandResult | null> {
  try {
    await ctx.lease.fence(input.issue, input.claimSha);
    return null;
  } catch (error) {
    if (error instanceof FencedError) return { outcome: "fenced", why: error.message };
    throw error;
  }
}

interface HeldLock {
  held: true;
  sha: string;
}

async function acquireLock(ctx: LandingContext, issue: number): Promise<HeldLock | { held: false; why: string }> {
  const ref = landingLockRef(ctx.config.namespace);
  const now = ctx.now ?? (() => new Date());
  const ttlSeconds = lockTtl(ctx);
  const message = (): string => formatLandingLock({ instance: ctx.instance, host: ctx.host, at: now().toISOString(), issue, ttlSeconds });
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const created = await ctx.refs.create(ref, message());
    if (created.won) return { held: true, sha: created.sha };
    const entry = (await ctx.refs.list(`${ctx.config.namespace}/lock/`)).find((e) => e.ref === ref);
    if (!entry) continue; // released meanwhile: try again
    const holder = parseLandingLock(entry.message);
    const age = holder ? now().getTime() - Date.parse(holder.at) : Number.POSITIVE_INFINITY;
    // Our own instance on our own host cannot be landing: landings are serialized in this
    // process, so such a lock is left over from a crash of this instance.
    const leftover = holder !== null && holder.instance === ctx.instance && holder.host === ctx.host;
    if (holder && !leftover && age <= holder.ttlSeconds * 1000) {
      return {
        held: false,
        why: `another host is landing: instance ${holder.instance} on ${holder.host} holds ${ref} since ${holder.at} (issue #${holder.issue})`,
      };
    }
    // Stale (its holder died mid-landing) or unreadable: take it over from the sha we saw.
    const swapped = await ctx.refs.swap(ref, entry.sha, message());
    if (swapped.won) return { held: true, sha: swapped.sha };
  }
  return { held: false, why: `the landing lock ${ref} kept changing hands; trying again next tick` };
}

function lockTtl(ctx: LandingContext): number {
  if (ctx.lockTtlSeconds !== undefined) return ctx.lockTtlSeconds;
  // A local gate runs under the lock, up to MAX_SYNC_ROUNDS times.
  const gate = ctx.config.gate.ci === "local" ? ctx.config.gate.timeout_seconds * MAX_SYNC_ROUNDS : 0;
  return (ctx.config.landing.lock_ttl_seconds ?? DEFAULT_LOCK_TTL_SECONDS) + gate;
}

async function landLocked(ctx: LandingContext, input: LandInput, pull: PullDetail): Promise<LandResult> {
  const lg = new LandingGit(ctx);
  try {
    return await landRounds(ctx, lg, input, pull);
  } finally {
    await lg.dropPrivateRefs(input.issue).catch(() => undefined);
  }
}

async function landRounds(ctx: LandingContext, lg: LandingGit, input: LandInput, pull: PullDetail): Promise<LandResult> {
  const headRef = pull.head.ref;
  const local = ctx.config.gate.ci === "local";
  let expected = input.head;
  let syncs = 0;

  for (let iteration = 0; iteration < MAX_ITERATIONS; iteration += 1) {
    const tips = await lg.fetchTips(ctx.base, headRef, input.issue);
    if (tips.head === null) return { outcome: "retry_later", why: `the branch ${headRef} is gone from the remote` };
    if (tips.head !== expected) {
      return { outcome: "retry_later", why: `${headRef} moved from ${short(expected)} to ${short(tips.head)}: the new head must pass the gate first` };
    }
    const baseTip = tips.base;

    if (await lg.isAncestor(baseTip, expected)) {
      // The gate must have passed on exactly this tree.
      if (local) {
        const run = await runLocalGate(ctx, input.issue, expected);
        if (!run.passed) return gateRed(expected, localEvidence(run));
        if (!run.cached) {
          // Time passed while the gate ran: re-read the base before landing.
          const now = await ctx.refs.read(`refs/heads/${ctx.base}`);
          if (now !== baseTip) continue;
        }
      } else {
        const required = ctx.requiredChecks ?? (await ctx.forge.requiredChecks(ctx.base));
        const checks = await ctx.forge.checksFor(expected);
        const verdict = evaluateGate(checks, required);
        if (verdict.state === "pending") {
          return { outcome: "retry_later", why: `checks on ${short(expected)} are not finished: ${verdict.pending.join(", ")}` };
        }
        if (verdict.state === "red") {
          const evidence = checkEvidence(checks, verdict.failing.map((f) => f.name), ctx.config.gate.excerpt_bytes, secretsOf(ctx));
          return gateRed(expected, evidence);
        }
      }
      const fencedNow = await fence(ctx, input);
      if (fencedNow) return fencedNow;
      const landed = await landHead(ctx, lg, input, expected, baseTip);
      if (landed.kind === "moved") continue; // the next round syncs with the new base
      if (landed.kind === "retry") return { outcome: "retry_later", why: landed.why };
      return finish(ctx, lg, input, headRef, expected, baseTip, landed, syncs);
    }

    // H does not contain the base tip: bring the branch up to date (merge, never rebase).
    if (syncs >= MAX_SYNC_ROUNDS) {
      return { outcome: "retry_later", why: `the base kept moving: synced ${syncs} times in one landing` };
    }
    syncs += 1;
    const synced = await sync(ctx, lg, input, headRef, expected);
    if (synced.outcome !== "pushed") return synced.result;
    if (!local) {
      return {
        outcome: "synced",
        head: synced.head,
        previousHead: expected,
        baseSha: synced.baseSha,
        why: `${headRef} did not contain ${ctx.base} ${short(baseTip)}: merged the base in and pushed ${short(synced.head)}; its checks must pass before it lands`,
      };
    }
    expected = synced.head;
  }
  return { outcome: "retry_later", why: "the base kept moving during the landing" };
}

type Landed =
  | { kind: "merged"; mergeSha: string; method: LandingStrategy; verified: boolean; verifyNote: string | null }
  | { kind: "moved" }
  | { kind: "retry"; why: string };

async function landHead(ctx: LandingContext, lg: LandingGit, input: LandInput, head: string, baseTip: string): Promise<Landed> {
  const strategy = ctx.config.landing.strategy;
  if (strategy === "push") {
    // A fast-forward of the base to H, refused if the base is no longer B.
    const pushed = await lg.pushRef(head, `refs/heads/${ctx.base}`, baseTip);
    if (pushed.ok) return { kind: "merged", mergeSha: head, method: "push", verified: true, verifyNote: null };
    if (pushed.lostRace) return { kind: "moved" };
    return { kind: "retry", why: `the push of ${short(head)} to ${ctx.base} was refused: ${pushed.why}` };
  }
  const method: MergeMethod = strategy;
  let mergeSha: string;
  try {
    const result = await ctx.forge.mergePull(input.pr, { sha: head, method });
    if (!result.merged || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(result.sha)) {
      return { kind: "retry", why: `GitHub did not merge PR #${input.pr}: ${result.message || "no reason given"}` };
    }
    mergeSha = result.sha;
  } catch (error) {
    if (error instanceof ForgeError && error.kind === "not_mergeable") {
      const now = await ctx.refs.read(`refs/heads/${ctx.base}`);
      if (now !== null && now !== baseTip) return { kind: "moved" };
      return { kind: "retry", why: `GitHub refused to merge PR #${input.pr} (405): ${error.message}` };
    }
    if (error instanceof ForgeError && error.kind === "conflict") {
      return { kind: "retry", why: `GitHub refused to merge PR #${input.pr} (409): the head moved` };
    }
    throw error;
  }
  const check = await lg.verifyLanded(ctx.base, mergeSha, head, baseTip);
  return { kind: "merged", mergeSha, method: strategy, verified: check.verified, verifyNote: check.note };
}

async function finish(
  ctx: LandingContext,
  lg: LandingGit,
  input: LandInput,
  headRef: string,
  head: string,
  baseTip: string,
  landed: Extract<Landed, { kind: "merged" }>,
  syncs: number,
): Promise<LandResult> {
  // GitHub closes the issue for "Closes #n" on the default branch only; make sure it is closed.
  let issueClosed = false;
  try {
    const issue = await ctx.forge.getIssue(input.issue);
    if (issue.state === "open") await ctx.forge.closeIssue(input.issue, "completed");
    issueClosed = true;
  } catch {
    issueClosed = false; // the next tick sees it open without a claim... and the board says merged
  }
  let branchDeleted = false;
  if (ctx.config.landing.delete_branch) {
    const deleted = await lg.pushRef(null, `refs/heads/${headRef}`, head).catch(() => null);
    branchDeleted = deleted?.ok ?? false;
  }
  return {
    outcome: "merged",
    mergeSha: landed.mergeSha,
    baseBefore: baseTip,
    head,
    method: landed.method,
    verified: landed.verified,
    verifyNote: landed.verifyNote,
    issueClosed,
    branchDeleted,
    syncs,
  };
}

type SyncStep = { outcome: "pushed"; head: string; baseSha: string } | { outcome: "stop"; result: LandResult };

async function sync(ctx: LandingContext, lg: LandingGit, input: LandInput, headRef: string, head: string): Promise<SyncStep> {
  const stop = (result: LandResult): SyncStep => ({ outcome: "stop", result });
  const wr = ctx.workRepo;
  let progress = await wr.progress(input.issue, ctx.base);
  if (!progress.worktree) {
    // No worktree here (a takeover from another machine, a cleanup): recreate it at the pushed tip.
    await wr.prepare({ issue: input.issue, title: input.title, base: ctx.base });
    progress = await wr.progress(input.issue, ctx.base);
  }
  if (!progress.worktree || progress.branch !== headRef || progress.head === null) {
    return stop({
      outcome: "retry_later",
      why: `the worktree of #${input.issue} is on ${progress.branch ?? "no branch"}, not on the PR's branch ${headRef}`,
    });
  }
  const path = wr.worktreePath(input.issue);
  if (!(await lg.isAncestor(head, progress.head))) {
    // The worktree is behind the PR's head (the branch was pushed from elsewhere): catch up, fast-forward only.
    if (!(await lg.isAncestor(progress.head, head)) || !(await lg.fastForward(path, head))) {
      return stop({ outcome: "retry_later", why: `the worktree of #${input.issue} (${short(progress.head)}) has diverged from the PR's head ${short(head)}` });
    }
  }
  const merged = await wr.syncWithBase(input.issue, ctx.base);
  if (!merged.ok) {
    if (merged.reason === "conflict") {
      const baseSha = await ctx.refs.read(`refs/heads/${ctx.base}`).catch(() => null);
      return stop({
        outcome: "conflict",
        files: merged.conflicts,
        baseSha,
        why: `merging ${ctx.base} into ${headRef} conflicts in ${merged.conflicts.join(", ")}`,
      });
    }
    return stop({ outcome: "retry_later", why: `the worktree of #${input.issue} has uncommitted changes in ${merged.dirty.join(", ")}: nothing was synced` });
  }
  const fenced = await fence(ctx, input);
  if (fenced) return stop(fenced);
  try {
    const pushed = await wr.push(input.issue);
    if (pushed.branch !== headRef) {
      return stop({ outcome: "retry_later", why: `pushed ${pushed.branch}, which is not the PR's branch ${headRef}` });
    }
    const baseSha = (await lg.revParse(`refs/remotes/origin/${ctx.base}`)) ?? "";
    return { outcome: "pushed", head: pushed.sha, baseSha };
  } catch (error) {
    if (error instanceof PushRejectedError || error instanceof WorktreeError) {
      return stop({ outcome: "retry_later", why: `the synced branch could not be pushed: ${error.message}` });
    }
    throw error;
  }
}

async function runLocalGate(ctx: LandingContext, issue: number, sha: string): Promise<GateCommitResult> {
  const gate = ctx.config.gate;
  const progress = await ctx.workRepo.progress(issue, ctx.base);
  return gateCommit({
    repoDir: ctx.workRepo.repoDir,
    sha,
    worktree: progress.worktree ? ctx.workRepo.worktreePath(issue) : null,
    scratchRoot: join(ctx.workRepo.worktreeRoot, ".gate"),
    command: gate.local_command ?? "",
    env: ctx.gateEnv ?? gateEnv({ passthrough: ctx.config.worker?.env_passthrough ?? [], deny: ctx.config.worker?.env_deny ?? [] }),
    timeoutSeconds: gate.timeout_seconds,
    excerptBytes: gate.excerpt_bytes,
    secrets: secretsOf(ctx),
    ...(ctx.gateCache ? { cache: ctx.gateCache } : {}),
  });
}

function localEvidence(run: GateCommitResult): LocalGateEvidence {
  const how = run.error
    ? run.error
    : run.timedOut
      ? `timed out after ${Math.round(run.durationMs / 1000)}s`
      : `exited with ${run.exitCode ?? run.signal ?? "no code"} after ${formatSeconds(run.durationMs)}`;
  return {
    kind: "local",
    summary: `the local gate command ${how} on ${short(run.sha)}`,
    excerpt: run.excerpt,
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    durationMs: run.durationMs,
    sha: run.sha,
    tree: run.tree,
  };
}

function gateRed(head: string, evidence: GateEvidence): LandResult {
  return { outcome: "gate_red", head, evidence, why: evidence.summary };
}

function secretsOf(ctx: LandingContext): string[] {
  return ctx.auth?.token ? [ctx.auth.token] : [];
}

// ---- red-gate evidence from GitHub ------------------------------------------------------------

/**
 * Why a PR's checks are red, re-read from GitHub (check run output title, summary and text;
 * status description and target URL), bounded to about `excerptBytes`. `failingNames` empty:
 * every failing check on the head.
 */
export async function readCheckEvidence(forge: Forge, headSha: string, failingNames: readonly string[], excerptBytes: number): Promise<CiEvidence> {
  const checks = await forge.checksFor(headSha);
  return checkEvidence(checks, failingNames, excerptBytes, []);
}

const FAILING_STATUS = new Set(["failure", "error"]);
const PASSING_CONCLUSION = new Set(["success", "neutral", "skipped"]);

function checkEvidence(checks: Checks, failingNames: readonly string[], excerptBytes: number, secrets: readonly string[]): CiEvidence {
  const runs = new Map<string, Checks["checkRuns"][number]>();
  for (const run of checks.checkRuns) {
    const seen = runs.get(run.name);
    if (!seen || run.id > seen.id) runs.set(run.name, run);
  }
  const statuses = new Map<string, Checks["statuses"][number]>();
  for (const status of checks.statuses) if (!statuses.has(status.context)) statuses.set(status.context, status);

  let names = [...new Set(failingNames)];
  if (names.length === 0) {
    const failing = new Set<string>();
    for (const run of runs.values()) if (run.status === "completed" && !PASSING_CONCLUSION.has(run.conclusion ?? "")) failing.add(run.name);
    for (const status of statuses.values()) if (FAILING_STATUS.has(status.state)) failing.add(status.context);
    names = [...failing];
  }
  names.sort();
  const budget = Math.max(64, Math.floor(Math.max(0, excerptBytes) / Math.max(1, names.length)));
  const sections: string[] = [];
  const brief: string[] = [];
  const links: CiEvidence["checks"] = [];
  for (const name of names) {
    const run = runs.get(name);
    const status = statuses.get(name);
    const parts: string[] = [];
    const head: string[] = [];
    if (run) {
      const state = run.status === "completed" ? (run.conclusion ?? "no conclusion") : run.status;
      head.push(`${name}: ${state}${run.title ? ` (${oneLine(run.title)})` : ""}`);
      const url = run.htmlUrl ?? run.detailsUrl;
      links.push({ name, url: safeUrl(url) });
      parts.push(`== ${name} (check run: ${state}) ==`);
      if (run.title) parts.push(run.title);
      if (url && safeUrl(url)) parts.push(`details: ${url}`);
      const headText = headBytes(parts.join("\n"), Math.floor(budget / 2));
      const rest = Math.max(0, budget - byteLength(headText) - 1);
      const summary = run.summary ? headBytes(run.summary, Math.floor(rest / 2)) : "";
      const text = run.text ? tailBytes(run.text, rest - byteLength(summary)) : "";
      sections.push([headText, summary, text].filter((s) => s !== "").join("\n"));
    }
    if (status) {
      head.push(`${name}: ${status.state}${status.description ? ` (${oneLine(status.description)})` : ""}`);
      if (!run) links.push({ name, url: safeUrl(status.targetUrl) });
      const lines = [`== ${name} (status: ${status.state}) ==`];
      if (status.description) lines.push(status.description);
      if (status.targetUrl && safeUrl(status.targetUrl)) lines.push(`details: ${status.targetUrl}`);
      sections.push(headBytes(lines.join("\n"), budget));
    }
    if (!run && !status) {
      head.push(`${name}: not reported`);
      links.push({ name, url: null });
    }
    brief.push(...head);
  }
  const summary = headBytes(
    names.length === 0
      ? `no failing check found on ${short(checks.sha)}`
      : `${names.length === 1 ? "check" : `${names.length} checks`} failed on ${short(checks.sha)}: ${brief.join("; ")}`,
    600,
  );
  const excerpt = tailBytes(sections.join("\n\n"), Math.max(0, excerptBytes));
  return { kind: "ci", summary: redactText(summary, secrets), excerpt: redactText(excerpt, secrets), checks: links };
}

// ---- git in the work repository -----------------------------------------------------------------

/** The few git moves the landing makes itself, in the project's bare work repository. */
class LandingGit {
  private readonly dir: string;
  private readonly auth: GitAuth | null;
  private ready = false;

  constructor(private readonly ctx: LandingContext) {
    this.dir = ctx.workRepo.repoDir;
    this.auth = ctx.auth;
  }

  /** Fetches the base and the PR's branch into private refs; their tips now (null: gone). */
  async fetchTips(base: string, headRef: string, issue: number): Promise<{ base: string; head: string | null }> {
    if (!this.ready) {
      await this.ctx.workRepo.progress(issue, base); // creates the work repository on first use
      this.ready = true;
    }
    const baseRef = `refs/afk-landing/${issue}/base`;
    const headLocal = `refs/afk-landing/${issue}/head`;
    const args = ["fetch", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--quiet", "origin", `+refs/heads/${base}:${baseRef}`];
    const withHead = [...args, `+refs/heads/${headRef}:${headLocal}`];
    const result = await this.networkRaw(withHead);
    if (result.exitCode !== 0) {
      if (!/couldn't find remote ref/i.test(result.stderr)) throw new GitError(`fetch of ${base} and ${headRef} failed: ${result.stderr.trim()}`, "git fetch", result.exitCode, result.stderr);
      // Which one is missing? The base must exist; the head may be gone.
      await this.network(args);
      await gitRaw(["update-ref", "-d", headLocal], { cwd: this.dir });
      return { base: (await this.revParse(baseRef))!, head: null };
    }
    const baseSha = await this.revParse(baseRef);
    if (baseSha === null) throw new GitError(`cannot resolve the fetched ${base}`, "git rev-parse", 1, "");
    return { base: baseSha, head: await this.revParse(headLocal) };
  }

  /** Deletes the refs fetchTips wrote (they would keep the objects alive for nothing). */
  async dropPrivateRefs(issue: number): Promise<void> {
    for (const ref of [`refs/afk-landing/${issue}/base`, `refs/afk-landing/${issue}/head`]) {
      await gitRaw(["update-ref", "-d", ref], { cwd: this.dir });
    }
  }

  async isAncestor(a: string, b: string): Promise<boolean> {
    const result = await gitRaw(["merge-base", "--is-ancestor", a, b], { cwd: this.dir });
    if (result.exitCode === 0) return true;
    if (result.exitCode === 1) return false;
    throw new GitError(`git merge-base --is-ancestor ${a} ${b} failed: ${result.stderr.trim()}`, "git merge-base", result.exitCode, result.stderr);
  }

  async revParse(ref: string): Promise<string | null> {
    const result = await gitRaw(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { cwd: this.dir });
    const sha = result.stdout.trim();
    return result.exitCode === 0 && sha !== "" ? sha : null;
  }

  async tree(sha: string): Promise<string | null> {
    const result = await gitRaw(["rev-parse", "--verify", "--quiet", `${sha}^{tree}`], { cwd: this.dir });
    return result.exitCode === 0 ? result.stdout.trim() : null;
  }

  /** `git merge --ff-only <sha>` in a worktree; false when it could not. */
  async fastForward(worktree: string, sha: string): Promise<boolean> {
    const result = await gitRaw(["merge", "--ff-only", "--quiet", sha], { cwd: worktree });
    return result.exitCode === 0;
  }

  /**
   * Pushes `sha` (null: deletes) to `ref` on origin only if it still holds `expected`. Not forced:
   * a non-fast-forward is refused too. `lostRace`: the ref was not at `expected`.
   */
  async pushRef(sha: string | null, ref: string, expected: string): Promise<{ ok: true } | { ok: false; lostRace: boolean; why: string }> {
    const args = ["-c", "push.gpgSign=false", "push", "--porcelain", "--no-verify", `--force-with-lease=${ref}:${expected}`, "origin", `${sha ?? ""}:${ref}`];
    const result = await this.networkRaw(args);
    if (result.exitCode === 0) return { ok: true };
    const verdict = rejection(result.stdout, ref);
    const why = verdict ?? (result.stderr.trim().split("\n").pop() || `exit code ${result.exitCode}`);
    return { ok: false, lostRace: verdict !== null && /stale info|fetch first|non-fast-forward|already exists|incorrect old value|but expected|cannot lock ref/i.test(verdict), why };
  }

  /**
   * After a merge: does the base now hold a commit whose tree is H's? `mergeSha` is what GitHub
   * says it created; it must be on the base, and its tree must equal H's.
   */
  async verifyLanded(base: string, mergeSha: string, head: string, baseTip: string): Promise<{ verified: boolean; note: string | null }> {
    const baseRef = `refs/afk-landing/verify/${base}`;
    await this.network(["fetch", "--no-tags", "--no-write-fetch-head", "--quiet", "origin", `+refs/heads/${base}:${baseRef}`]);
    let present = (await gitRaw(["cat-file", "-e", `${mergeSha}^{commit}`], { cwd: this.dir })).exitCode === 0;
    if (!present) {
      await this.networkRaw(["fetch", "--no-tags", "--no-write-fetch-head", "--quiet", "origin", mergeSha]);
      present = (await gitRaw(["cat-file", "-e", `${mergeSha}^{commit}`], { cwd: this.dir })).exitCode === 0;
    }
    await gitRaw(["update-ref", "-d", baseRef], { cwd: this.dir });
    if (!present) return { verified: false, note: `the merge commit ${short(mergeSha)} could not be fetched from ${base}` };
    const [mergedTree, headTree] = await Promise.all([this.tree(mergeSha), this.tree(head)]);
    const parent = await this.revParse(`${mergeSha}^1`);
    if (mergedTree !== null && mergedTree === headTree) {
      return { verified: true, note: parent === baseTip ? null : `the merge commit's parent is ${short(parent ?? "?")}, not ${short(baseTip)}, but its tree is the gated one` };
    }
    return {
      verified: false,
      note:
        `the base moved inside the merge call: ${base} went from ${short(baseTip)} to ${short(parent ?? "?")} before GitHub merged, ` +
        `so ${short(mergeSha)} has a tree that was never gated. Require branches to be up to date (strict status checks) or use landing.strategy "push"`,
    };
  }

  private network(args: string[]): Promise<GitResult> {
    return git(args, { cwd: this.dir, auth: this.auth });
  }

  private networkRaw(args: string[]): Promise<GitResult> {
    return gitRaw(args, { cwd: this.dir, auth: this.auth });
  }
}

// `git push --porcelain`: "!\t<src>:<dst>\t[rejected] (reason)" for a refused ref.
function rejection(stdout: string, ref: string): string | null {
  for (const line of stdout.split("\n")) {
    const [flag, refs, summary] = line.split("\t");
    if (flag === "!" && refs !== undefined && refs.endsWith(`:${ref}`)) return summary ?? "rejected";
  }
  return null;
}

// ---- small helpers ------------------------------------------------------------------------------

function short(sha: string): string {
  return sha.slice(0, 12);
}

function formatSeconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms / 1000)}s`;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

function safeUrl(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : null;
  } catch {
    return null;
  }
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** The first at most `limit` bytes of `text`, cut at a character boundary ("…" marks a cut). */
export function headBytes(text: string, limit: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= limit) return text;
  if (limit <= 3) return "";
  let end = limit - 3; // room for "…"
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end -= 1;
  return `${bytes.subarray(0, end).toString("utf8")}…`;
}

/** The last at most `limit` bytes of `text`, cut at a character boundary ("…" marks a cut). */
export function tailBytes(text: string, limit: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= limit) return text;
  if (limit <= 3) return "";
  let start = bytes.length - (limit - 3);
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start += 1;
  return `…${bytes.subarray(start).toString("utf8")}`;
}
