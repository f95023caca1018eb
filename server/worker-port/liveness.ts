// Is a quiet worker thinking, working, or hung? A pure decision over the facts a runtime's
// observation gives (server/worker-port/port.ts): the last activity, the start, and whether a part
// of the worker is busy. Quiet alone is never proof of a hang: a 20-minute `cargo test` prints
// nothing while it compiles.

export type LivenessState =
  /** Activity within `stallSeconds`. */
  | "active"
  /** Quiet past `stallSeconds` (and not busy): report it, do nothing yet. */
  | "stall_candidate"
  /** Quiet past `stallSeconds`, but a descendant is burning CPU: leave it. */
  | "busy"
  /** Quiet past `killSeconds` with no busy descendant, or past the max runtime: end it. */
  | "kill";

export interface LivenessInput {
  /** Epoch ms. */
  now: number;
  /** Epoch ms of the newest sign of life (see `activityAt`). */
  activityAt: number | null;
  /** Epoch ms the worker was started. */
  startedAt: number;
  stallSeconds: number;
  killSeconds: number;
  maxRuntimeSeconds: number;
  /** A descendant is consuming CPU ("unknown" readings are passed as false). */
  busyDescendant: boolean;
}

export interface LivenessDecision {
  state: LivenessState;
  /** Why a kill: the wall-clock limit, or silence with nothing busy. */
  cause: "max_runtime" | "quiet" | null;
  quietSeconds: number;
  runtimeSeconds: number;
}

/** The newest of several epoch-ms timestamps (output, worktree mtime, last commit); null if none. */
export function activityAt(...times: ReadonlyArray<number | Date | null | undefined>): number | null {
  let newest: number | null = null;
  for (const t of times) {
    const ms = t instanceof Date ? t.getTime() : t;
    if (typeof ms === "number" && Number.isFinite(ms) && (newest === null || ms > newest)) newest = ms;
  }
  return newest;
}

/**
 * Pure. The max runtime is absolute (busy or not); otherwise quiet time — measured from the
 * newer of the last activity and the start, so a fresh worker on an old worktree is not already
 * quiet — is compared with the stall and kill thresholds, and a busy descendant vetoes both.
 */
export function assessLiveness(input: LivenessInput): LivenessDecision {
  const runtimeSeconds = Math.max(0, (input.now - input.startedAt) / 1000);
  const since = Math.max(input.startedAt, input.activityAt ?? input.startedAt);
  const quietSeconds = Math.max(0, (input.now - since) / 1000);
  const base = { quietSeconds, runtimeSeconds };
  if (runtimeSeconds >= input.maxRuntimeSeconds) return { state: "kill", cause: "max_runtime", ...base };
  if (quietSeconds < input.stallSeconds) return { state: "active", cause: null, ...base };
  if (input.busyDescendant) return { state: "busy", cause: null, ...base };
  if (quietSeconds >= input.killSeconds) return { state: "kill", cause: "quiet", ...base };
  return { state: "stall_candidate", cause: null, ...base };
}
