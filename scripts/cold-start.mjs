#!/usr/bin/env node
// How long a first `npx -y afk-mcp` takes to answer an MCP `initialize`: the package is packed
// (`npm pack`, as published), then started through `npx -y --package <tarball> afk-mcp` with an empty npm cache
// each run, so npx downloads and installs the dependencies as a first install does. Prints each
// run and the slowest, the figure to compare with an MCP client's start timeout (Codex:
// `startup_timeout_sec`, 10 s by default). Needs the npm registry; run by hand:
//   node scripts/cold-start.mjs [runs]      (default 3)
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const runs = Number(process.argv[2] ?? 3);
const root = join(import.meta.dirname, "..");
const work = mkdtempSync(join(tmpdir(), "afk-cold-"));
const packed = JSON.parse(
  execFileSync("npm", ["pack", "--pack-destination", work, "--json", "--silent"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }),
)[0];
const tarball = join(work, packed.filename);
const init =
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "cold-start", version: "0" } },
  }) + "\n";

function once(cache) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn("npx", ["-y", "--package", tarball, "afk-mcp"], {
      cwd: work,
      env: { ...process.env, npm_config_cache: cache, npm_config_update_notifier: "false" },
      stdio: ["pipe", "pipe", process.env.COLD_START_DEBUG ? "inherit" : "ignore"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (out.includes('"id":1')) {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        child.kill();
        resolve(ms);
      }
    });
    child.on("exit", (code) => reject(new Error(`npx exited (${code}) before answering initialize`)));
    child.stdin.write(init);
  });
}

const times = [];
for (let i = 0; i < runs; i++) {
  const cache = mkdtempSync(join(work, "cache-"));
  const ms = await once(cache);
  times.push(ms);
  console.log(`run ${i + 1}: ${(ms / 1000).toFixed(1)} s (empty npm cache)`);
}
const warm = await once(join(work, "cache-warm-seed")).then(() => once(join(work, "cache-warm-seed")));
console.log(
  `slowest cold start: ${(Math.max(...times) / 1000).toFixed(1)} s of ${runs}; warm (cache filled): ${(warm / 1000).toFixed(1)} s; ${packed.filename}, ${(packed.size / 1024).toFixed(0)} KiB packed`,
);
rmSync(work, { recursive: true, force: true });
