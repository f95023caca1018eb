// Snapshot cost over a seeded local forge: a cold gather with a fresh adapter, then an
// unchanged second gather with the same adapter (what an idle tick costs in rate limit).
// Requests are counted twice, independently: by the adapter (its ETag cache's stats) and by
// the forge (its accounting, per route). The forge runs in a child process.
import type { RunningForge } from "../server/forge-emulator/index.js";
import { createGitHubForge, type GitHubForge } from "../server/gh/github-forge.js";
import { GitRefStore } from "../server/gh/gitrefs.js";
import { GatherMemory, gatherSnapshot, type GatherOptions } from "../server/gh/gather.js";
import { rebuild } from "../server/state/rebuild.js";
import type { Snapshot } from "../server/state/snapshot.js";
import { DEFAULT_CONFIG } from "../schemas/config.js";
import { api } from "../test/support/forge-fixtures.js";
import { startForgeProcess } from "./forge-process.js";
import { DEFAULT_BACKLOG, HUMAN, INSTANCES, backlogSeed, seedForge, writeSeedFile, type BacklogSpec } from "./seed.js";
import { mib, round, type BenchContext, type Figure, type Section, type SectionResult } from "./section.js";

interface Tally {
  total: number;
  counted: number;
  not_modified: number;
}

interface Accounting extends Tally {
  by_route: Record<string, Tally>;
}

interface Measured {
  snapshot: Snapshot;
  wall_ms: number;
  cpu_ms: number;
  adapter: { total: number; counted: number; not_modified: number; failed: number; cached: number };
  forge: Accounting;
}

async function accounting(forge: RunningForge, path: "/_forge/accounting" | "/_forge/accounting/reset"): Promise<Accounting> {
  const r = await api<Accounting>(forge, path.endsWith("reset") ? "POST" : "GET", path, undefined, { token: null });
  if (r.status !== 200) throw new Error(`${path}: HTTP ${r.status}`);
  return r.body;
}

async function measureGather(forge: RunningForge, adapter: GitHubForge, refs: GitRefStore, options: Omit<GatherOptions, "now">): Promise<Measured> {
  await accounting(forge, "/_forge/accounting/reset");
  const before = adapter.stats();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const snapshot = await gatherSnapshot(adapter, refs, { ...options, now: new Date() });
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  const after = adapter.stats();
  return {
    snapshot,
    wall_ms: round(wall),
    cpu_ms: round((cpu.user + cpu.system) / 1000),
    adapter: {
      total: after.total - before.total,
      counted: after.counted - before.counted,
      not_modified: after.notModified - before.notModified,
      failed: after.failed - before.failed,
      cached: after.cached,
    },
    forge: await accounting(forge, "/_forge/accounting"),
  };
}

/** Route -> tally, biggest first, routes shortened to what follows the repository. */
function routeNotes(title: string, acc: Accounting): string[] {
  const rows = Object.entries(acc.by_route).sort((a, b) => b[1].total - a[1].total || a[0].localeCompare(b[0]));
  return [
    `${title}: ${acc.total} requests, ${acc.counted} counted, ${acc.not_modified} answered 304`,
    ...rows.map(([route, t]) => `  ${route.replace("/repos/{owner}/{repo}", "…")}  total ${t.total}, counted ${t.counted}, 304 ${t.not_modified}`),
  ];
}

function gatherFigures(prefix: string, label: string, m: Measured): Figure[] {
  return [
    { key: `${prefix}_wall_ms`, label: `${label}: wall`, value: m.wall_ms, unit: "ms" },
    { key: `${prefix}_cpu_ms`, label: `${label}: bench-process CPU`, value: m.cpu_ms, unit: "ms" },
    { key: `${prefix}_requests`, label: `${label}: requests (adapter)`, value: m.adapter.total },
    { key: `${prefix}_counted`, label: `${label}: rate-limit-counted (adapter)`, value: m.adapter.counted },
    { key: `${prefix}_not_modified`, label: `${label}: 304s (adapter)`, value: m.adapter.not_modified },
    { key: `${prefix}_forge_requests`, label: `${label}: requests (forge accounting)`, value: m.forge.total },
    { key: `${prefix}_forge_counted`, label: `${label}: rate-limit-counted (forge)`, value: m.forge.counted },
    { key: `${prefix}_forge_not_modified`, label: `${label}: 304s (forge)`, value: m.forge.not_modified },
  ];
}

