// Check runs and commit statuses, the two ways CI reports on a commit, and how they combine
// into one verdict per name (a check run and a status with the same name must both pass).
import type { ForgeEmulator } from "./core.js";
import { HttpError, notFound, validationFailed } from "./http-errors.js";
import { oneOf, optionalString, queryEnum, requiredString } from "./input.js";
import { actor } from "./issues.js";
import { paginate } from "./paginate.js";
import type { Reply, RequestContext, Router } from "./router.js";
import { isoNow, type CheckRunRecord, type StatusRecord } from "./state.js";

const REPO = "/repos/{owner}/{repo}";
const RUN_STATUSES = ["queued", "in_progress", "completed", "waiting", "requested", "pending"] as const;
const CONCLUSIONS = ["success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required", "stale"] as const;
const STATUS_STATES = ["error", "failure", "pending", "success"] as const;

export type Outcome = "success" | "pending" | "failure";

/** The latest check run per name, newest first. */
export function latestCheckRuns(forge: ForgeEmulator, sha: string): CheckRunRecord[] {
  const seen = new Set<string>();
  const out: CheckRunRecord[] = [];
  const runs = forge.state.checkRunsFor(sha);
  for (let i = runs.length - 1; i >= 0; i--) {
    const r = runs[i]!;
    if (seen.has(r.name)) continue;
    seen.add(r.name);
    out.push(r);
  }
  return out;
}

/** The latest status per context, newest first. */
export function latestStatuses(forge: ForgeEmulator, sha: string): StatusRecord[] {
  const seen = new Set<string>();
  const out: StatusRecord[] = [];
  const all = forge.state.statusesFor(sha);
  for (let i = all.length - 1; i >= 0; i--) {
    const s = all[i]!;
    if (seen.has(s.context)) continue;
    seen.add(s.context);
    out.push(s);
  }
  return out;
}

function runOutcome(r: CheckRunRecord): Outcome {
  if (r.status !== "completed") return "pending";
  return r.conclusion === "success" || r.conclusion === "neutral" || r.conclusion === "skipped" ? "success" : "failure";
}

function statusOutcome(s: StatusRecord): Outcome {
  return s.state === "success" ? "success" : s.state === "pending" ? "pending" : "failure";
}

const RANK: Record<Outcome, number> = { success: 0, pending: 1, failure: 2 };

/** Name -> worst outcome across the latest check run and the latest status of that name. */
export function checkOutcomes(forge: ForgeEmulator, sha: string): Map<string, Outcome> {
  const out = new Map<string, Outcome>();
  const merge = (name: string, o: Outcome): void => {
    const prev = out.get(name);
    if (prev === undefined || RANK[o] > RANK[prev]) out.set(name, o);
  };
  for (const r of latestCheckRuns(forge, sha)) merge(r.name, runOutcome(r));
  for (const s of latestStatuses(forge, sha)) merge(s.context, statusOutcome(s));
  return out;
}

export function combinedState(statuses: StatusRecord[]): string {
  if (statuses.length === 0) return "pending";
  if (statuses.some((s) => s.state === "error" || s.state === "failure")) return "failure";
  if (statuses.some((s) => s.state === "pending")) return "pending";
  return "success";
}

async function commitFor(ctx: RequestContext, ref: string): Promise<string> {
  const sha = await ctx.memo.resolveCommit(ref);
  if (!sha) throw new HttpError(422, `No commit found for SHA: ${ref}`);
  return sha;
}

/** Open pull requests whose head is `sha`, in the minimal shape a check run lists. */
function pullsAt(ctx: RequestContext): (sha: string) => unknown[] {
  const bySha = new Map<string, unknown[]>();
  for (const issue of ctx.forge.state.issues()) {
    const p = issue.pull;
    if (!p || issue.state !== "open") continue;
    const list = bySha.get(p.headSha) ?? [];
    list.push(ctx.forge.render.checkRunPull(issue, p, p.headSha, p.baseSha));
    bySha.set(p.headSha, list);
  }
  return (sha) => bySha.get(sha) ?? [];
}

