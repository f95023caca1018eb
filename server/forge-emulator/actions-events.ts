// What GitHub Actions does beyond a dispatch: a pull request opened, reopened or moved runs the
// workflows that have a `pull_request` trigger on its head; each job of such a run posts a check
// run on that head (the app `github-actions`, the job's id as the check run's, its name as the
// check's, the workflow run as its check suite); and a run's failed jobs, or one job, can be run
// again as a new attempt of the same run (`run_attempt` + 1), whose jobs post new check runs of
// the same names in the same suite.
import type { ForgeEmulator } from "./core.js";
import { runnerOf } from "./actions-runner.js";
import type { JobRecord, RunRecord } from "./actions-types.js";
import { postJobChecks } from "./actions-checks.js";
import { contexts } from "./actions-steps.js";
import { HttpError } from "./http-errors.js";
import { isoNow, type IssueRecord } from "./state.js";
import { ExpressionError, interpolate } from "./workflow-expr.js";
import { actionsData, readWorkflow, workflowFiles, WorkflowSyntaxError, type Workflow } from "./workflows.js";

/** A run of `wf` at `at`, its jobs queued (not yet handed to the runner). Throws 422 for an expression that cannot be evaluated. */
export async function newRun(
  forge: ForgeEmulator,
  file: { path: string; id: number },
  wf: Workflow,
  at: { sha: string; branch: string | null },
  event: string,
  actor: string,
  inputs: Record<string, string | boolean | number>,
): Promise<RunRecord> {
  const data = actionsData(forge);
  const info = await forge.git.commitInfo(at.sha);
  const now = isoNow();
  const run: RunRecord = {
    id: forge.state.nextId(),
    runNumber: data.nextRunNumber++,
    workflowId: file.id,
    path: file.path,
    name: wf.name,
    displayTitle: wf.name,
    event,
    headBranch: at.branch,
    headSha: at.sha,
    headCommit: {
      tree: info.tree,
      message: info.message,
      timestamp: info.committer.date,
      author: { name: info.author.name, email: info.author.email },
      committer: { name: info.committer.name, email: info.committer.email },
    },
    status: "queued",
    conclusion: null,
    actor,
    inputs,
    concurrencyGroup: null,
    cancelInProgress: wf.concurrency?.cancelInProgress ?? false,
    createdAt: now,
    updatedAt: now,
    startedAt: null,
    jobs: [],
  };
  // Expressions outside run: scripts see inputs and github, never secrets or a token.
  const ctxs = { ...contexts(forge, run, "", "", {}), secrets: {} };
  try {
    if (wf.concurrency) run.concurrencyGroup = interpolate(wf.concurrency.group, ctxs);
    if (wf.runName) run.displayTitle = interpolate(wf.runName, ctxs);
  } catch (err) {
    if (err instanceof ExpressionError) throw new HttpError(422, `${file.path}: ${err.message}`);
    throw err;
  }
  run.jobs = wf.jobs.map((j) => queuedJob(forge, j, 1, now));
  return run;
}

function queuedJob(forge: ForgeEmulator, spec: Workflow["jobs"][number], attempt: number, now: string): JobRecord {
  return {
    id: forge.state.nextId(),
    key: spec.key,
    name: spec.name,
    status: "queued",
    conclusion: null,
    createdAt: now,
    startedAt: null,
    completedAt: null,
    steps: spec.steps.map((s, i) => ({ number: i + 1, name: s.name, status: "queued", conclusion: null, startedAt: null, completedAt: null })),
    ...(attempt > 1 ? { runAttempt: attempt } : {}),
  };
}

/** Hands a new run to the runner (its jobs' check runs are posted as it goes). */
export function startRun(forge: ForgeEmulator, run: RunRecord, wf: Workflow): void {
  actionsData(forge).runs.push(run);
  postJobChecks(forge, run);
  forge.state.changed();
  runnerOf(forge).enqueue(run, wf);
}

/**
 * A pull request event (`opened`, `synchronize`, `reopened`): every workflow on the PR's head
 * whose `pull_request` trigger lists the action runs there. A workflow file that does not parse
 * runs nothing (GitHub reports it on the run list; this forge leaves it out).
 */
export async function pullRequestEvent(forge: ForgeEmulator, issue: IssueRecord, action: string): Promise<void> {
  const pull = issue.pull;
  if (!pull || issue.state !== "open") return;
  for (const file of await workflowFiles(forge, pull.headSha)) {
    let wf: Workflow | null;
    try {
      wf = await readWorkflow(forge, pull.headSha, file.path);
    } catch (err) {
      if (err instanceof WorkflowSyntaxError) continue;
      throw err;
    }
    if (!wf?.pullRequestTypes?.includes(action)) continue;
    try {
      startRun(forge, await newRun(forge, file, wf, { sha: pull.headSha, branch: pull.head }, "pull_request", issue.author, {}), wf);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
    }
  }
}

const FAILED = new Set(["failure", "cancelled", "timed_out"]);

/**
 * Runs jobs of a completed run again as its next attempt: `only` one job (by id), else every
 * failed job; the jobs after a re-run one (they ran after it, in file order) run again too. The
 * jobs that passed are kept. 403 while the run is not completed, as GitHub refuses it then.
 */
export async function rerunJobs(forge: ForgeEmulator, run: RunRecord, only: number | null): Promise<void> {
  if (run.status !== "completed") throw new HttpError(403, "This workflow is already running");
  const first = run.jobs.findIndex((j) => (only === null ? FAILED.has(j.conclusion ?? "") || j.conclusion === "skipped" : j.id === only));
  if (first < 0) throw new HttpError(403, only === null ? "This workflow run has no failed jobs to re-run" : "This job cannot be re-run");
  const wf = await readWorkflow(forge, run.headSha, run.path).catch(() => null);
  if (!wf || wf.jobs.length !== run.jobs.length) throw new HttpError(403, "The workflow file of this run can no longer be read");
  const attempt = (run.runAttempt ?? 1) + 1;
  const now = isoNow();
  const replaced = run.jobs.slice(first);
  run.earlierJobs = [...(run.earlierJobs ?? []), ...replaced.map((j) => ({ ...j, runAttempt: j.runAttempt ?? attempt - 1 }))];
  run.jobs = [...run.jobs.slice(0, first), ...wf.jobs.slice(first).map((spec) => queuedJob(forge, spec, attempt, now))];
  Object.assign(run, { runAttempt: attempt, status: "queued", conclusion: null, updatedAt: now, startedAt: null });
  postJobChecks(forge, run);
  forge.state.changed();
  runnerOf(forge).enqueue(run, wf);
}
