// A registration acts with the environment of the session that made it, not the daemon's: its
// GitHub token and API URL, and the variables its workers get (PATH, HOME, the passthrough
// names). The daemon keeps only those, never logs them, and stores them owner-only beside the
// registration, so a daemon restarted after a crash resumes each project as its session left it.
import { BASE_ENV_NAMES, matchesEnvPattern } from "../agent/env.js";

/** What the fleet itself reads from a session's environment to reach GitHub. */
const CREDENTIAL_NAMES: readonly string[] = ["GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL", "GH_HOST", "GH_CONFIG_DIR"];

/** The session's variables a registration needs: credentials, the worker base set, the passthrough names. */
export function retainedEnv(env: Readonly<Record<string, string | undefined>>, passthrough: readonly string[]): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (CREDENTIAL_NAMES.includes(name) || BASE_ENV_NAMES.includes(name) || name.startsWith("LC_") || passthrough.some((p) => matchesEnvPattern(name, p))) {
      kept[name] = value;
    }
  }
  return kept;
}

/** A session's environment as sent over the socket: string values only. */
export function sessionEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (typeof value === "string" && name !== "" && !name.includes("=")) out[name] = value;
  return out;
}
