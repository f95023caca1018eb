// The `afk-mcp` binary. With no command it serves MCP on stdio (stdout is then the JSON-RPC
// stream and nothing else may write to it); with a command it runs that subcommand.
// Bad usage prints one line naming the problem and exits 2.
import { parseArgs } from "node:util";
import type { Command } from "./cli/command.js";
import { UsageError } from "./gh/errors.js";
import { printLine } from "./cli/print.js";
import { commands } from "./cli/commands.js";
import { forTerminal } from "./cli/terminal-words.js";

const PROGRAM = "afk-mcp";

function overview(list: Command[]): string {
  const width = Math.max(...list.map((c) => c.name.length));
  return [
    `${PROGRAM} — let coding agents drain a GitHub issue backlog unattended`,
    "",
    `Usage: ${PROGRAM} [command] [options]`,
    "",
    "With no command, serves the MCP tools on stdio (what an MCP client starts).",
    "",
    "Commands:",
    ...list.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    `Run "${PROGRAM} <command> --help" for a command's options.`,
  ].join("\n");
}

/** Parses and runs one command line; returns the exit code. Exported for tests. */
export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === "--help" || first === "-h" || first === "help") {
    const target = rest[0] ? commands.find((c) => c.name === rest[0]) : undefined;
    printLine(target ? target.usage : overview(commands));
    return 0;
  }
  if (first === "--version" || first === "-v") {
    const { version } = await import("./version.js");
    printLine(version);
    return 0;
  }
  const name = first === undefined || first.startsWith("-") ? "serve" : first;
  const args = first === undefined || first.startsWith("-") ? argv : rest;
  const command = commands.find((c) => c.name === name);
  if (!command) {
    const known = commands.map((c) => c.name).join(", ");
    console.error(`${PROGRAM}: unknown command "${name}" (commands: ${known}; see ${PROGRAM} --help)`);
    return 2;
  }
  if (args.includes("--help") || args.includes("-h")) {
    printLine(command.usage);
    return 0;
  }
  try {
    const { values, positionals } = parseArgs({
      args,
      options: command.options,
      allowPositionals: command.positionals ?? false,
      strict: true,
    });
    return await command.run(values, positionals);
  } catch (error) {
    if (error instanceof UsageError || isParseArgsError(error)) {
      // The host names the operation first ("project_reset: ..."): once worded for a terminal
      // that is this very command, already named by the prefix.
      const text = forTerminal((error as Error).message).replace(new RegExp(`^${PROGRAM} ${command.name}: `), "");
      console.error(`${PROGRAM} ${command.name}: ${text}`);
      return 2;
    }
    throw error;
  }
}

function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("ERR_PARSE_ARGS");
}
