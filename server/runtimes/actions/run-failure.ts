// Why a workflow run failed without the worker's last beat, read from GitHub: the failing job's
// failing step (the jobs list) and the last lines of that job's log (the job-log route), cleaned
// for a comment (GitHub's timestamps, terminal escapes and group markers gone; secrets redacted;
// bounded). A checkout that failed, an engine install, `npx` finding no such package version:
// each says so in its own words instead of "the runner died".
import type { ActionsApi, RunJob } from "../../gh/actions-api.js";
import { redactText } from "../../text/redact.js";
import { clipHead, clipTail, stripAnsi } from "../../text/text.js";

/** The log's end read from GitHub (bytes): the failing step's last lines are in it, post-job cleanup and all. */
const LOG_TAIL_BYTES = 64 * 1024;
/** Lines quoted, and the most bytes of each and of all together. */
const QUOTED_LINES = 8;
const LINE_BYTES = 240;
const QUOTE_BYTES = 1_200;

export interface RunFailure {
  /** The failing job's name. */
  job: string;
  /** The step that failed, or null when none did (the runner was lost, the job was cut). */
  step: string | null;
  /** The step's exit code, where the log says it ("Process completed with exit code N."). */
  exitCode: number | null;
  /** The last lines of the failing step's output, cleaned and bounded (empty when the log is gone). */
  lines: string[];
}

/** The failed job (the first whose conclusion is not a success) and its first failed step; null when every job passed. */
export function failedStep(jobs: readonly RunJob[]): { job: RunJob; step: string | null } | null {
  const job =
    jobs.find((j) => j.conclusion === "failure") ?? jobs.find((j) => j.conclusion !== null && !["success", "skipped", "neutral"].includes(j.conclusion));
  if (!job) return null;
  const step = job.steps.find((s) => s.conclusion === "failure") ?? job.steps.find((s) => s.conclusion === "cancelled" || s.conclusion === "timed_out");
  return { job, step: step?.name ?? null };
}

const TIMESTAMP = /^\uFEFF?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?/;
const EXIT = /^##\[error\]Process completed with exit code (\d+)\.?\s*$/;

/**
 * The failing step's last lines in a job's log: up to the last `##[error]` line (what follows is
 * post-job cleanup), from the last step header (`##[group]`) before it, the header's own block
 * (the script, its shell and env) left out, as are groups the step's output closed.
 */
export function failingLines(log: string, secrets: readonly string[] = []): { lines: string[]; exitCode: number | null } {
  const all = stripAnsi(log)
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => line.replace(TIMESTAMP, "").trimEnd());
  let end = all.length;
  for (let i = all.length - 1; i >= 0; i -= 1)
    if (all[i]!.startsWith("##[error]")) {
      end = i + 1;
      break;
    }
  const upto = all.slice(0, end);
  let start = 0;
  for (let i = upto.length - 1; i >= 0; i -= 1)
    if (upto[i]!.startsWith("##[group]")) {
      start = i;
      break;
    }
  let exitCode: number | null = null;
  const kept: string[] = [];
  let depth = 0;
  const rest = upto.slice(start);
  for (const [i, line] of rest.entries()) {
    if (line.startsWith("##[group]")) {
      // A group is left out only when it closes (the local runner's step header never does).
      if (rest.slice(i + 1).some((l) => l.startsWith("##[endgroup]"))) depth += 1;
      continue;
    }
    if (line.startsWith("##[endgroup]")) {
      depth = Math.max(0, depth - 1);
      continue;
    }
    if (depth > 0 || line.trim() === "") continue;
    const exit = EXIT.exec(line);
    if (exit) {
      exitCode = Number(exit[1]);
      continue;
    }
    kept.push(line.replace(/^##\[(error|warning|notice)\]/, "$1: "));
  }
  const lines: string[] = [];
  let bytes = 0;
  for (const line of kept.slice(-QUOTED_LINES).reverse()) {
    const clipped = clipHead(redactText(line, secrets), LINE_BYTES);
    bytes += Buffer.byteLength(clipped) + 1;
    if (bytes > QUOTE_BYTES && lines.length > 0) break;
    lines.unshift(clipTail(clipped, QUOTE_BYTES));
  }
  return { lines, exitCode };
}

/** The run's failing step and its log's last lines; null when GitHub cannot say (no failed job, or the reads failed). */
export async function readRunFailure(api: Pick<ActionsApi, "jobs" | "jobLogTail">, runId: number): Promise<RunFailure | null> {
  try {
    // One conditional request (the jobs), and one for the failing job's log.
    const failed = failedStep(await api.jobs(runId));
    if (!failed) return null;
    const log = await api.jobLogTail(failed.job.id, LOG_TAIL_BYTES).catch(() => null);
    const { lines, exitCode } = log ? failingLines(log.text) : { lines: [], exitCode: null };
    return { job: failed.job.name, step: failed.step, exitCode, lines };
  } catch {
    return null;
  }
}

/**
 * The failure in one sentence, most telling first (a board shows the first hundred characters):
 * `head` names the step and its exit, `why` adds the log's last lines.
 */
export function describeRunFailure(failure: RunFailure, runId: number, when: string): { head: string; why: string } {
  const step = failure.step === null ? `job "${failure.job}" failed with no failed step (the runner was lost?)` : `step "${failure.step}" failed`;
  const exit = failure.exitCode !== null ? ` (exit code ${failure.exitCode})` : "";
  const head = `${step}${exit} ${when}, workflow run ${runId}`;
  const quote = failure.lines.length > 0 ? `; its log ends: ${failure.lines.map((l) => l.trim()).join(" ⏎ ")}` : "; its log could not be read";
  return { head, why: `${head}${quote}` };
}
