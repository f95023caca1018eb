// When the daemon leaves on its own: after a stated time with nothing to do (no registration, so
// no worker it runs or adopted, and no session connected), so a machine that stopped using
// afk-mcp is not left with a process nobody needs. The next call that needs one starts it again.
import { UsageError } from "../gh/errors.js";

/** A daemon started on demand (by a session, or plain `afk-mcp daemon`) exits after 15 idle minutes. */
export const DEFAULT_IDLE_EXIT_SECONDS = 900;
const MAX_IDLE_EXIT_SECONDS = 604_800;

/** `--idle-exit` and AFK_DAEMON_IDLE_SECONDS: whole seconds, or "never" (null). */
export function parseIdleExit(value: string, source: string): number | null {
  const text = value.trim();
  if (text === "never") return null;
  const seconds = Number(text);
  if (/^\d+$/.test(text) && seconds >= 1 && seconds <= MAX_IDLE_EXIT_SECONDS) return seconds;
  throw new UsageError(
    `${source} ${JSON.stringify(value)} is not an idle time: pass whole seconds from 1 to ${MAX_IDLE_EXIT_SECONDS} (900 is 15 minutes), or "never" for a daemon that stays until stopped`,
  );
}

/** The idle exit a session gives the daemon it starts: AFK_DAEMON_IDLE_SECONDS, else 15 minutes. */
export function onDemandIdleExit(env: NodeJS.ProcessEnv): number | null {
  const stated = env.AFK_DAEMON_IDLE_SECONDS;
  return stated === undefined || stated === "" ? DEFAULT_IDLE_EXIT_SECONDS : parseIdleExit(stated, "AFK_DAEMON_IDLE_SECONDS");
}

/** How the daemon states its idle exit (its lane, `daemon status`). */
export function idleExitText(seconds: number | null): string {
  if (seconds === null) return "never exits when idle (--idle-exit never)";
  return `exits after ${duration(seconds)} with no registration and no session connected (--idle-exit ${seconds})`;
}

export function duration(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/**
 * Counts the daemon's idle time. A look says whether it is busy now and when a session last
 * touched it, so a call that came and went between two looks still starts the count again.
 */
export class IdleWatch {
  private since: number | null = null;

  constructor(
    private readonly limitMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Whether the daemon has had nothing to do for the whole limit. */
  expired(busy: boolean, lastContact: number | null): boolean {
    const now = this.clock();
    if (busy || lastContact === null) {
      this.since = null;
      return false;
    }
    this.since = Math.max(this.since ?? now, lastContact);
    return now - this.since >= this.limitMs;
  }

  /** How long it has been idle, in whole seconds (for the line that says why it exits). */
  idleSeconds(): number {
    return this.since === null ? 0 : Math.round((this.clock() - this.since) / 1000);
  }
}
