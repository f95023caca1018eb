// What `status` costs on a 1,000-issue backlog: with a fleet running (answered from its last
// tick) and without (a fresh read of GitHub), through the MCP tool, in-process, on the local forge.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { startForge } from "../server/localforge/index.js";
import { FleetHost } from "../server/host/host.js";
import { createServer } from "../server/server.js";
import { quantile, timed } from "./fleet-harness.js";
import { round, type BenchContext, type Figure, type Section, type SectionResult } from "./section.js";

const ISSUES = 1000;
const REPO = "afk/demo";

export function statusSection(): Section {
  return {
    name: "status",
    summary: `status on a ${ISSUES.toLocaleString("en-US")}-issue backlog: from a running fleet's last tick vs gathered afresh`,
    async run(ctx: BenchContext): Promise<SectionResult> {
      const seedDir = await ctx.tempDir("afk-bench-status-seed-");
      const seed = { labels: [{ name: "ready-for-agent" }], issues: Array.from({ length: ISSUES }, (_, i) => ({ title: `Issue ${i + 1}`, labels: ["ready-for-agent"] })) };
      await mkdir(seedDir, { recursive: true });
      await writeFile(join(seedDir, "seed.json"), JSON.stringify(seed));
      const forge = await startForge({ dir: await ctx.tempDir("afk-bench-status-forge-"), seed: join(seedDir, "seed.json") });
      ctx.defer(() => forge.close());
      const env = { GITHUB_API_URL: forge.apiUrl, GITHUB_TOKEN: forge.token, AFK_STATE_DIR: await ctx.tempDir("afk-bench-status-state-"), PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" };
      const call = async (host: FleetHost) => {
        const server = createServer(host);
        const [a, b] = InMemoryTransport.createLinkedPair();
        const client = new Client({ name: "bench", version: "0" });
        await Promise.all([server.connect(b), client.connect(a)]);
        ctx.defer(() => client.close());
        return (args: Record<string, unknown>) => client.callTool({ name: "status", arguments: args });
      };
      const idle = await call(new FleetHost({ env, instance: "benchidle" }));
      await idle({ repo: REPO });
      ctx.log("status: gathered afresh");
      const gathered = await timed(30, () => idle({ repo: REPO }));

      const host = new FleetHost({ env, instance: "benchfleet" });
      ctx.defer(() => host.close());
      const running = await call(host);
      await host.start({ repo: REPO, worker_command: "sleep 600", target: 1 });
      for (let i = 0; ; i += 1) {
        const r = (await running({ repo: REPO })).structuredContent as { source: { from: string } | null };
        if (r.source?.from === "fleet_tick") break;
        if (i > 600) throw new Error("the fleet's first tick never came");
        await new Promise((res) => setTimeout(res, 100));
      }
      ctx.log("status: from the fleet's last tick");
      const sample = await running({ repo: REPO });
      const text = (sample.content as { text: string }[])[0]!.text;
      if (sample.isError || !/plan: from the fleet's last tick/.test(text) || !/dispatch \(10 of \d+/.test(text)) throw new Error(`status did not answer from the tick: ${text.slice(0, 300)}`);
      const fromTick = await timed(300, () => running({ repo: REPO }));
      await host.stop({ repo: REPO, stop_workers: true });
      const p99 = quantile(fromTick, 0.99)!;
      const figures: Figure[] = [
        { key: "fleet_p50_ms", label: "status with a fleet running, p50", value: round(quantile(fromTick, 0.5)!, 2), unit: "ms" },
        { key: "fleet_p99_ms", label: "status with a fleet running, p99", value: round(p99, 2), unit: "ms", goal: "<= 50", ok: p99 <= 50 },
        { key: "gathered_p50_ms", label: "status gathered afresh (no fleet), p50", value: round(quantile(gathered, 0.5)!, 2), unit: "ms" },
        { key: "gathered_p99_ms", label: "status gathered afresh (no fleet), p99", value: round(quantile(gathered, 0.99)!, 2), unit: "ms" },
      ];
      return { figures, notes: [`${fromTick.length} calls with the fleet running, ${gathered.length} without; the MCP tool through an in-memory client`] };
    },
  };
}
