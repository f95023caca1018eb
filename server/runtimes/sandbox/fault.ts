// A sandbox that could not start, told as the runtime's fault (server/worker-port/port.ts, WorkerExit
// `fault`) rather than as a worker that died. Two places find it. At birth, the host's own check
// (index.ts): bubblewrap or socat gone from PATH since the start, namespaces refused, the private
// git dir not made; the runtime then hands back a handle that has already ended (`unstarted`).
// In the launcher (launcher.ts): bubblewrap cannot be run, or it exits before the worker's
// command started (a mount it could not make, a namespace it could not create). Either way the
// reason is written to `fault.json` in the sandbox dir, and the handle's exit reads it
// (`withSandboxFault`): the attempt is spent with "the sandbox could not start: …", once, and the
// next one continues from the branch, whose commits nobody doubts (no worker ran).
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { StartRequest, WorkerExit, WorkerHandle } from "../../worker-port/port.js";
import { sandboxPaths } from "./plan.js";
import { sandboxDirOf } from "./spec.js";

/** How every such fault begins, on the board and in status. */
export const FAULT_PREFIX = "the sandbox could not start";

/** A fault's detail is quoted on the board: bounded. */
const DETAIL_MAX_CHARS = 800;

/** Thrown at birth when the host's own check finds the sandbox cannot start (index.ts). */
export class SandboxStartFault extends Error {
  constructor(readonly detail: string) {
    super(`${FAULT_PREFIX}: ${detail}`);
    this.name = "SandboxStartFault";
  }
}

/** Records why the sandbox in `sandboxDir` could not start. */
export async function writeFault(sandboxDir: string, detail: string): Promise<void> {
  const file = sandboxPaths(sandboxDir).fault;
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${JSON.stringify({ why: bounded(detail) })}\n`, { mode: 0o600 });
}

/** The recorded reason of the current sandbox, or null when it started (or none was recorded). */
export async function readFault(runDir: string): Promise<string | null> {
  const text = await readFile(sandboxPaths(sandboxDirOf(runDir)).fault, "utf8").catch(() => null);
  if (text === null) return null;
  try {
    const why = (JSON.parse(text) as { why?: unknown }).why;
    return typeof why === "string" && why.trim() !== "" ? bounded(why) : "no reason was recorded";
  } catch {
    return "no reason was recorded";
  }
}

/**
 * The exit as the fleet reads it: with the fault when the sandbox could not start. Not when the
 * fleet itself ended the worker (a stop during the start is a stop, not a broken sandbox).
 */
export async function withSandboxFault(exit: WorkerExit, runDir: string): Promise<WorkerExit> {
  if (exit.killReason !== null) return exit;
  const detail = await readFault(runDir);
  return detail === null ? exit : { ...exit, fault: { why: `${FAULT_PREFIX}: ${detail}`, resume: true } };
}

/**
 * The handle of a birth whose sandbox could not start: already ended, its reason recorded in the
 * sandbox dir and said once in the worker's output (the worker lane), like bubblewrap's own
 * message when the launcher meets it.
 */
export async function unstarted(request: Pick<StartRequest, "slot" | "command" | "output">, error: unknown): Promise<WorkerHandle> {
  const detail = bounded(error instanceof SandboxStartFault ? error.detail : error instanceof Error ? error.message : String(error));
  await writeFault(sandboxDirOf(request.slot.dir), detail);
  const startedAt = Date.now();
  const line = `afk-mcp sandbox: ${FAULT_PREFIX}: ${detail}`;
  request.output.onLine("stderr", line, "runtime");
  const exited = Promise.resolve<WorkerExit>({ code: null, signal: null, durationMs: 0, killReason: null });
  return {
    id: `unstarted-${request.slot.issue}-${startedAt}`,
    runtime: "sandbox",
    tags: {},
    label: "a sandbox that could not start",
    startedAt,
    commandLine: request.command,
    exited,
    stop: () => exited,
    observe: () => Promise.resolve({ running: false, lastOutputAt: startedAt, busy: false, why: FAULT_PREFIX }),
    lastOutputAt: () => startedAt,
    tail: () => [{ stream: "stderr", line, at: startedAt }],
    running: () => false,
  };
}

function bounded(text: string): string {
  const one = text.replace(/\s*\n\s*/g, " ⏎ ").trim();
  return one.length > DETAIL_MAX_CHARS ? `${one.slice(0, DETAIL_MAX_CHARS - 1)}…` : one;
}
