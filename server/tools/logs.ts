// `logs`: one structured lane at a time (supervisor, worker, monitor, liveness), bounded.
import { logsInput, logsOutput } from "../../schemas/tools.js";
import { defineTool } from "./define.js";

export const logsTool = defineTool({
  name: "logs",
  title: "Read a log lane",
  description:
    'Returns the newest records of one lane: "supervisor" (decisions and actions), "worker" (worker output), "monitor" (one line per tick), ' +
    '"liveness" (stalls and kills). Filter by issue and since ("15m", "2h" or an ISO time); tail_lines bounds the answer (default 200).',
  kind: "read",
  // Lanes are this machine's files; GitHub is never asked.
  world: "local",
  input: logsInput,
  output: logsOutput,
  handler: (host, args) => host.logs(args),
  render(result) {
    if (result.records.length === 0) return `no ${result.lane} records`;
    const lines = result.records.map((r) => `${String(r.ts)} ${String(r.level ?? "info")} ${r.issue !== undefined ? `#${String(r.issue)} ` : ""}${String(r.msg ?? "")}`);
    return (result.truncated ? ["(older records omitted)"] : []).concat(lines).join("\n");
  },
});
