// `logs`: one structured lane at a time (a project's supervisor, worker, monitor, liveness, its
// ledger, or the machine's daemon lane), bounded.
import { logsInput, logsOutput } from "../../schemas/tools.js";
import { defineTool } from "./define.js";

export const logsTool = defineTool({
  name: "logs",
  title: "Read a log lane",
  description:
    'The newest records of one of this machine\'s log lanes: "supervisor" (decisions, actions), "worker" (its output), "monitor" (ticks), "liveness" (stalls, kills), ' +
    '"ledger" (attempts, spend, pauses, landings, faults) or "daemon" (no repo). Filter by issue and since ("15m", "2h", an ISO time); tail_lines bounds the count (default 200), the answer stops near 48 KB ' +
    "(a long record is cut: truncated: true); next_cursor reads older ones.",
  kind: "read",
  // Lanes are this machine's files; GitHub is never asked.
  world: "local",
  input: logsInput,
  output: logsOutput,
  handler: (host, args) => host.logs(args),
  render: renderLogs,
});

/** One line per record, oldest first; where older records are, first. */
export function renderLogs(result: { lane: string; records: Record<string, unknown>[]; held_back: number; next_cursor: string | null }): string {
  if (result.records.length === 0) return `no ${result.lane} records`;
  const lines = result.records.map((r) => `${String(r.ts)} ${String(r.level ?? "info")} ${issueTag(r.issue, String(r.msg ?? ""))}${String(r.msg ?? "")}`);
  if (result.next_cursor) {
    const where = `logs {cursor: "${result.next_cursor}"}`;
    lines.unshift(
      result.held_back > 0
        ? `(${result.records.length} of the records asked for fit in about 48 KB; the other ${result.held_back} and any older: ${where})`
        : `(older records: ${where})`,
    );
  }
  return lines.join("\n");
}

/** "#12 " before a record about issue 12, unless its message opens with "#12" already (most fleet lines do). */
function issueTag(issue: unknown, msg: string): string {
  if (issue === undefined || issue === null) return "";
  const tag = `#${String(issue)}`;
  return msg.startsWith(tag) && !/\d/.test(msg.charAt(tag.length)) ? "" : `${tag} `;
}
