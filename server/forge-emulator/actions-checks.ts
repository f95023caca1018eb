// The check runs GitHub Actions posts for a `pull_request` run's jobs, kept in step with the jobs:
// the job's id as the check run's, its name, the app github-actions, the run as the check suite
// (actions-events.ts starts such runs; the runner calls this on every change of a run).
import type { ForgeEmulator } from "./core.js";
import { BOT_LOGIN, type RunRecord } from "./actions-types.js";

/** The check run of each job of a `pull_request` run, brought up to the job's state (called on every change of the run). */
export function postJobChecks(forge: ForgeEmulator, run: RunRecord): void {
  if (run.event !== "pull_request") return;
  for (const job of run.jobs) {
    const status = job.status;
    const conclusion = job.status === "completed" ? job.conclusion : null;
    const existing = forge.state.checkRun(job.id);
    if (existing) {
      if (existing.status === status && existing.conclusion === conclusion) continue;
      Object.assign(existing, { status, conclusion, startedAt: job.startedAt ?? existing.startedAt, completedAt: job.completedAt });
      continue;
    }
    forge.state.addCheckRun({
      id: job.id,
      headSha: run.headSha,
      name: job.name,
      status,
      conclusion,
      startedAt: job.startedAt ?? job.createdAt,
      completedAt: job.completedAt,
      title: null,
      summary: null,
      text: null,
      detailsUrl: `${forge.render.repoWeb}/actions/runs/${run.id}/job/${job.id}`,
      externalId: null,
      createdBy: BOT_LOGIN,
      actionsRun: run.id,
    });
  }
}
