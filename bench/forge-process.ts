// The local forge in a child process (`afk-mcp forge`), so the bench process measures only the
// fleet's side (adapter, snapshot, rebuild): the forge's CPU and memory are not billed to it,
// and the forge answers from its own core, as GitHub would, instead of sharing our event loop.
import { spawn, type ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RunningForge } from "../server/forge-emulator/index.js";

export interface ForgeProcess extends RunningForge {
  pid: number;
  /** The child's peak RSS in bytes (VmHWM from /proc), or null where /proc is unavailable. */
  peakRss(): Promise<number | null>;
}

export interface ForgeProcessOptions {
  dir: string;
  repo: string;
  users?: string[];
  seed?: string;
  /** Workflow runs the forge's local Actions runner runs at once (default 2). */
  actionsConcurrency?: number;
}

/** dist/bench/forge-process.js -> dist/server/bin.js */
export const BIN = fileURLToPath(new URL("../server/bin.js", import.meta.url));

interface Ready {
  api_url: string;
  git_url: string;
  token: string;
  repo: string;
  users: Record<string, string>;
}

const live = new Set<ChildProcess>();
let exitHook = false;

export async function startForgeProcess(opts: ForgeProcessOptions): Promise<ForgeProcess> {
  const args = [BIN, "forge", "--dir", opts.dir, "--repo", opts.repo];
  for (const u of opts.users ?? []) args.push("--user", u);
  if (opts.seed) args.push("--seed", opts.seed);
  if (opts.actionsConcurrency !== undefined) args.push("--actions-concurrency", String(opts.actionsConcurrency));
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  live.add(child);
  if (!exitHook) {
    exitHook = true;
    // Never leave a forge behind, even if the bench dies on an exception.
    process.on("exit", () => {
      for (const c of live) c.kill("SIGKILL");
    });
  }
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = new Promise<void>((ok) => child.once("exit", () => (live.delete(child), ok())));

  const ready = await new Promise<Ready>((ok, fail) => {
    let out = "";
    const timer = setTimeout(() => fail(new Error(`forge did not start within 60 s: ${stderr.trim()}`)), 60_000);
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const nl = out.indexOf("\n");
      if (nl < 0) return;
      clearTimeout(timer);
      try {
        ok(JSON.parse(out.slice(0, nl)) as Ready);
      } catch (err) {
        fail(new Error(`forge printed ${JSON.stringify(out.slice(0, nl))}: ${(err as Error).message}`));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      fail(new Error(`forge exited with ${code} before it was ready: ${stderr.trim()}`));
    });
  });

  const name = ready.repo.split("/")[1]!;
  let closing: Promise<void> | null = null;
  return {
    apiUrl: ready.api_url,
    gitUrl: ready.git_url,
    token: ready.token,
    repo: ready.repo,
    users: ready.users,
    dir: opts.dir,
    bareRepo: join(opts.dir, `${name}.git`),
    more: [],
    pid: child.pid!,
    async peakRss() {
      try {
        const status = await readFile(`/proc/${child.pid}/status`, "utf8");
        const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
        return m ? Number(m[1]) * 1024 : null;
      } catch {
        return null;
      }
    },
    close() {
      closing ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill("SIGTERM");
        const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(killer);
      })();
      return closing;
    },
  };
}
