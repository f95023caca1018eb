// What the runtime in force lets a worker reach, for the dry run's and the start's "will run":
// the paths it may write, what it sees read-only, what it cannot see, the hosts it may call;
// "unconfined" for local. Read from the same config and rules a birth builds the sandbox from
// (index.ts sandboxedWorker, plan.ts bwrapArgs, hosts.ts allowlistFor), so it says what a
// worker will meet.
import { homedir } from "node:os";
import type { FleetConfig, RuntimeName } from "../../../schemas/config.js";
import { stateDir } from "../../paths.js";
import { allowlistFor } from "./hosts.js";
import { pathEntriesToShow } from "./plan.js";

type Env = Readonly<Record<string, string | undefined>>;

export interface RuntimeReach {
  name: RuntimeName;
  unconfined: boolean;
  writable: string[];
  hidden: string[];
  read_only: string[];
  hosts: string[];
}

/**
 * `engines`: the engines a worker may run (null: an opaque worker_command, which may run any of
 * them); `workerEnv`: the environment a worker gets (its `*_BASE_URL` hosts are let through).
 */
export function runtimeReach(runtime: RuntimeName, config: FleetConfig, hostEnv: Env, workerEnv: Env, engines: readonly (string | null)[]): RuntimeReach {
  if (runtime !== "sandbox") {
    // local: this user's own reach; actions: a runner of GitHub's, nothing of this host.
    return { name: runtime, unconfined: runtime === "local", writable: [], hidden: [], read_only: [], hosts: [] };
  }
  const home = [...new Set([hostEnv.HOME, homedir()].filter((h): h is string => typeof h === "string" && h.startsWith("/")))];
  const state = stateDir(hostEnv as NodeJS.ProcessEnv);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(workerEnv)) if (v !== undefined) env[k] = v;
  const hosts = new Set<string>();
  for (const engine of engines.length > 0 ? engines : [null]) for (const h of allowlistFor(engine, env, config.sandbox.allow_hosts)) hosts.add(h);
  return {
    name: runtime,
    unconfined: false,
    writable: ["the issue's worktree", "its own HOME and git dir", "an empty private /tmp", ...config.sandbox.allow_write],
    hidden: [...home, state, "the work repository and the other worktrees"],
    read_only: ["every other path", ...pathEntriesToShow(env.PATH ?? "", home, [state]).map((p) => `${p} (on PATH)`), ...config.sandbox.allow_read],
    hosts: [...hosts],
  };
}
