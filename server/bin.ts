#!/usr/bin/env node
// The installed `afk-mcp` executable: run the CLI and turn its answer into an exit code.
import { main } from "./cli.js";
import { forTerminal } from "./cli/terminal-words.js";

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`afk-mcp: ${forTerminal(error instanceof Error ? error.message : String(error))}`);
    process.exitCode = 1;
  },
);
