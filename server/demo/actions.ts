// `afk-mcp demo --runtime actions`: before the fleet starts, the demo does what a user does once
// per repository — `afk-mcp actions init` proposes the worker workflow as a PR — and merges it,
// so every worker of the demo is a workflow run on the embedded forge's Actions runner (a fresh
// clone per run, this package's own `afk-mcp worker` in it) and none runs on the host. After
// the drain it reads back what ran there, for the report.
import { actionsInit } from "../host/actions-init.js";
import { connect } from "../host/connection.js";
import { silentLogger } from "../gh/octokit.js";
import type { RunningForge } from "../forge-emulator/index.js";
import { ENGINE_SECRETS } from "../runtimes/actions/workflow-file.js";
import { packageWorkerCommand } from "./worker-command.js";

export interface ActionsDemoRuns {
  /** Workflow runs dispatched for the demo's workers. */
  runs: number;
  /** Runs per conclusion (success, failure, cancelled…; "in_progress" for one not finished). */
  conclusions: Record<string, number>;
  /**
   * Whether every attempt the issues record (their `afk-attempt/<n>` labels) was exactly one run
   * titled for it ("afk #N attempt K"), and no run was anything else: the proof that no worker ran
   * on the host.
   */
  one_run_per_attempt: boolean;
  /** Where that fails: the attempts with no run, and the runs no attempt accounts for (their titles). */
  mismatch?: { attempts_without_run: string[]; runs_without_attempt: string[] };
}

type Api = (method: string, path: string, body?: unknown) => Promise<unknown>;

/** Proposes the worker workflow through `actions init` and merges its PR; returns the PR's number. */
export async function installWorkflow(forge: RunningForge, repo: string, api: Api, stateDir: string): Promise<number> {
  const conn = await connect({
    repo,
    env: { GITHUB_API_URL: forge.apiUrl, GITHUB_TOKEN: forge.token, AFK_STATE_DIR: stateDir },
    logger: silentLogger,
  });
  const proposed = await actionsInit(conn, { worker: packageWorkerCommand() });
  if (proposed.status !== "proposed" || !proposed.pr) throw new Error(`demo: actions init did not propose the workflow: ${proposed.message}`);
  // One request: the demo merges what a user would review and merge.
  await api("PUT", `/repos/${repo}/pulls/${proposed.pr.number}/merge`, { merge_method: "merge" });
  return proposed.pr.number;
}

/**
 * A real CLI's environment on the runner (demo --engine with --runtime actions): its API key
 * becomes a repository secret of the forge, as a user sets it with `gh secret set` (the
 * workflow passes the engine secrets), and the names of the rest are returned for config
 * `actions.env` (HOME and TMPDIR are the runner's own).
 */
export async function runnerEngineEnv(api: Api, env: Readonly<Record<string, string>>): Promise<string[]> {
  const secret = (name: string) => (ENGINE_SECRETS as readonly string[]).includes(name);
  // One request per secret: the forge's control surface (GitHub's own wants the value sealed with the repository's public key).
  for (const [name, value] of Object.entries(env)) if (secret(name)) await api("POST", "/_forge/secrets", { name, value });
  return Object.keys(env).filter((name) => !secret(name) && name !== "HOME" && name !== "TMPDIR");
}

/**
 * What ran on the forge's runner: every workflow run of the repository (pages of 100), matched
 * against the attempts each issue used (`attempts`: issue number → attempts).
 */
export async function actionsRuns(api: Api, repo: string, attempts: ReadonlyMap<number, number>): Promise<ActionsDemoRuns> {
  const conclusions: Record<string, number> = {};
  const titles: string[] = [];
  let runs = 0;
  for (let page = 1; page < 50; page += 1) {
    // One request per page of runs.
    const body = (await api("GET", `/repos/${repo}/actions/runs?per_page=100&page=${page}`)) as {
      workflow_runs: Array<{ status: string; conclusion: string | null; display_title: string }>;
    };
    for (const r of body.workflow_runs) {
      runs += 1;
      titles.push(r.display_title);
      const end = r.conclusion ?? r.status;
      conclusions[end] = (conclusions[end] ?? 0) + 1;
    }
    if (body.workflow_runs.length < 100) break;
  }
  const expected = [...attempts].flatMap(([issue, n]) => Array.from({ length: n }, (_, i) => `afk #${issue} attempt ${i + 1}`));
  const unmatched = [...titles];
  const attemptsWithoutRun = expected.filter((title) => {
    const at = unmatched.indexOf(title);
    if (at < 0) return true;
    unmatched.splice(at, 1);
    return false;
  });
  const ok = attemptsWithoutRun.length === 0 && unmatched.length === 0;
  return {
    runs,
    conclusions,
    one_run_per_attempt: ok,
    ...(ok ? {} : { mismatch: { attempts_without_run: attemptsWithoutRun, runs_without_attempt: unmatched } }),
  };
}
