// The sandbox launcher: `node launcher.js <spec.json>`, started by the worker's shell in place of
// the worker command (index.ts), so it leads the worker's process group and session as the
// worker itself would. It serves the allowlist proxy and the loopback forwarders on Unix sockets
// (proxy.ts), starts bubblewrap with the plan's mounts, runs socat inside to serve those sockets
// on the sandbox's 127.0.0.1, then the worker's command in its shell; it carries the worker's
// commits back while it runs and when it exits (private-git.ts), and exits as the worker did.
// Its stdin, stdout and stderr are the worker's (the brief file, the output files): the worker
// inherits them through bubblewrap, whose own messages come to the launcher first. When
// bubblewrap cannot run, or ends before the worker's command started, the launcher records why
// (fault.ts): the attempt is the sandbox's failure, not the worker's. Killing the group ends it
// all: bubblewrap's --die-with-parent and its PID namespace take every process inside along.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Server } from "node:net";
import { parseHostRule, loopbackPorts, type HostRule } from "./hosts.js";
import { withShown } from "./plan.js";
import { shownPaths } from "./shown.js";
import { startForward, startProxy } from "./proxy.js";
import { takeBack } from "./private-git.js";
import { writeFault } from "./fault.js";
import { bannerLine, type SandboxSpec } from "./spec.js";
import { Serial } from "../../kit/serial.js";

// Inside: serve the sockets on 127.0.0.1, wait until they listen, then run the command. Every
// value is a positional argument, never text in the script. Bubblewrap's own stderr is a pipe to
// the launcher (fd 2), so that its error can be told apart from the worker's output; the inner
// script moves to the worker's stderr (fd 4) at once, and says on fd 3 that the sandbox is up
// just before the command runs: until then a failure is the sandbox's (fault.ts), not the worker's.
const INNER = [
  "exec 2>&4 4>&-",
  "dir=$1; proxy=$2; ports=$3; socat=$4; shell=$5; cmd=$6",
  '"$socat" TCP-LISTEN:"$proxy",bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:"$dir/proxy.sock" </dev/null >/dev/null 2>&1 3>&- &',
  'for p in $ports; do "$socat" TCP-LISTEN:"$p",bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:"$dir/fwd-$p.sock" </dev/null >/dev/null 2>&1 3>&- & done',
  'for p in $proxy $ports; do hex=$(printf "%04X" "$p"); n=0; until grep -q "0100007F:$hex 00000000:0000 0A" /proc/net/tcp 2>/dev/null || [ $n -ge 250 ]; do n=$((n+1)); sleep 0.02; done; done',
  "printf started >&3; exec 3>&-",
  'exec "$shell" -c "$cmd"',
].join("\n");

/** Bubblewrap's own lines kept for the fault's reason (what it printed before the command started). */
const EARLY_MAX_BYTES = 4_096;

/** Whether the worker's command started, and whether the group was signalled before it did (a stop, not a fault). */
const seen = { started: false, signalled: false };