function readOutput(ctx: RequestContext): { title?: string | null; summary?: string | null; text?: string | null } {
  const o = ctx.body.output;
  if (o === undefined || o === null) return {};
  if (typeof o !== "object" || Array.isArray(o)) throw validationFailed([{ resource: "CheckRun", field: "output", code: "invalid" }]);
  const out = o as Record<string, unknown>;
  const pick = (k: string): string | null | undefined => {
    const v = out[k];
    if (v === undefined) return undefined;
    if (v !== null && typeof v !== "string") throw validationFailed([{ resource: "CheckRun", field: `output.${k}`, code: "invalid" }]);
    return v;
  };
  return { title: pick("title"), summary: pick("summary"), text: pick("text") };
}

function applyRunFields(ctx: RequestContext, run: CheckRunRecord, creating: boolean): void {
  const status = oneOf(optionalString(ctx.body, "status", "CheckRun"), RUN_STATUSES, "CheckRun", "status");
  const conclusion = oneOf(optionalString(ctx.body, "conclusion", "CheckRun"), CONCLUSIONS, "CheckRun", "conclusion");
  const now = isoNow();
  if (conclusion !== undefined) {
    run.conclusion = conclusion;
    run.status = "completed";
  } else if (status !== undefined) {
    if (status === "completed" && run.conclusion === null) {
      throw validationFailed([{ resource: "CheckRun", field: "conclusion", code: "missing_field" }], 'Invalid request.\n\n"conclusion" wasn\'t supplied.');
    }
    run.status = status;
    if (status !== "completed") run.conclusion = null;
  } else if (creating) {
    run.status = "queued";
  }
  const startedAt = optionalString(ctx.body, "started_at", "CheckRun");
  const completedAt = optionalString(ctx.body, "completed_at", "CheckRun");
  if (startedAt !== undefined) run.startedAt = startedAt;
  if (run.status === "completed") run.completedAt = completedAt ?? run.completedAt ?? now;
  else run.completedAt = null;
  const name = optionalString(ctx.body, "name", "CheckRun");
  if (name !== undefined && name !== "") run.name = name;
  if (ctx.body.details_url !== undefined) run.detailsUrl = (ctx.body.details_url as string | null) ?? null;
  if (ctx.body.external_id !== undefined) run.externalId = (ctx.body.external_id as string | null) ?? null;
  const output = readOutput(ctx);
  if (output.title !== undefined) run.title = output.title;
  if (output.summary !== undefined) run.summary = output.summary;
  if (output.text !== undefined) run.text = output.text;
}

async function createCheckRun(ctx: RequestContext): Promise<Reply> {
  const user = actor(ctx);
  const name = requiredString(ctx.body, "name", "CheckRun");
  const headSha = requiredString(ctx.body, "head_sha", "CheckRun");
  if (name.trim() === "") throw validationFailed([{ resource: "CheckRun", field: "name", code: "missing_field" }]);
  const sha = /^[0-9a-f]{40}$/.test(headSha) ? await ctx.memo.resolveCommit(headSha) : null;
  if (!sha) throw new HttpError(422, `No commit found for SHA: ${headSha}`);
  const run: CheckRunRecord = {
    id: ctx.forge.state.nextId(),
    headSha: sha,
    name,
    status: "queued",
    conclusion: null,
    startedAt: isoNow(),
    completedAt: null,
    title: null,
    summary: null,
    text: null,
    detailsUrl: null,
    externalId: null,
    createdBy: user.login,
  };
  applyRunFields(ctx, run, true);
  ctx.forge.state.addCheckRun(run);
  return { status: 201, body: ctx.forge.render.checkRun(run, pullsAt(ctx)(run.headSha)) };
}

function runParam(ctx: RequestContext): CheckRunRecord {
  const run = ctx.forge.state.checkRun(Number(ctx.params.check_run_id));
  if (!run) throw notFound();
  return run;
}

