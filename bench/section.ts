// The shape of a benchmark section: a name, a one-line summary, and a function that returns
// figures. bench/run.ts runs the sections in order, prints each figure as a table row, and
// folds them all into one JSON line at the end. Add a figure by adding a section.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemorySampler } from "./memory.js";

export type FigureValue = number | string | boolean | null;

export interface Figure {
  /** The JSON key (snake_case), unique within its section. */
  key: string;
  /** What the table shows. */
  label: string;
  value: FigureValue;
  unit?: string;
  /** A goal in words ("< 50", "0"), shown next to the value. */
  goal?: string;
  /** Whether the goal was met (only when there is a goal). */
  ok?: boolean;
}

export interface SectionResult {
  figures: Figure[];
  /** Extra structured data for the JSON line only (per-route tallies, say). */
  details?: Record<string, unknown>;
  /** Lines printed under the section's table (not in the JSON). */
  notes?: string[];
}

export interface BenchContext {
  /** Progress on stderr (stdout carries the table and the JSON line). */
  log(message: string): void;
  memory: MemorySampler;
  /** Registers cleanup to run after the sections, last registered first, even on failure. */
  defer(cleanup: () => Promise<void> | void): void;
  /** A temp directory removed at the end of the run. */
  tempDir(prefix: string): Promise<string>;
}

export interface Section {
  name: string;
  summary: string;
  run(ctx: BenchContext): Promise<SectionResult>;
}

export function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function mib(bytes: number): number {
  return round(bytes / (1024 * 1024), 1);
}

/**
 * The context sections run in, and its cleanup (each section's cleanups run when it ends: its
 * forge must not idle through later sections). `npm run bench` makes one; a section that measures
 * in a process of its own (bench/actions-phase.ts) makes another there.
 */
export function benchContext(): { ctx: BenchContext; memory: MemorySampler; cleanUp: () => Promise<void> } {
  const memory = new MemorySampler();
  let cleanups: (() => Promise<void> | void)[] = [];
  const ctx: BenchContext = {
    log: (message) => process.stderr.write(`bench: ${message}\n`),
    memory,
    defer: (fn) => void cleanups.push(fn),
    async tempDir(prefix) {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      return dir;
    },
  };
  const cleanUp = async (): Promise<void> => {
    const fns = cleanups.reverse();
    cleanups = [];
    for (const fn of fns) {
      try {
        await fn();
      } catch (err) {
        process.stderr.write(`bench: cleanup failed: ${(err as Error).message}\n`);
      }
    }
  };
  return { ctx, memory, cleanUp };
}
