// `afk-mcp demo`: the fleet end to end on the embedded default (a local forge with a sample
// project and backlog, a local CI runner, scripted workers). Exit 0 only when every issue
// reached its expected end.
import { resolve } from "node:path";
import type { Command } from "./command.js";
import { UsageError } from "../gh/errors.js";
import { holdForge, renderReport, runDemo } from "../demo/run.js";
import { printJson, printLine, stdoutIsTty } from "./print.js";
import { forTerminal } from "./terminal-words.js";
import type { RuntimeName } from "../../schemas/config.js";

export const demoCommand: Command = {
  name: "demo",
  summary: "run the fleet on a local forge with a sample backlog and report",
  usage: `Usage: afk-mcp demo [--engine claude|codex | --worker "<command>"] [--runtime sandbox|local|actions] [--keep DIR] [--concurrency N] [--json]

Starts a local forge in a temp dir with a small sample project (real tests) and a seeded
backlog of eleven issues — a dependency chain, an epic with sub-issues, one that fails CI on
its first attempt and passes on the retry, one already satisfied, two that can only be
escalated — plus a local CI runner that tests every PR head, and runs the fleet on it with
scripted workers at concurrency 3 until every issue reached its end. Prints a live board
(JSON lines when stdout is not a terminal) and a final report. Exits 0 only when every issue
reached its expected end.

Options:
  --engine NAME      run the real claude or codex CLI (installed, or this package's own) against
                     the demo's scripted model on 127.0.0.1: no login, no network, no cost
  --worker COMMAND   run a real agent instead of the scripted worker (the brief is in $AFK_BRIEF)
  --runtime NAME     where the workers run: sandbox (the default where bubblewrap can run), local,
                     or actions: \`actions init\` proposes the worker workflow, the demo merges it,
                     and every worker is a workflow run on the forge's Actions runner, none on
                     this host (default: AFK_RUNTIME, else sandbox where it can run, else local)
  --keep DIR         use DIR and leave the forge running afterwards for inspection
  --concurrency N    workers at once (default 3)
  --timeout SECONDS  give up after this long (default 900)
  --json             print the final report as JSON`,
  options: {
    worker: { type: "string" },
    engine: { type: "string" },
    runtime: { type: "string" },
    keep: { type: "string" },
    concurrency: { type: "string" },
    timeout: { type: "string" },
    json: { type: "boolean" },
  },
  async run(values) {
    const concurrency = values.concurrency === undefined ? 3 : Number(values.concurrency);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 16) throw new UsageError("--concurrency must be an integer from 1 to 16");
    const timeout = values.timeout === undefined ? 900 : Number(values.timeout);
    if (!Number.isFinite(timeout) || timeout < 10) throw new UsageError("--timeout must be at least 10 seconds");
    // Checked by runDemo, before anything starts.
    const runtime = values.runtime;
    const tty = stdoutIsTty() && values.json !== true;
    const report = await runDemo({
      ...(typeof values.worker === "string" ? { worker: values.worker } : {}),
      ...(typeof values.engine === "string" ? { engine: values.engine } : {}),
      ...(runtime !== undefined ? { runtime: runtime as RuntimeName } : {}),
      ...(typeof values.keep === "string" ? { keep: resolve(values.keep) } : {}),
      concurrency,
      timeoutSeconds: timeout,
      tty,
      write: (line) => printLine(forTerminal(line)),
      redraw: (lines) => printLine(`\x1b[H\x1b[2J${forTerminal(lines.join("\n"))}`),
    });
    if (values.json) printJson(report);
    else for (const line of renderReport(report)) printLine(forTerminal(line));
    if (typeof values.keep === "string") await holdForge(printLine);
    return report.ok ? 0 : 1;
  },
};