async function main(): Promise<number> {
  const specPath = process.argv[2];
  if (!specPath) {
    process.stderr.write("afk-mcp sandbox: usage: launcher.js <spec.json>\n");
    return 2;
  }
  const spec = JSON.parse(readFileSync(specPath, "utf8")) as SandboxSpec;
  const rules = spec.allowHosts.map(parseHostRule).filter((r): r is HostRule => r !== null);
  // Short: a Unix socket's path has at most ~100 bytes. Removed when the launcher exits.
  const sockets = mkdtempSync("/tmp/afk-sbx-");
  const servers: Server[] = [];
  let refusedLines = 0;
  try {
    servers.push(
      await startProxy(join(sockets, "proxy.sock"), rules, {
        refused: (host, port) => {
          if (refusedLines++ < 20)
            process.stderr.write(`afk-mcp sandbox: refused a connection to ${host}:${port} (not in the allowlist; add it under sandbox.allow_hosts)\n`);
        },
      }),
    );
    const ports = loopbackPorts(rules).filter((p) => p !== spec.proxyPort);
    for (const port of ports) servers.push(await startForward(join(sockets, `fwd-${port}.sock`), port));
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !spec.env.unset.includes(name)) env[name] = value;
    Object.assign(env, spec.env.set);
    const shown = shownPaths({ pathVar: process.env.PATH ?? "", showPathUnder: spec.showPathUnder, keepOut: spec.keepOut, program: spec.program ?? null });
    const args = withShown(spec.bwrapArgs, shown);
    args.push(
      "--bind",
      sockets,
      sockets,
      "--",
      "/bin/sh",
      "-c",
      INNER,
      "afk-sandbox",
      sockets,
      String(spec.proxyPort),
      ports.join(" "),
      spec.socat,
      spec.shell,
      spec.commandLine,
    );
    process.stderr.write(`${bannerLine(spec.allowHosts)}\n`);
    // The launcher is the worker's process (the local runtime starts it as the worker command):
    // its stdin is the brief and its stdout and stderr are the worker's output files, never the
    // MCP stream, so bwrap gets exactly those (stderr as fd 4, see INNER) and nothing of the host process.
    const child = spawn(spec.bwrap, args, { stdio: [0, 1, "pipe", "pipe", 2], env });
    const early: Buffer[] = [];
    let earlyBytes = 0;
    child.stdio[3]!.on("data", () => (seen.started = true)).on("error", () => undefined);
    child.stdio[2]!.on("data", (chunk: Buffer) => {
      process.stderr.write(chunk);
      if (!seen.started && earlyBytes < EARLY_MAX_BYTES) {
        early.push(chunk);
        earlyBytes += chunk.length;
      }
    }).on("error", () => undefined);
    // The group's signals reach the worker directly; the launcher stays to carry its commits back.
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => (seen.signalled ||= !seen.started));
    const syncs = new Serial();
    let syncing: Promise<unknown> = Promise.resolve();
    const timer = setInterval(() => {
      syncing = syncs.run(() => takeBack(spec.takeBack)).catch(() => undefined);
    }, 2_000);
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: string }>((resolve) => {
      child.once("error", (error) => {
        process.stderr.write(`afk-mcp sandbox: cannot start ${spec.bwrap}: ${error.message}\n`);
        resolve({ code: 127, signal: null, error: `cannot run ${spec.bwrap}: ${error.message}` });
      });
      // "close": after bubblewrap's pipes are drained too, so that its last word is in `early`.
      child.once("close", (code, signal) => resolve({ code, signal }));
    });
    if (!seen.started && !seen.signalled) {
      const said = Buffer.concat(early).toString("utf8").trim();
      // Bubblewrap's own words first: the board quotes the start of a reason only.
      const how = `bubblewrap ${exit.code !== null ? `exited with code ${exit.code}` : `was ended by ${exit.signal ?? "a signal"}`} before the worker's command started`;
      await writeFault(dirname(specPath), exit.error ?? (said ? `${said} (${how})` : how));
    }
    clearInterval(timer);
    await syncing;
    await takeBack(spec.takeBack).catch((error: unknown) =>
      process.stderr.write(`afk-mcp sandbox: could not carry the worker's commits back: ${(error as Error).message}\n`),
    );
    return exit.code ?? 128 + (exit.signal === "SIGKILL" ? 9 : 15);
  } finally {
    for (const server of servers) server.close();
    rmSync(sockets, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  async (error: unknown) => {
    process.stderr.write(`afk-mcp sandbox: ${(error as Error).message}\n`);
    // The launcher itself failed (an unreadable spec, a socket it could not serve): before the command, the sandbox's fault.
    const specPath = process.argv[2];
    if (specPath && !seen.started && !seen.signalled)
      await writeFault(dirname(specPath), `the launcher failed: ${(error as Error).message}`).catch(() => undefined);
    process.exit(126);
  },
);
