// The daemon's figures: what a status call costs through the socket next to the same call on
// an in-process host; the daemon's RSS idle and holding registrations (bench/daemon-idle.ts,
// with the requests an idle tick costs); and what a session's
// kill -9 costs the fleet (workers killed, time until a new session sees them all).
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { fileURLToPath } from "node:url";
import { DaemonClient } from "../server/daemon/client.js";
import { FleetHost } from "../server/host/host.js";
import { BASE_CONFIG, alive, daemonPid, daemonWorld, teardown, until, workerPids } from "../test/support/daemon-fixtures.js";
import { idleRegistrationFigures, rss } from "./daemon-idle.js";
import { quantile, timed } from "./fleet-harness.js";
import { mib, round, type BenchContext, type Figure, type Section, type SectionResult } from "./section.js";

const BIN = fileURLToPath(new URL("../server/bin.js", import.meta.url));
const REPO = "afk/demo";

function latencyFigures(key: string, label: string, daemon: number[], local: number[]): Figure[] {
  const d50 = quantile(daemon, 0.5)!;
  const l50 = quantile(local, 0.5)!;
  return [
    { key: `${key}_daemon_p50_ms`, label: `${label} through the daemon, p50`, value: round(d50, 2), unit: "ms" },
    { key: `${key}_daemon_p99_ms`, label: `${label} through the daemon, p99`, value: round(quantile(daemon, 0.99)!, 2), unit: "ms" },
    { key: `${key}_inproc_p50_ms`, label: `${label} in-process, p50`, value: round(l50, 2), unit: "ms" },
    { key: `${key}_inproc_p99_ms`, label: `${label} in-process, p99`, value: round(quantile(local, 0.99)!, 2), unit: "ms" },
    { key: `${key}_p50_ratio`, label: `${label}: daemon / in-process (p50)`, value: round(d50 / l50, 2), unit: "x" },
  ];
}

export function daemonSection(): Section {
  return {
    name: "daemon",
    summary: "status through the daemon vs in-process, daemon RSS, a session's kill -9",
    async run(ctx: BenchContext): Promise<SectionResult> {
      const figures: Figure[] = [];
      const notes: string[] = [];
      // 1. Latency: one idle project, the same forge, the same calls.
      const w = await daemonWorld(["one", "two"]);
      ctx.defer(() => teardown(w));
      const session = new DaemonClient({ env: w.env });
      ctx.defer(() => session.close());
      await session.start({ repo: REPO, worker_command: `sh ${w.worker}`, target: 2, config: { ...BASE_CONFIG } });
      await until("two workers", async () => (await workerPids(w.planDir)).size === 2);
      // The same project on a twin forge, run by a host in this process.
      const twin = await daemonWorld(["one", "two"]);
      ctx.defer(() => teardown(twin));
      const local = new FleetHost({ env: twin.env, instance: "benchlocal", timeScale: 0.05 });
      ctx.defer(() => local.close());
      await local.start({ repo: REPO, worker_command: `sh ${twin.worker}`, target: 2, config: { ...BASE_CONFIG } });
      await until("two in-process workers", async () => (await workerPids(twin.planDir)).size === 2);
      await local.status({ repo: REPO });
      await session.status({ repo: REPO });
      ctx.log("daemon: status latency");
      const workerD = await timed(300, () => session.status({ repo: REPO, scope: "worker" }));
      const workerL = await timed(300, () => local.status({ repo: REPO, scope: "worker" }));
      const projectD = await timed(30, () => session.status({ repo: REPO }));
      const projectL = await timed(30, () => local.status({ repo: REPO }));
      figures.push(...latencyFigures("status_worker", 'status {scope: "worker"}', workerD, workerL));
      figures.push(...latencyFigures("status_project", 'status {scope: "project"} (a plan)', projectD, projectL));
      notes.push("Both sides run the same project (two workers) on twin forges: the difference is the socket round trip and its JSON.");

      // 2. A session's kill -9 while two workers run: how many die, how soon a new session sees them.
      ctx.log("daemon: kill -9 of a session");
      const k = await daemonWorld(["one", "two"]);
      ctx.defer(() => teardown(k));
      const transport = new StdioClientTransport({ command: process.execPath, args: [BIN], env: k.env, stderr: "pipe" });
      const mcp = new Client({ name: "afk-bench", version: "0.0.0" });
      await mcp.connect(transport);
      await mcp.callTool({ name: "project_start", arguments: { repo: REPO, worker_command: `sh ${k.worker}`, target: 2, config: { ...BASE_CONFIG } } });
      await until("two workers", async () => (await workerPids(k.planDir)).size === 2);
      const pids = [...(await workerPids(k.planDir)).values()];
      const killedAt = performance.now();
      process.kill(transport.pid!, "SIGKILL");
      const next = new DaemonClient({ env: k.env });
      ctx.defer(() => next.close());
      await until("a new session to see both workers", async () => (await next.status({ repo: REPO, scope: "worker" })).workers.length === 2);
      const seenMs = performance.now() - killedAt;
      await mcp.close().catch(() => undefined);
      figures.push(
        {
          key: "session_kill_workers_killed",
          label: "workers killed by a session's kill -9 (of 2)",
          value: pids.filter((p) => !alive(p)).length,
          goal: "0",
          ok: pids.every(alive),
        },
        { key: "session_kill_to_seen_ms", label: "session kill -9 → a new session's status shows both", value: round(seenMs, 0), unit: "ms" },
      );

      // 3. The daemon's memory holding this one registration with two workers, then idle ones.
      const pid = (await daemonPid(k.env))!;
      const withOne = await rss(pid);
      figures.push({
        key: "daemon_one_registration_rss_mib",
        label: "daemon RSS, one registration with 2 workers",
        value: withOne === null ? null : mib(withOne),
        unit: "MiB",
      });
      const idle = await idleRegistrationFigures(ctx);
      figures.push(...idle.figures);
      notes.push(...idle.notes);
      return { figures, notes };
    },
  };
}
