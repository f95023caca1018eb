#!/usr/bin/env node
// Measures tools/list as a client receives it: starts the built server over stdio, lists the
// tools and prints the bytes of the whole answer and, per tool, of its input and output schemas.
// Usage: npm run build && node scripts/tools-list-size.mjs [path/to/bin.js]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const bin = process.argv[2] ?? new URL("../dist/server/bin.js", import.meta.url).pathname;
const state = mkdtempSync(join(tmpdir(), "afk-size-"));
const client = new Client({ name: "tools-list-size", version: "0" });
await client.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [bin],
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? state, AFK_STATE_DIR: state },
    stderr: "ignore",
  }),
);
const { tools } = await client.listTools();
const bytes = (x) => Buffer.byteLength(JSON.stringify(x ?? {}));
const rows = tools.map((t) => ({
  tool: t.name,
  total: bytes(t),
  input: bytes(t.inputSchema),
  output: bytes(t.outputSchema),
  description: bytes(t.description),
}));
process.stdout.write(
  `tools/list: ${bytes({ tools })} bytes; output schemas ${rows.reduce((n, r) => n + r.output, 0)}, input schemas ${rows.reduce((n, r) => n + r.input, 0)}\n`,
);
for (const r of rows)
  process.stdout.write(
    `${r.tool.padEnd(16)} ${String(r.total).padStart(6)}  input ${String(r.input).padStart(5)}  output ${String(r.output).padStart(5)}  description ${r.description}\n`,
  );
await client.close();
