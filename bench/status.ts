// What `status` costs on a 1,000-issue backlog: with a fleet running (answered from its last
// tick) and without (a fresh read of GitHub). Twice with a fleet: a host in this process through
// an in-memory MCP client, and the way a user runs it — an MCP client over stdio to the built
// binary, whose session asks the daemon that runs the fleet. The forge is a child process, so
// its work on 1,000 issues is not billed to the process that answers (GitHub's is not either).
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { FleetHost } from "../server/host/host.js";
import { createServer } from "../server/server.js";
import { cli, daemonPid, until } from "../test/support/daemon-fixtures.js";
import { startForgeProcess } from "./forge-process.js";
import { pause, processCpuMs, quantile, timed } from "./fleet-harness.js";
import { round, type BenchContext, type Figure, type Section, type SectionResult } from "./section.js";

const ISSUES = 1000;
const REPO = "afk/demo";
const BIN = fileURLToPath(new URL("../server/bin.js", import.meta.url));
const GOAL_MS = 50;
const CALLS = 300;

type Result = { content?: unknown; structuredContent?: unknown; isError?: unknown };
type Call = (args: Record<string, unknown>) => Promise<Result>;

async function inMemory(ctx: BenchContext, host: FleetHost): Promise<Call> {
  const server = createServer(host);
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "bench", version: "0" });
  await Promise.all([server.connect(b), client.connect(a)]);
  ctx.defer(() => client.close());
  return (args) => client.callTool({ name: "status", arguments: args }) as Promise<Result>;
}

