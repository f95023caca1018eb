// A worker's place for a runtime test: a run directory with the issue's slot, a worktree and a
// brief file ("the brief\n"), and the start request a runtime takes there.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DEFAULT_CONFIG } from "../../schemas/config.js";
import type { OutputStream, StartRequest, WorkerSlot } from "../../server/worker-port/port.js";
import { tempDir } from "./forge-fixtures.js";

export interface WorkerScene {
  runDir: string;
  slot: WorkerSlot;
  worktree: string;
  briefPath: string;
  /** A start of `command` in this slot, its output lines pushed to `lines` as `stream:line`. */
  request(attempt: number, command: string, lines?: string[]): StartRequest;
}

/** A sink that keeps each line as `stream:line`. */
export const lineSink = (lines: string[]) => ({ onLine: (stream: OutputStream, line: string) => void lines.push(`${stream}:${line}`), maxBytes: 1 << 20 });

export async function workerScene(issue: number): Promise<WorkerScene> {
  const runDir = await tempDir("afk-runtime-");
  const slot = { issue, dir: join(runDir, `issue-${issue}`) };
  const worktree = join(runDir, "worktree");
  await mkdir(slot.dir, { recursive: true });
  await mkdir(worktree, { recursive: true });
  const briefPath = join(slot.dir, "brief.md");
  await writeFile(briefPath, "the brief\n");
  return {
    runDir,
    slot,
    worktree,
    briefPath,
    request: (attempt, command, lines = []) => ({
      slot,
      attempt,
      command,
      worktree,
      branch: `afk/${issue}-test`,
      verdictPath: join(slot.dir, "verdict.json"),
      engine: null,
      config: DEFAULT_CONFIG,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      briefPath,
      output: lineSink(lines),
    }),
  };
}
