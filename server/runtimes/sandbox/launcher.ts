// The sandbox launcher: `node launcher.js <spec.json>`, started by the worker's shell in place of
// the worker command (index.ts), so it leads the worker's process group and session as the
// worker itself would. It serves the allowlist proxy and the loopback forwarders on Unix sockets
// (proxy.ts), starts bubblewrap with the plan's mounts, runs socat inside to serve those sockets
// on the sandbox's 127.0.0.1, then the worker's command in its shell; it carries the worker's
// commits back while it runs and when it exits (private-git.ts), and exits as the worker did.
// Its stdin, stdout and stderr are the worker's (the brief file, the output files): bubblewrap
// inherits them. Killing the group ends it all: bubblewrap's --die-with-parent and its PID
// namespace take every process inside along.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, lstatSync, type Stats } from "node:fs";
import { join } from "node:path";
import type { Server } from "node:net";
import { parseHostRule, loopbackPorts, type HostRule } from "./hosts.js";
import { pathEntriesToShow, targetDirOf, within } from "./plan.js";
import { startForward, startProxy } from "./proxy.js";
import { takeBack } from "./private-git.js";
import type { SandboxSpec } from "./spec.js";

// Inside: serve the sockets on 127.0.0.1, wait until they listen, then run the command. Every
// value is a positional argument, never text in the script.
const INNER = [
  "dir=$1; proxy=$2; ports=$3; socat=$4; shell=$5; cmd=$6",
  '"$socat" TCP-LISTEN:"$proxy",bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:"$dir/proxy.sock" </dev/null >/dev/null 2>&1 &',
  'for p in $ports; do "$socat" TCP-LISTEN:"$p",bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:"$dir/fwd-$p.sock" </dev/null >/dev/null 2>&1 & done',
  'for p in $proxy $ports; do hex=$(printf "%04X" "$p"); n=0; until grep -q "0100007F:$hex 00000000:0000 0A" /proc/net/tcp 2>/dev/null || [ $n -ge 250 ]; do n=$((n+1)); sleep 0.02; done; done',
  'exec "$shell" -c "$cmd"',
].join("\n");

function shownPaths(spec: SandboxSpec): string[] {
  const shown = new Set<string>();
  for (const entry of pathEntriesToShow(process.env.PATH ?? "", spec.showPathUnder, spec.keepOut)) {
    shown.add(entry);
    let names: string[] = [];
    try {
      names = readdirSync(entry).slice(0, 500);
    } catch {
      continue;
    }
    for (const name of names) {
      let seen: Stats;
      try {
        seen = lstatSync(join(entry, name));
        if (!seen.isSymbolicLink()) continue;
        const real = realpathSync(join(entry, name));
        if (!spec.keepOut.some((k) => within(real, k))) shown.add(statSync(real).isDirectory() ? real : targetDirOf(real));
      } catch {
        // a dangling link shows nothing
      }
    }
  }
  // Never a denied directory itself or one above it (a link to a file right in the home would name the home).
  return [...shown].filter((path) => !spec.showPathUnder.some((d) => within(d, path)));
}

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
    const args = [...spec.bwrapArgs];
    for (const path of shownPaths(spec)) args.splice(args.indexOf("--chdir"), 0, "--ro-bind-try", path, path);
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
    process.stderr.write(`afk-mcp sandbox: bubblewrap; writable: the worktree; network: ${spec.allowHosts.join(", ") || "none"}\n`);
    // The launcher is the worker's process (the local runtime starts it as the worker command):
    // its stdin is the brief and its stdout and stderr are the worker's output files, never the
    // MCP stream, so bwrap gets exactly those three and nothing of the host process.
    const child = spawn(spec.bwrap, args, { stdio: [0, 1, 2], env });
    // The group's signals reach the worker directly; the launcher stays to carry its commits back.
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => undefined);
    let syncing: Promise<unknown> = Promise.resolve();
    const timer = setInterval(() => {
      syncing = syncing.then(() => takeBack(spec.takeBack)).catch(() => undefined);
    }, 2_000);
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once("error", (error) => {
        process.stderr.write(`afk-mcp sandbox: cannot start ${spec.bwrap}: ${error.message}\n`);
        resolve({ code: 127, signal: null });
      });
      child.once("exit", (code, signal) => resolve({ code, signal }));
    });
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
  (error: unknown) => {
    process.stderr.write(`afk-mcp sandbox: ${(error as Error).message}\n`);
    process.exit(126);
  },
);