/** Waits until status answers from the fleet's last tick, and checks that answer says so. */
async function fromTick(call: Call): Promise<void> {
  await until(
    "the fleet's first tick",
    async () => ((await call({ repo: REPO })).structuredContent as { source: { from: string } | null }).source?.from === "fleet_tick",
    600_000,
  );
  const sample = await call({ repo: REPO });
  const text = (sample.content as { text: string }[])[0]!.text;
  if (sample.isError || !/plan: from the fleet's last tick/.test(text) || !/dispatch \(10 of \d+/.test(text))
    throw new Error(`status did not answer from the tick: ${text.slice(0, 300)}`);
}

function latency(key: string, label: string, ms: number[], goal: boolean): Figure[] {
  const p99 = quantile(ms, 0.99)!;
  return [
    { key: `${key}_p50_ms`, label: `${label}, p50`, value: round(quantile(ms, 0.5)!, 2), unit: "ms" },
    { key: `${key}_p99_ms`, label: `${label}, p99`, value: round(p99, 2), unit: "ms", ...(goal ? { goal: `<= ${GOAL_MS}`, ok: p99 <= GOAL_MS } : {}) },
  ];
}

export function statusSection(): Section {
  return {
    name: "status",
    summary: `status on a ${ISSUES.toLocaleString("en-US")}-issue backlog: from a running fleet's last tick (in-process, and over stdio through the daemon) vs gathered afresh`,
    async run(ctx: BenchContext): Promise<SectionResult> {
      const seedDir = await ctx.tempDir("afk-bench-status-seed-");
      const seed = {
        labels: [{ name: "ready-for-agent" }],
        issues: Array.from({ length: ISSUES }, (_, i) => ({ title: `Issue ${i + 1}`, labels: ["ready-for-agent"] })),
      };
      await mkdir(seedDir, { recursive: true });
      await writeFile(join(seedDir, "seed.json"), JSON.stringify(seed));
      const forge = await startForgeProcess({ dir: await ctx.tempDir("afk-bench-status-forge-"), repo: REPO, seed: join(seedDir, "seed.json") });
      ctx.defer(() => forge.close());
      const env = {
        GITHUB_API_URL: forge.apiUrl,
        GITHUB_TOKEN: forge.token,
        // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
        AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
        AFK_STATE_DIR: await ctx.tempDir("afk-bench-status-state-"),
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: process.env.HOME ?? "/tmp",
      };
      const start = { repo: REPO, worker_command: "sleep 600", target: 1 };

      const idle = await inMemory(ctx, new FleetHost({ env, instance: "benchidle" }));
      await idle({ repo: REPO });
      ctx.log("status: gathered afresh");
      const gathered = await timed(30, () => idle({ repo: REPO }));

      const host = new FleetHost({ env, instance: "benchfleet" });
      ctx.defer(() => host.close());
      const running = await inMemory(ctx, host);
      await host.start(start);
      await fromTick(running);
      ctx.log("status: from the in-process fleet's last tick");
      const inProcess = await timed(CALLS, () => running({ repo: REPO }));
      await host.stop({ repo: REPO, stop_workers: true });

      ctx.log("status: over stdio, the fleet in the daemon");
      const daemonEnv = { ...env, AFK_STATE_DIR: await ctx.tempDir("afk-bench-status-daemon-") };
      ctx.defer(async () => void (await cli(daemonEnv, "daemon", "stop", "--kill-workers")));
      const client = new Client({ name: "bench", version: "0" });
      const transport = new StdioClientTransport({ command: process.execPath, args: [BIN], env: daemonEnv, stderr: "pipe" });
      await client.connect(transport);
      ctx.defer(() => client.close());
      const stdio: Call = (args) => client.callTool({ name: "status", arguments: args }) as Promise<Result>;
      const started = await client.callTool({ name: "project_start", arguments: start }, undefined, { timeout: 600_000 });
      if (started.isError) throw new Error(`project_start through the daemon: ${JSON.stringify(started.content).slice(0, 300)}`);
      await fromTick(stdio);
      // CPU per call in each of the three processes: unlike wall time, it does not grow with the machine's load.
      const daemon = await daemonPid(daemonEnv);
      const cpu = () => ({ client: process.cpuUsage(), session: processCpuMs(transport.pid!), daemon: daemon === null ? null : processCpuMs(daemon) });
      const before = cpu();
      const t0 = performance.now();
      const throughDaemon = await timed(CALLS, () => stdio({ repo: REPO }));
      const window = performance.now() - t0;
      const after = cpu();
      // The daemon also ticks its fleet meanwhile: an idle window as long as the calls' is subtracted.
      await pause(window);
      const idleEnd = daemon === null ? null : processCpuMs(daemon);
      const perCall = (a: number | null, b: number | null) => (a === null || b === null ? null : round((b - a) / CALLS, 2));
      const clientMs = (after.client.user + after.client.system - before.client.user - before.client.system) / 1000;
      const daemonIdle = after.daemon === null || idleEnd === null ? null : idleEnd - after.daemon;
      await client.callTool({ name: "project_stop", arguments: { repo: REPO, stop_workers: true } }, undefined, { timeout: 600_000 });

      const figures: Figure[] = [
        ...latency("fleet", "status with a fleet running, in-process", inProcess, true),
        ...latency("stdio_daemon", "status over stdio, fleet in the daemon", throughDaemon, true),
        { key: "stdio_client_cpu_ms", label: "  CPU per call: the MCP client (this process)", value: round(clientMs / CALLS, 2), unit: "ms" },
        { key: "stdio_session_cpu_ms", label: "  CPU per call: the session (afk-mcp on stdio)", value: perCall(before.session, after.session), unit: "ms" },
        {
          key: "stdio_daemon_cpu_ms",
          label: "  CPU per call: the daemon (its idle ticks subtracted)",
          value: before.daemon === null || after.daemon === null || daemonIdle === null ? null : round((after.daemon - before.daemon - daemonIdle) / CALLS, 2),
          unit: "ms",
        },
        ...latency("gathered", "status gathered afresh (no fleet)", gathered, false),
      ];
      return {
        figures,
        notes: [
          `${inProcess.length} calls in-process and ${throughDaemon.length} over stdio with the fleet running, ${gathered.length} without; the forge runs in its own process; load average at the end ${loadavg()
            .map((l) => l.toFixed(1))
            .join(" ")} on ${cpus().length} CPUs`,
          "over stdio: an MCP client, the built binary (the session), its socket to the daemon, the daemon's fleet: the path a user's client takes",
        ],
      };
    },
  };
}
