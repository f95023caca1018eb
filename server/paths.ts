// Where the host keeps local caches and logs: AFK_STATE_DIR, else $XDG_STATE_HOME/afk-mcp,
// else ~/.local/state/afk-mcp. Nothing here is durable fleet state: GitHub holds that.
import { homedir } from "node:os";
import { join } from "node:path";

export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AFK_STATE_DIR) return env.AFK_STATE_DIR;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, "afk-mcp");
  return join(homedir(), ".local", "state", "afk-mcp");
}

/** The private bare repository that holds one repo's fleet refs and base branch. */
export function controlRepoDir(root: string, owner: string, name: string): string {
  return join(root, "repos", owner.toLowerCase(), `${name.toLowerCase()}.git`);
}

/** The daemon's directory in a state dir: its socket, lock, registrations and its lane (`daemon.jsonl`, logs {lane: "daemon"}). */
export function daemonDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), "daemon");
}
