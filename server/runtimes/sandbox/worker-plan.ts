// One worker's sandbox plan as the host builds it (the mounts of plan.ts for this config and
// host): at a birth (index.ts) and, for a worker not yet born, at the start's preflight (preflight.ts).
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FleetConfig } from "../../../schemas/config.js";
import { stateDir } from "../../paths.js";
import type { PlanInput } from "./plan.js";

type Env = Readonly<Record<string, string | undefined>>;

/** afk-mcp's own package, shown read-only: the demo's scripted worker runs from it. */
const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");

/**
 * One worker's sandbox plan: hidden, the homes and the fleet's directories (its state dir, the
 * worktrees, the work repository: `keepOut`, never shown again); shown, afk-mcp's own package and
 * `sandbox.allow_read`; writable, `sandbox.allow_write` and the worker's own places.
 */
export function planFor(
  config: FleetConfig,
  hostEnv: Env,
  at: { worktree: string; runDir: string; sandboxDir: string; commonDir: string },
): { home: string[]; keepOut: string[]; plan: PlanInput } {
  const home = [hostEnv.HOME, homedir()].filter((h): h is string => typeof h === "string" && h.startsWith("/"));
  const keepOut = [stateDir(hostEnv as NodeJS.ProcessEnv), dirname(at.worktree), at.commonDir];
  const plan: PlanInput = {
    ...at,
    deny: [...home, ...keepOut],
    allowRead: [PACKAGE_ROOT, ...config.sandbox.allow_read],
    allowWrite: config.sandbox.allow_write,
  };
  return { home, keepOut, plan };
}
