// The `actions` runtime's doors: its preflight line (the workflow is there and can run, or the
// refusal naming `afk-mcp actions init`), and the pieces the CLI uses (the workflow file, the
// runner's `afk-mcp worker`). The folder: runtime.ts (the port), handle.ts (one run watched),
// reach.ts (what the fleet hands over, the shared run-ref reader), beat.ts (the heartbeat both
// sides speak), runner-worker.ts (the runner's side), workflow-file.ts (what `actions init` writes),
// worker-pin.ts (which afk-mcp its step runs, and whether the registry has it), run-failure.ts
// (why a run failed without the worker's last beat: its failing step and the end of its log).
import type { FleetConfig } from "../../../schemas/config.js";
import { UsageError } from "../../gh/errors.js";
import type { ActionsReach } from "./reach.js";
import { JOB_TIMEOUT_MINUTES } from "./workflow-file.js";
import { checkWorkerPin } from "./worker-pin.js";

export { ActionsRuntime } from "./runtime.js";
export type { ActionsReach } from "./reach.js";
export { checkWorkerPin } from "./worker-pin.js";

/** What the preflight reads of the repository: its Actions API, and a file at the base (the workflow, for the worker step's pin). */
export type ActionsLook = Pick<ActionsReach, "repo" | "api"> & { fileAtBase?: (path: string) => Promise<string | null> };

/** The preflight's line for runtime "actions"; throws the refusal when `refuse` and the workflow cannot be dispatched. */
export async function actionsStep(
  config: FleetConfig,
  reach: ActionsLook | null,
  refuse: boolean,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<string> {
  const file = config.actions.workflow;
  const fail = (text: string): string => {
    if (refuse) throw new UsageError(`project_start refused: ${text}`);
    return text;
  };
  if (!reach) return `runtime actions: each worker on a GitHub Actions runner, dispatched through .github/workflows/${file}`;
  // One conditional request per start.
  const workflow = await reach.api.workflow(file);
  if (!workflow)
    return fail(
      `runtime actions: no workflow .github/workflows/${file} on ${reach.repo}'s default branch; run \`afk-mcp actions init\` (it opens a PR adding it) and merge it, or set actions.workflow`,
    );
  if (workflow.state !== "active") return fail(`runtime actions: workflow ${file} is ${workflow.state}; enable it in the repository's Actions tab`);
  const limit = JOB_TIMEOUT_MINUTES * 60;
  const clamp =
    config.worker.max_runtime_seconds > limit
      ? `; worker.max_runtime_seconds (${config.worker.max_runtime_seconds}) is past the job's ${JOB_TIMEOUT_MINUTES} min, which ends an attempt first`
      : "";
  // Which afk-mcp the runs start, and whether the registry has it (said, never a refusal: a registry may be unreachable from here).
  const pin = reach.fileAtBase ? `; ${await checkWorkerPin(await reach.fileAtBase(workflow.path).catch(() => null), env)}` : "";
  return `runtime actions: each worker on a GitHub Actions runner through workflow "${workflow.name}" (${workflow.path}); nothing runs on this host; heartbeats every ${config.actions.beat_seconds} s${clamp}${pin}`;
}