export function snapshotSection(spec: BacklogSpec = DEFAULT_BACKLOG): Section {
  return {
    name: "snapshot",
    summary: `cold and unchanged snapshots of a ${spec.issues}-issue, ${spec.pulls}-PR backlog on the local forge`,
    async run(ctx: BenchContext): Promise<SectionResult> {
      const t0 = performance.now();
      const { seed, stats } = backlogSeed(spec);
      const seedDir = await ctx.tempDir("afk-bench-seed-");
      const forgeDir = await ctx.tempDir("afk-bench-forge-");
      ctx.log(`starting the forge with ${spec.issues} seeded issues`);
      const forge = await startForgeProcess({ dir: forgeDir, repo: "bench/backlog", users: [HUMAN], seed: await writeSeedFile(seedDir, seed) });
      ctx.log(`  forge up: ${Math.round(performance.now() - t0)} ms`);
      ctx.defer(() => forge.close());
      ctx.log(`seeding ${spec.pulls} PRs (one push), claims, heartbeats and checks`);
      const rest = await seedForge(forge, spec, seed, seedDir, ctx.log);
      const seedMs = round(performance.now() - t0, 0);
      ctx.log(`seeded in ${seedMs} ms`);

      const adapter = createGitHubForge({ repo: forge.repo, token: forge.token, baseUrl: forge.apiUrl, fast: true });
      const refs = new GitRefStore({ controlDir: await ctx.tempDir("afk-bench-control-"), remoteUrl: forge.gitUrl, token: forge.token });
      const options: Omit<GatherOptions, "now"> = {
        login: "afk-bot",
        defaultBranch: "main",
        base: "main",
        namespace: "refs/afk",
        gateMode: "required",
        memory: new GatherMemory(),
      };

      ctx.log("cold snapshot");
      const cold = await measureGather(forge, adapter, refs, options);
      ctx.memory.sample();
      ctx.log("unchanged snapshot");
      const warm = await measureGather(forge, adapter, refs, options);
      ctx.memory.sample();

      // Sanity: the snapshot saw what was seeded, and the seeded backlog gives rebuild real work.
      const snap = warm.snapshot;
      const fleetPulls = snap.pulls.filter((p) => p.checks !== undefined).length;
      const rebuildStart = performance.now();
      const set = rebuild(snap, DEFAULT_CONFIG, INSTANCES.me, new Date());
      const rebuildMs = performance.now() - rebuildStart;
      const forgePeak = await forge.peakRss();

      const idle = warm.adapter.counted;
      const figures: Figure[] = [
        { key: "seed_ms", label: "seeding (not measured below)", value: seedMs, unit: "ms" },
        { key: "issues", label: "open issues in the snapshot", value: snap.issues.length },
        { key: "pulls", label: "open PRs in the snapshot", value: snap.pulls.length },
        { key: "fleet_pulls_with_checks", label: "fleet PRs whose checks were read", value: fleetPulls },
        { key: "claims", label: "claim refs", value: snap.claims.length },
        { key: "heartbeats", label: "heartbeat refs", value: snap.heartbeats.length },
        ...gatherFigures("cold", "cold snapshot", cold),
        ...gatherFigures("unchanged", "unchanged snapshot", warm),
        {
          key: "idle_tick_rate_limit_cost",
          label: "idle tick rate-limit cost (= unchanged counted)",
          value: idle,
          unit: "requests",
          goal: "0",
          ok: idle === 0 && warm.forge.counted === 0,
        },
        { key: "rebuild_gathered_ms", label: `rebuild of the gathered snapshot (one run, cold JIT)`, value: round(rebuildMs, 2), unit: "ms" },
        { key: "frontier_dispatch", label: "frontier: dispatchable", value: set.frontier.dispatch.length },
        { key: "frontier_excluded", label: "frontier: excluded", value: set.frontier.excluded.length },
        { key: "mine", label: "claims: mine / peer live / stale", value: `${set.mine.length} / ${set.peer_live.length} / ${set.stale.length}` },
        { key: "forge_peak_rss_mib", label: "forge child process peak RSS", value: forgePeak === null ? null : mib(forgePeak), unit: "MiB" },
      ];
      if (fleetPulls !== rest.fleet_pulls || snap.issues.length !== spec.issues || snap.pulls.length !== spec.pulls) {
        throw new Error(
          `the snapshot does not match the seed: ${snap.issues.length} issues, ${snap.pulls.length} PRs, ${fleetPulls}/${rest.fleet_pulls} fleet PRs with checks`,
        );
      }
      return {
        figures,
        details: {
          seeded: { ...stats, ...rest, seed_ms: seedMs },
          cold_by_route: cold.forge.by_route,
          unchanged_by_route: warm.forge.by_route,
        },
        notes: [...routeNotes("cold snapshot, by route (forge accounting)", cold.forge), ...routeNotes("unchanged snapshot, by route", warm.forge)],
      };
    },
  };
}
