// What one step of the local runner may do, and the environment it runs with. `uses:` is
// limited to actions whose work is already done (actions/checkout: the workspace is a clone
// at the run's commit; actions/setup-node: node is on PATH); `run:` scripts must not hold
// `${{ }}` expressions: GitHub splices them into the script text, which turns an input into
// shell code, so the subset refuses them and values reach scripts through `env:` only.
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ForgeEmulator } from "./core.js";
import type { RunRecord } from "./actions-types.js";
import { hasExpression, interpolate, type ExprContext } from "./workflow-expr.js";
import { actionsData, type Workflow, type WorkflowJob, type WorkflowStep } from "./workflows.js";

export interface JobEnv {
  workspace: string;
  temp: string;
  home: string;
  /** What earlier steps wrote to $GITHUB_ENV and $GITHUB_PATH. */
  exported: Record<string, string>;
  paths: string[];
}

/** The files a step may write to ($GITHUB_ENV, $GITHUB_PATH, $GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY). */
export function stepFiles(where: JobEnv, number: number): Record<"env" | "path" | "output" | "summary", string> {
  const at = (kind: string): string => join(where.temp, `step-${number}.${kind}`);
  return { env: at("env"), path: at("path"), output: at("output"), summary: at("summary") };
}

/** Reads what a step wrote to $GITHUB_ENV (`NAME=value` and `NAME<<DELIMITER` blocks) and $GITHUB_PATH into the job's state. */
export async function collectExports(where: JobEnv, number: number): Promise<void> {
  const files = stepFiles(where, number);
  const lines = (await readFile(files.env, "utf8").catch(() => "")).split("\n");
  for (let i = 0; i < lines.length; i++) {
    const block = /^([A-Za-z_][A-Za-z0-9_]*)<<(.+)$/.exec(lines[i]!);
    const one = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(lines[i]!);
    if (block) {
      const end = lines.indexOf(block[2]!, i + 1);
      const stop = end < 0 ? lines.length : end;
      where.exported[block[1]!] = lines.slice(i + 1, stop).join("\n");
      i = stop;
    } else if (one) where.exported[one[1]!] = one[2]!;
  }
  const added = (await readFile(files.path, "utf8").catch(() => ""))
    .split("\n")
    .map((p) => p.trim())
    .filter(Boolean);
  where.paths.unshift(...added.reverse());
}

let nodeOnPath: boolean | null = null;

/** Why a step cannot run here (a message for the job's log), or null when it can. */
export function stepProblem(step: WorkflowStep): string | null {
  if (step.run !== undefined) {
    if (hasExpression(step.run)) {
      return "the local forge does not evaluate ${{ }} expressions inside run: scripts (spliced into a script they become shell code); pass the value through env: and read it as $NAME";
    }
    if (step.shell !== undefined && !["bash", "sh"].includes(step.shell)) return `shell: ${step.shell} is outside the local runner's subset (bash, sh)`;
    return null;
  }
  const action = (step.uses ?? "").split("@")[0]!;
  if (action === "actions/checkout") return null;
  if (action === "actions/setup-node") {
    nodeOnPath ??= spawnSync("node", ["--version"], { stdio: "ignore" }).status === 0;
    return nodeOnPath ? null : "actions/setup-node: node is not on the forge's PATH";
  }
  return `uses: ${step.uses} is outside the local runner's subset (actions/checkout and actions/setup-node are accepted as no-ops)`;
}

/** The expression contexts of a run: inputs, secrets, github, and the env built so far. */
export function contexts(forge: ForgeEmulator, run: RunRecord, token: string, workspace: string, env: Record<string, string>): ExprContext {
  const { urls } = forge;
  const ref = run.headBranch ? `refs/heads/${run.headBranch}` : run.headSha;
  return {
    inputs: run.inputs,
    secrets: { ...actionsData(forge).secrets, GITHUB_TOKEN: token },
    github: {
      repository: urls.fullName,
      repository_owner: urls.owner,
      ref,
      ref_name: run.headBranch ?? run.headSha,
      sha: run.headSha,
      run_id: String(run.id),
      run_number: String(run.runNumber),
      run_attempt: String(run.runAttempt ?? 1),
      actor: run.actor,
      event_name: run.event,
      server_url: urls.web,
      api_url: urls.api,
      workspace,
      workflow: run.name,
    },
    env,
  };
}

/** The environment of a `run:` step: base, GITHUB_*, then workflow, job and step `env:` evaluated. */
export function runEnvironment(
  forge: ForgeEmulator,
  run: RunRecord,
  wf: Workflow,
  job: WorkflowJob,
  step: WorkflowStep,
  number: number,
  where: JobEnv,
  token: string,
): Record<string, string> {
  const files = stepFiles(where, number);
  const ctx = contexts(forge, run, token, where.workspace, {});
  const github = ctx.github as Record<string, string>;
  const env: Record<string, string> = {
    PATH: [...where.paths, process.env.PATH ?? "/usr/bin:/bin"].join(":"),
    HOME: where.home,
    LANG: process.env.LANG ?? "C.UTF-8",
    CI: "true",
    GITHUB_ACTIONS: "true",
    RUNNER_OS: "Linux",
    RUNNER_TEMP: where.temp,
    GITHUB_REPOSITORY: github.repository!,
    GITHUB_REPOSITORY_OWNER: github.repository_owner!,
    GITHUB_REF: github.ref!,
    GITHUB_REF_NAME: github.ref_name!,
    GITHUB_SHA: run.headSha,
    GITHUB_RUN_ID: String(run.id),
    GITHUB_RUN_NUMBER: String(run.runNumber),
    GITHUB_RUN_ATTEMPT: String(run.runAttempt ?? 1),
    GITHUB_ACTOR: run.actor,
    GITHUB_EVENT_NAME: run.event,
    GITHUB_WORKFLOW: run.name,
    GITHUB_JOB: job.key,
    GITHUB_SERVER_URL: forge.urls.web,
    GITHUB_API_URL: forge.urls.api,
    GITHUB_WORKSPACE: where.workspace,
    GITHUB_ENV: files.env,
    GITHUB_PATH: files.path,
    GITHUB_OUTPUT: files.output,
    GITHUB_STEP_SUMMARY: files.summary,
    GIT_TERMINAL_PROMPT: "0",
  };
  for (const layer of [wf.env, job.env, null, step.env]) {
    // Between the job's env: and the step's, what earlier steps exported (taken as written).
    if (layer === null) {
      Object.assign(env, where.exported);
      continue;
    }
    for (const [k, v] of Object.entries(layer)) {
      try {
        env[k] = interpolate(v, { ...ctx, env });
      } catch (err) {
        throw new Error(`env ${k}: ${(err as Error).message}`);
      }
    }
  }
  return env;
}
