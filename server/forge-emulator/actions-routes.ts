// The GitHub Actions REST subset: workflows (read from `.github/workflows/` on the default
// branch), dispatch (inputs checked, the run returned with `return_run_details`), runs
// (list with filters, get, cancel) and their jobs. Runs execute on the forge's local runner.
import type { ForgeEmulator } from "./core.js";
import { renderJob, renderRun, renderWorkflow, runUrls } from "./actions-render.js";
import { runnerOf } from "./actions-runner.js";
import type { RunRecord } from "./actions-types.js";
import { HttpError, notFound } from "./http-errors.js";
import { optionalBoolean, requiredString } from "./input.js";
import { actor } from "./issues.js";
import { paginate } from "./paginate.js";
import { STATE_ONLY, type Reply, type RequestContext, type Router } from "./router.js";
import { actionsData, checkInputs, findWorkflow, readWorkflow, workflowFiles, WorkflowSyntaxError, type Workflow } from "./workflows.js";
import { newRun, rerunJobs, startRun } from "./actions-events.js";

const REPO = "/repos/{owner}/{repo}";
const CONCLUSIONS = new Set(["success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required", "stale"]);

async function defaultSha(ctx: RequestContext): Promise<string> {
  const sha = await ctx.memo.resolveCommit(`refs/heads/${ctx.forge.defaultBranch}`);
  if (!sha) throw notFound();
  return sha;
}

/** The workflow's name as its file says, or its path when the file does not parse. */
async function nameAt(forge: ForgeEmulator, sha: string, path: string): Promise<string> {
  try {
    return (await readWorkflow(forge, sha, path))?.name ?? path;
  } catch {
    return path;
  }
}

async function listWorkflows(ctx: RequestContext): Promise<Reply> {
  const sha = await defaultSha(ctx);
  const files = await workflowFiles(ctx.forge, sha);
  const page = paginate(ctx, files);
  const workflows = await Promise.all(page.items.map(async (f) => renderWorkflow(ctx.forge, f, await nameAt(ctx.forge, sha, f.path))));
  return { status: 200, body: { total_count: files.length, workflows }, headers: page.headers };
}

async function getWorkflow(ctx: RequestContext): Promise<Reply> {
  const sha = await defaultSha(ctx);
  const f = await findWorkflow(ctx.forge, sha, ctx.params.workflow_id ?? "");
  return { status: 200, body: renderWorkflow(ctx.forge, f, await nameAt(ctx.forge, sha, f.path)) };
}

