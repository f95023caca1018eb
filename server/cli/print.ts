// The CLI's only door to stdout. The MCP server (`afk-mcp` with no command) never calls
// these: its stdout is the JSON-RPC stream. Subcommands (`plan`, `config`, `forge`, ...)
// print their answers here.

export function printLine(line: string): void {
  process.stdout.write(line.endsWith("\n") ? line : `${line}\n`);
}

export function printJson(value: unknown, pretty = true): void {
  printLine(pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value));
}

/** Whether stdout is a terminal (a live board can redraw in place). */
export function stdoutIsTty(): boolean {
  return process.stdout.isTTY === true;
}