function updateCheckRun(ctx: RequestContext): Reply {
  actor(ctx);
  const run = runParam(ctx);
  applyRunFields(ctx, run, false);
  ctx.forge.state.changed();
  return { status: 200, body: ctx.forge.render.checkRun(run, pullsAt(ctx)(run.headSha)) };
}

function getCheckRun(ctx: RequestContext): Reply {
  const run = runParam(ctx);
  return { status: 200, body: ctx.forge.render.checkRun(run, pullsAt(ctx)(run.headSha)) };
}

async function listCheckRuns(ctx: RequestContext): Promise<Reply> {
  const sha = await commitFor(ctx, ctx.params.ref ?? "");
  const filter = queryEnum(ctx.query, "filter", ["latest", "all"] as const, "latest");
  const status = ctx.query.get("status");
  const name = ctx.query.get("check_name");
  let runs = filter === "latest" ? latestCheckRuns(ctx.forge, sha) : [...ctx.forge.state.checkRunsFor(sha)].reverse();
  if (name) runs = runs.filter((r) => r.name === name);
  if (status) runs = runs.filter((r) => r.status === status);
  const page = paginate(ctx, runs);
  const pulls = pullsAt(ctx);
  return {
    status: 200,
    body: { total_count: runs.length, check_runs: page.items.map((r) => ctx.forge.render.checkRun(r, pulls(r.headSha))) },
    headers: page.headers,
  };
}

async function createStatus(ctx: RequestContext): Promise<Reply> {
  const user = actor(ctx);
  const raw = ctx.params.sha ?? "";
  const sha = /^[0-9a-f]{40}$/.test(raw) ? await ctx.memo.resolveCommit(raw) : null;
  if (!sha) throw new HttpError(422, `No commit found for SHA: ${raw}`);
  const state = oneOf(requiredString(ctx.body, "state", "Status"), STATUS_STATES, "Status", "state")!;
  const context = optionalString(ctx.body, "context", "Status") || "default";
  const now = isoNow();
  const s: StatusRecord = {
    id: ctx.forge.state.nextId(),
    sha,
    state,
    context,
    description: (ctx.body.description as string | null | undefined) ?? null,
    targetUrl: (ctx.body.target_url as string | null | undefined) ?? null,
    creator: user.login,
    createdAt: now,
    updatedAt: now,
  };
  ctx.forge.state.addStatus(s);
  return { status: 201, body: ctx.forge.render.status(s), headers: { location: `${ctx.forge.render.repoApi}/statuses/${sha}` } };
}

async function listStatuses(ctx: RequestContext): Promise<Reply> {
  const sha = await commitFor(ctx, ctx.params.ref ?? "");
  const page = paginate(ctx, [...ctx.forge.state.statusesFor(sha)].reverse());
  return { status: 200, body: page.items.map((s) => ctx.forge.render.status(s)), headers: page.headers };
}

async function combinedStatus(ctx: RequestContext): Promise<Reply> {
  const sha = await commitFor(ctx, ctx.params.ref ?? "");
  const latest = latestStatuses(ctx.forge, sha);
  const page = paginate(ctx, latest);
  return { status: 200, body: ctx.forge.render.combinedStatus(sha, combinedState(latest), page.items), headers: page.headers };
}

export function registerCheckRoutes(router: Router): void {
  router
    .add("POST", `${REPO}/check-runs`, createCheckRun)
    .add("GET", `${REPO}/check-runs/{check_run_id}`, getCheckRun)
    .add("PATCH", `${REPO}/check-runs/{check_run_id}`, updateCheckRun)
    .add("GET", `${REPO}/commits/{ref}/check-runs`, listCheckRuns)
    .add("GET", `${REPO}/commits/{ref}/statuses`, listStatuses)
    .add("GET", `${REPO}/commits/{ref}/status`, combinedStatus)
    .add("POST", `${REPO}/statuses/{sha}`, createStatus);
}