/** A dispatch ref (branch, tag, or their full names) to its commit and branch. */
async function resolveRef(ctx: RequestContext, ref: string): Promise<{ sha: string; branch: string | null }> {
  const short = ref.replace(/^refs\/(heads|tags)\//, "");
  const tips = await ctx.memo.branchTips();
  if (!ref.startsWith("refs/tags/") && tips.has(short)) return { sha: tips.get(short)!, branch: short };
  const tag = ref.startsWith("refs/heads/") ? null : await ctx.memo.resolveCommit(`refs/tags/${short}`);
  if (tag) return { sha: tag, branch: null };
  throw new HttpError(422, `No ref found for: ${ref}`);
}

async function dispatch(ctx: RequestContext): Promise<Reply> {
  const user = actor(ctx);
  const { forge } = ctx;
  const file = await findWorkflow(forge, await defaultSha(ctx), ctx.params.workflow_id ?? "");
  const ref = requiredString(ctx.body, "ref", "Workflow");
  const details = optionalBoolean(ctx.body, "return_run_details", "Workflow") === true;
  const at = await resolveRef(ctx, ref);
  let wf: Workflow | null;
  try {
    wf = await readWorkflow(forge, at.sha, file.path);
  } catch (err) {
    if (err instanceof WorkflowSyntaxError) throw new HttpError(422, err.message);
    throw err;
  }
  if (!wf) throw new HttpError(422, `No workflow file ${file.path} at ref ${ref}`);
  if (wf.dispatchInputs === null) throw new HttpError(422, "Workflow does not have 'workflow_dispatch' trigger");
  const inputs = checkInputs(wf.dispatchInputs, ctx.body.inputs);
  const run = await newRun(forge, file, wf, at, "workflow_dispatch", user.login, inputs);
  startRun(forge, run, wf);
  if (!details) return { status: 204 };
  const urls = runUrls(forge, run.id);
  return { status: 200, body: { workflow_run_id: run.id, run_url: urls.api, html_url: urls.web } };
}

function runsMatching(ctx: RequestContext, workflowId: number | null): RunRecord[] {
  const q = ctx.query;
  const [branch, event, status, sha, who] = ["branch", "event", "status", "head_sha", "actor"].map((k) => q.get(k));
  return [...actionsData(ctx.forge).runs]
    .reverse()
    .filter(
      (r) =>
        (workflowId === null || r.workflowId === workflowId) &&
        (!branch || r.headBranch === branch) &&
        (!event || r.event === event) &&
        (!sha || r.headSha === sha) &&
        (!who || r.actor.toLowerCase() === who.toLowerCase()) &&
        (!status || (CONCLUSIONS.has(status) ? r.conclusion === status : r.status === status)),
    );
}

function listRuns(ctx: RequestContext, workflowId: number | null): Reply {
  const runs = runsMatching(ctx, workflowId);
  const page = paginate(ctx, runs);
  return { status: 200, body: { total_count: runs.length, workflow_runs: page.items.map((r) => renderRun(ctx.forge, r)) }, headers: page.headers };
}

async function listWorkflowRuns(ctx: RequestContext): Promise<Reply> {
  const f = await findWorkflow(ctx.forge, await defaultSha(ctx), ctx.params.workflow_id ?? "");
  return listRuns(ctx, f.id);
}

function runParam(ctx: RequestContext): RunRecord {
  const run = actionsData(ctx.forge).runs.find((r) => r.id === Number(ctx.params.run_id));
  if (!run) throw notFound();
  return run;
}

function cancelRun(ctx: RequestContext): Reply {
  actor(ctx);
  const run = runParam(ctx);
  if (run.status === "completed" || !runnerOf(ctx.forge).cancel(run.id)) throw new HttpError(409, "Cannot cancel a workflow run that is completed.");
  return { status: 202, body: {} };
}

function listJobs(ctx: RequestContext): Reply {
  const run = runParam(ctx);
  const page = paginate(ctx, run.jobs);
  return { status: 200, body: { total_count: run.jobs.length, jobs: page.items.map((j) => renderJob(ctx.forge, run, j)) }, headers: page.headers };
}

function jobParam(ctx: RequestContext): { run: RunRecord; job: RunRecord["jobs"][number] } {
  const id = Number(ctx.params.job_id);
  for (const run of actionsData(ctx.forge).runs) {
    const job = run.jobs.find((j) => j.id === id) ?? run.earlierJobs?.find((j) => j.id === id);
    if (job) return { run, job };
  }
  throw notFound();
}

function getJob(ctx: RequestContext): Reply {
  const { run, job } = jobParam(ctx);
  return { status: 200, body: renderJob(ctx.forge, run, job) };
}

/** As on GitHub, a redirect to where the plain-text log can be read (here: the control surface). */
function jobLogs(ctx: RequestContext): Reply {
  const { job } = jobParam(ctx);
  return { status: 302, headers: { location: `${ctx.requestBase}/_forge/actions/jobs/${job.id}/logs` } };
}

/** Re-runs the run's failed jobs (and the jobs after them) as its next attempt: 201 with an empty object, as GitHub answers. */
async function rerunFailed(ctx: RequestContext): Promise<Reply> {
  actor(ctx);
  const run = runParam(ctx);
  await ctx.forge.writeLock.run(() => rerunJobs(ctx.forge, run, null));
  return { status: 201, body: {} };
}

/** Re-runs one job (and the jobs after it) of a completed run as its next attempt; a job of an earlier attempt is refused. */
async function rerunJob(ctx: RequestContext): Promise<Reply> {
  actor(ctx);
  const { run, job } = jobParam(ctx);
  if (!run.jobs.includes(job)) throw new HttpError(403, "This job is from an earlier attempt of its run and cannot be re-run");
  await ctx.forge.writeLock.run(() => rerunJobs(ctx.forge, run, job.id));
  return { status: 201, body: {} };
}

export function registerActionsRoutes(router: Router): void {
  router
    .add("GET", `${REPO}/actions/workflows`, listWorkflows)
    .add("GET", `${REPO}/actions/workflows/{workflow_id}`, getWorkflow)
    .add("POST", `${REPO}/actions/workflows/{workflow_id}/dispatches`, dispatch)
    .add("GET", `${REPO}/actions/workflows/{workflow_id}/runs`, listWorkflowRuns)
    .add("GET", `${REPO}/actions/runs`, (ctx) => listRuns(ctx, null), STATE_ONLY)
    .add("GET", `${REPO}/actions/runs/{run_id}`, (ctx) => ({ status: 200, body: renderRun(ctx.forge, runParam(ctx)) }), STATE_ONLY)
    .add("POST", `${REPO}/actions/runs/{run_id}/cancel`, cancelRun)
    .add("POST", `${REPO}/actions/runs/{run_id}/rerun-failed-jobs`, rerunFailed)
    .add("POST", `${REPO}/actions/jobs/{job_id}/rerun`, rerunJob)
    .add("GET", `${REPO}/actions/runs/{run_id}/jobs`, listJobs, STATE_ONLY)
    .add("GET", `${REPO}/actions/jobs/{job_id}`, getJob, STATE_ONLY)
    .add("GET", `${REPO}/actions/jobs/{job_id}/logs`, jobLogs);
}
