// Waiting for an event in a test: poll a probe until it answers, and fail naming what was awaited.
// The deadline only guards against a hang on a loaded machine; it is never a timing assertion.
import assert from "node:assert/strict";

export interface WaitOptions {
  /** When to give up: generous, derived from what is awaited, never a measure of speed. */
  deadlineMs: number;
  /** The pause between probes (default 200 ms). */
  intervalMs?: number;
  /** The scene at the failure (a lane's tail, the last counts), added to the message. */
  explain?: () => string | Promise<string>;
  /** Fail early when `signature()` has not changed for `ms`: the scene stopped moving. */
  stall?: { ms: number; signature: () => string };
}

type Answer<T> = T | null | undefined | false;

/** Polls `probe` until it answers truthy and returns that answer; `assert.fail`s naming `what` at the deadline or a stall. */
export async function waitFor<T>(what: string, probe: () => Answer<T> | Promise<Answer<T>>, options: WaitOptions): Promise<T> {
  const started = Date.now();
  let signature = options.stall?.signature();
  let movedAt = started;
  for (;;) {
    const value = await probe();
    if (value) return value;
    const now = Date.now();
    let why: string | null = null;
    if (options.stall) {
      const next = options.stall.signature();
      if (next !== signature) [signature, movedAt] = [next, now];
      else if (now - movedAt > options.stall.ms) why = `nothing moved for ${Math.round((now - movedAt) / 1000)}s`;
    }
    if (why === null && now - started > options.deadlineMs) why = `gave up after ${Math.round((now - started) / 1000)}s`;
    if (why !== null) {
      const scene = options.explain ? await options.explain() : "";
      assert.fail(`timed out waiting for ${what} (${why})${scene ? `\n${scene}` : ""}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 200));
  }
}
