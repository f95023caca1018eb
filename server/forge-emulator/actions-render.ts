// GitHub-shaped JSON for the Actions subset: workflows, workflow runs, jobs.
import type { ForgeEmulator } from "./core.js";
import type { JobRecord, RunRecord } from "./actions-types.js";
import { nodeId } from "./render.js";

type Json = Record<string, unknown>;

export function renderWorkflow(forge: ForgeEmulator, w: { path: string; id: number; createdAt: string }, name: string): Json {
  const api = forge.render.repoApi;
  const web = forge.render.repoWeb;
  return {
    id: w.id,
    node_id: nodeId("W", w.id),
    name,
    path: w.path,
    state: "active",
    created_at: w.createdAt,
    updated_at: w.createdAt,
    url: `${api}/actions/workflows/${w.id}`,
    html_url: `${web}/blob/${forge.defaultBranch}/${w.path}`,
    badge_url: `${web}/workflows/${w.path.split("/").pop()}/badge.svg`,
  };
}

export function runUrls(forge: ForgeEmulator, id: number): { api: string; web: string } {
  return { api: `${forge.render.repoApi}/actions/runs/${id}`, web: `${forge.render.repoWeb}/actions/runs/${id}` };
}

export function renderRun(forge: ForgeEmulator, r: RunRecord): Json {
  const { api, web } = runUrls(forge, r.id);
  const repo = forge.render.runRepository();
  const c = r.headCommit;
  return {
    id: r.id,
    name: r.name,
    node_id: nodeId("WFR", r.id),
    check_suite_id: r.id,
    check_suite_node_id: nodeId("CS", r.id),
    head_branch: r.headBranch,
    head_sha: r.headSha,
    path: r.path,
    display_title: r.displayTitle,
    run_number: r.runNumber,
    run_attempt: r.runAttempt ?? 1,
    referenced_workflows: [],
    event: r.event,
    status: r.status,
    conclusion: r.conclusion,
    workflow_id: r.workflowId,
    url: api,
    html_url: web,
    pull_requests: [],
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    actor: forge.render.user(r.actor),
    triggering_actor: forge.render.user(r.actor),
    run_started_at: r.startedAt ?? r.createdAt,
    jobs_url: `${api}/jobs`,
    logs_url: `${api}/logs`,
    check_suite_url: `${forge.render.repoApi}/check-suites/${r.id}`,
    artifacts_url: `${api}/artifacts`,
    cancel_url: `${api}/cancel`,
    rerun_url: `${api}/rerun`,
    previous_attempt_url: (r.runAttempt ?? 1) > 1 ? `${api}/attempts/${(r.runAttempt ?? 1) - 1}` : null,
    workflow_url: `${forge.render.repoApi}/actions/workflows/${r.workflowId}`,
    head_commit: { id: r.headSha, tree_id: c.tree, message: c.message, timestamp: c.timestamp, author: c.author, committer: c.committer },
    repository: repo,
    head_repository: repo,
  };
}

export function renderJob(forge: ForgeEmulator, r: RunRecord, j: JobRecord): Json {
  const { api, web } = runUrls(forge, r.id);
  const assigned = j.status !== "queued";
  return {
    id: j.id,
    run_id: r.id,
    run_url: api,
    run_attempt: j.runAttempt ?? 1,
    node_id: nodeId("CR", j.id),
    head_sha: r.headSha,
    url: `${forge.render.repoApi}/actions/jobs/${j.id}`,
    html_url: `${web}/job/${j.id}`,
    status: j.status,
    conclusion: j.conclusion,
    created_at: j.createdAt,
    started_at: j.startedAt ?? j.createdAt,
    completed_at: j.completedAt,
    name: j.name,
    steps: j.steps.map((s) => ({
      name: s.name,
      status: s.status,
      conclusion: s.conclusion,
      number: s.number,
      started_at: s.startedAt,
      completed_at: s.completedAt,
    })),
    check_run_url: `${forge.render.repoApi}/check-runs/${j.id}`,
    labels: ["ubuntu-latest"],
    runner_id: assigned ? 1 : null,
    runner_name: assigned ? "afk-forge-local" : null,
    runner_group_id: assigned ? 1 : null,
    runner_group_name: assigned ? "local" : null,
    workflow_name: r.name,
    head_branch: r.headBranch,
  };
}
