// `afk-mcp logs`: one log lane of a repository's fleet, or the daemon's, from a terminal (what the logs tool
// answers): one JSON record per line, oldest first.
import type { Command } from "./command.js";
import { LANE_NAMES, type LaneName } from "../../schemas/lanes.js";
import { DaemonClient } from "../daemon/client.js";
import { UsageError } from "../gh/errors.js";
import { printJson, printLine } from "./print.js";

function positiveInt(flag: string, raw: unknown, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new UsageError(`--${flag} must be an integer from 1 to ${max}, got ${JSON.stringify(raw)}`);
  return n;
}

export const logsCommand: Command = {
  name: "logs",
  summary: "print one log lane of a repository's fleet (supervisor, worker, monitor, liveness) or the daemon's",
  usage: `Usage: afk-mcp logs --lane LANE [--repo OWNER/NAME] [--issue N] [--since WHEN] [--tail N] [--cursor C] [--json]

Prints the newest records of one log lane, one JSON record per line, oldest first. Lanes
live in the state directory, so this works whether or not a fleet is running.

Options:
  --lane LANE         supervisor (decisions and actions), worker (what workers printed),
                      monitor (ticks), liveness (stalls and kills); daemon (this
                      machine's daemon: its own lines, stdout and stderr; no --repo)
  --repo OWNER/NAME   the repository (default: the origin of the current directory)
  --issue N           only records about this issue
  --since WHEN        only records since an ISO time or this long ago ("15m", "2h", "1d")
  --tail N            at most this many of the newest records (default 200, at most 5000)
  --cursor C          continue with the records before the previous answer's (it says which)
  --json              print the whole answer as one JSON document

Example:
  afk-mcp logs --lane supervisor --issue 12 --since 2h`,
  options: {
    lane: { type: "string" },
    repo: { type: "string" },
    issue: { type: "string" },
    since: { type: "string" },
    tail: { type: "string" },
    cursor: { type: "string" },
    json: { type: "boolean" },
  },
  async run(values) {
    if (typeof values.lane !== "string" || !(LANE_NAMES as readonly string[]).includes(values.lane)) {
      throw new UsageError(
        `--lane is required: one of ${LANE_NAMES.join(", ")}${typeof values.lane === "string" ? ` (got ${JSON.stringify(values.lane)})` : ""}`,
      );
    }
    const issue = positiveInt("issue", values.issue, Number.MAX_SAFE_INTEGER);
    const tail = positiveInt("tail", values.tail, 5000);
    const host = new DaemonClient();
    try {
      const result = await host.logs({
        lane: values.lane as LaneName,
        ...(typeof values.repo === "string" ? { repo: values.repo } : {}),
        ...(issue !== undefined ? { issue } : {}),
        ...(typeof values.since === "string" ? { since: values.since } : {}),
        ...(tail !== undefined ? { tail_lines: tail } : {}),
        ...(typeof values.cursor === "string" ? { cursor: values.cursor } : {}),
      });
      if (values.json) {
        printJson(result);
      } else {
        for (const record of result.records) printLine(JSON.stringify(record));
        // On stderr, so that stdout stays one JSON record per line.
        if (result.next_cursor) console.error(`older records: add --cursor ${result.next_cursor}`);
      }
      return 0;
    } finally {
      await host.close();
    }
  },
};
