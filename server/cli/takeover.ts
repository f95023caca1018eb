// `afk-mcp takeover`: list the fleet instances GitHub remembers for a repository, or take a
// dead one's claims now instead of waiting out its lease (what the takeover tool does).
import type { Command } from "./command.js";
import { DaemonClient } from "../daemon/client.js";
import { UsageError } from "../gh/errors.js";
import { printJson, printLine } from "./print.js";
import { forTerminal } from "./terminal-words.js";

export const takeoverCommand: Command = {
  name: "takeover",
  summary: "list fleet instances, or take a dead instance's claims now",
  usage: `Usage: afk-mcp takeover [--repo OWNER/NAME] (--list | --instance ID [--confirm]) [--json]

With --list, prints every fleet instance GitHub remembers for the repository: its host, its
claims and how old its heartbeat is. With --instance, takes that instance's claims for this
machine's fleet now, so its issues are continued instead of waiting out its lease; an
instance whose heartbeat is still fresh is taken only with --confirm.

Options:
  --repo OWNER/NAME   the repository (default: the origin of the current directory)
  --list              list the instances and take nothing
  --instance ID       the instance whose claims to take (from --list)
  --confirm           take them even though the instance still looks alive
  --json              print the answer as JSON`,
  options: { repo: { type: "string" }, list: { type: "boolean" }, instance: { type: "string" }, confirm: { type: "boolean" }, json: { type: "boolean" } },
  async run(values) {
    const list = values.list === true;
    if (list === (typeof values.instance === "string")) throw new UsageError("give either --list or --instance ID");
    const repo = typeof values.repo === "string" ? values.repo : null;
    const host = new DaemonClient();
    try {
      const result = await host.takeover({
        ...(repo ? { repo } : {}),
        ...(list ? { list: true } : { instance: values.instance as string }),
        ...(values.confirm === true ? { confirm: true } : {}),
      });
      if (values.json) {
        printJson(result);
      } else {
        for (const row of result.instances) printLine(JSON.stringify(row));
        printLine(forTerminal(result.message, { repo }));
      }
      return 0;
    } finally {
      await host.close();
    }
  },
};
