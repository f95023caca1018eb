// `afk-mcp ledger` and `afk-mcp report`: a repository's ledger (its records, or one issue's
// timeline) and its final report as of now, from a terminal. Both read this machine's state
// directory (through the daemon when one runs), so they work whether or not a fleet is running.
import type { Command } from "./command.js";
import { DaemonClient } from "../daemon/client.js";
import { UsageError } from "../gh/errors.js";
import { renderReport } from "../lanes/index.js";
import { printJson, printLine } from "./print.js";

function positiveInt(flag: string, raw: unknown, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new UsageError(`--${flag} must be an integer from 1 to ${max}, got ${JSON.stringify(raw)}`);
  return n;
}

const repoOf = (values: Record<string, unknown>) => (typeof values.repo === "string" ? { repo: values.repo } : {});

export const ledgerCommand: Command = {
  name: "ledger",
  summary: "print a repository's ledger (decisions, attempts, pauses, landings, faults) or one issue's timeline",
  usage: `Usage: afk-mcp ledger [--repo OWNER/NAME] [--issue N] [--since WHEN] [--tail N] [--timeline N] [--json]

Prints the newest records of the fleet's ledger, one JSON record per line, oldest first: the
decisions and facts GitHub cannot tell again (dispatches, attempts with engine, model and
spend, verdicts, pauses and why, breaker trips, landings with the gated sha, escalations,
faults). Old records are folded into one summary per issue. With --timeline N, prints issue
N's timeline as JSON instead (phases, attempts, transcript references, time and spend).

Options:
  --repo OWNER/NAME   the repository (default: the origin of the current directory)
  --issue N           only records about this issue
  --since WHEN        only records since an ISO time or this long ago ("15m", "2h", "1d")
  --tail N            at most this many of the newest records (default 200, at most 5000)
  --timeline N        issue N's timeline (JSON)
  --json              print the whole answer as one JSON document

Example:
  afk-mcp ledger --issue 12
  afk-mcp ledger --timeline 12`,
  options: {
    repo: { type: "string" },
    issue: { type: "string" },
    since: { type: "string" },
    tail: { type: "string" },
    timeline: { type: "string" },
    json: { type: "boolean" },
  },
  async run(values) {
    const issue = positiveInt("issue", values.issue, Number.MAX_SAFE_INTEGER);
    const timeline = positiveInt("timeline", values.timeline, Number.MAX_SAFE_INTEGER);
    const tail = positiveInt("tail", values.tail, 5000);
    const host = new DaemonClient();
    try {
      if (timeline !== undefined) {
        printJson(await host.timeline({ ...repoOf(values), issue: timeline }));
        return 0;
      }
      const result = await host.logs({
        lane: "ledger",
        ...repoOf(values),
        ...(issue !== undefined ? { issue } : {}),
        ...(typeof values.since === "string" ? { since: values.since } : {}),
        ...(tail !== undefined ? { tail_lines: tail } : {}),
      });
      if (values.json) printJson(result);
      else for (const record of result.records) printLine(JSON.stringify(record));
      return 0;
    } finally {
      await host.close();
    }
  },
};

export const reportCommand: Command = {
  name: "report",
  summary: "print the final report of a repository's fleet: per issue outcome, attempts, time and spend; totals and requests",
  usage: `Usage: afk-mcp report [--repo OWNER/NAME] [--json]

Prints what became of every issue the fleet's ledger knows (merged, escalated, closed as done,
released, in flight, queued), with its attempts, time and spend, then the totals and the
GitHub requests the fleet's runs spent. A drain or stop writes the same report beside the
ledger (report.json, report.txt) when it ends.

Options:
  --repo OWNER/NAME   the repository (default: the origin of the current directory)
  --json              the report as JSON`,
  options: { repo: { type: "string" }, json: { type: "boolean" } },
  async run(values) {
    const host = new DaemonClient();
    try {
      const report = await host.report(repoOf(values));
      if (values.json) printJson(report);
      else printLine(renderReport(report));
      return 0;
    } finally {
      await host.close();
    }
  },
};
