// Engines: what the fleet records of spend against what was billed, and how fast a usage limit
// on one engine fails over to another. The CLIs are scripted stand-ins (a shell script per
// engine that answers `--version` and prints the output shape of its profile: Claude Code's
// stream-json result line with total_cost_usd and modelUsage, Codex's `exec --json`
// turn.completed usage), started by the fleet through its production spawn path like the real
// ones (those run in test/engines-real-cli.test.ts against a scripted model API; too slow for a
// bench section's repeated runs).
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { round, type BenchContext, type Figure, type Section, type SectionResult } from "./section.js";
import { benchFleet, lane, pause, readyForge, type StartConfig } from "./fleet-harness.js";
import { api } from "../test/support/forge-fixtures.js";

const ISSUES = 8;
/** USD per million tokens: what the stand-ins bill (alpha reports its cost; beta's is priced by the fleet). */
const PRICE = { alpha: { input: 3, output: 15 }, beta: { input: 1.25, output: 10 } };
const TURNS = 3;
const tokens = (n: number): { input: number; output: number } => ({ input: 1000 + 7 * n, output: 50 + 3 * n });
const billed = (engine: "alpha" | "beta", n: number): number =>
  (TURNS * (tokens(n).input * PRICE[engine].input + tokens(n).output * PRICE[engine].output)) / 1e6;

/** The stand-in CLIs, in `dir`: alpha (like claude) prints the plan-limit line instead when `dir/limited` exists. */
async function standIns(dir: string): Promise<{ alpha: string; beta: string }> {
  const head = (name: string) => [
    "#!/bin/sh",
    `if [ "$1" = "--version" ]; then echo "${name} 1.0 (bench stand-in)"; exit 0; fi`,
    "cat > /dev/null",
    "n=$AFK_ISSUE",
    `i=$((1000 + 7 * n)); o=$((50 + 3 * n))`,
  ];
  const commit = [
    'echo "work for $n" > "work-$n.txt"',
    'git add -A && git -c user.name=w -c user.email=w@example.com -c commit.gpgsign=false commit -qm "work for #$n"',
  ];
  const alpha = [
    ...head("alpha"),
    `if [ -e "${dir}/limited" ]; then echo "You've hit your session limit · resets 4:19pm (UTC)"; exit 1; fi`,
    ...commit,
    'echo \'{"type":"system","subtype":"init","model":"a1"}\'',
    `awk -v i=$i -v o=$o 'BEGIN { printf "{\\"type\\":\\"result\\",\\"subtype\\":\\"success\\",\\"total_cost_usd\\":%.12f,\\"modelUsage\\":{\\"a1\\":{\\"inputTokens\\":%d,\\"outputTokens\\":%d}}}\\n", ${TURNS} * (i * ${PRICE.alpha.input} + o * ${PRICE.alpha.output}) / 1000000, ${TURNS} * i, ${TURNS} * o }'`,
  ];
  const beta = [
    ...head("beta"),
    ...commit,
    `for t in ${Array.from({ length: TURNS }, (_, k) => k + 1).join(" ")}; do echo "{\\"type\\":\\"turn.completed\\",\\"usage\\":{\\"input_tokens\\":$i,\\"cached_input_tokens\\":0,\\"output_tokens\\":$o}}"; done`,
  ];
  const paths = { alpha: join(dir, "alpha"), beta: join(dir, "beta") };
  await writeFile(paths.alpha, [...alpha, ""].join("\n"));
  await writeFile(paths.beta, [...beta, ""].join("\n"));
  await chmod(paths.alpha, 0o755);
  await chmod(paths.beta, 0o755);
  return paths;
}

function config(bins: { alpha: string; beta: string }, extra: StartConfig = {}): StartConfig {
  return {
    gate: { ci: "local", local_command: "true" },
    landing: { strategy: "push" },
    pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 },
    engines: { alpha: { like: "claude", binary: bins.alpha }, beta: { like: "codex", binary: bins.beta, default_model: "b1" } },
    prices: { b1: { input_per_mtok: PRICE.beta.input, output_per_mtok: PRICE.beta.output } },
    ...extra,
  };
}

async function closedAll(forge: { apiUrl: string; token: string; repo: string }, repo: string, n: number, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const open = (await api(forge as never, "GET", `/repos/${repo}/issues?state=open&per_page=100`)).body as unknown[];
    if (open.length === 0) return;
    if (Date.now() > deadline) throw new Error(`${open.length} of ${n} issues still open`);
    await pause(250);
  }
}

export const enginesSection: Section = {
  name: "engines",
  summary: `spend recorded vs billed over ${ISSUES} issues on two engines (one reports its cost, one is priced from tokens), and failover from a usage limit to the next birth on the other engine`,
  async run(ctx: BenchContext): Promise<SectionResult> {
    const dir = await ctx.tempDir("afk-bench-engines-");
    const bins = await standIns(dir);

    // Spend accuracy: the first half of the issues routed to beta by a selector, the rest alpha (the start's).
    const repo = "bench/engines";
    const forge = await readyForge(ctx, { repo, issues: ISSUES });
    const fleet = await benchFleet(ctx, forge, { instance: "bench-engines", timeScale: 0.2 });
    ctx.defer(() => fleet.shutdown());
    const half = Array.from({ length: ISSUES / 2 }, (_, k) => k + 1);
    ctx.log(`draining ${ISSUES} issues on alpha and beta`);
    await fleet.host.start({
      repo,
      engine: "alpha",
      target: 4,
      auto_merge: true,
      config: config(bins, { selectors: [{ issues: half, engine: "beta" }, { label: "ready-for-agent" }] }),
    });
    await closedAll(forge, repo, ISSUES, 180_000);
    const spendOf = async () => (await fleet.host.status({ repo, scope: "worker" })).spend!;
    let spend = await spendOf();
    for (let i = 0; spend.today.attempts < ISSUES && i < 100; i++) {
      await pause(100);
      spend = await spendOf();
    }
    const want = Array.from({ length: ISSUES }, (_, k) => k + 1).reduce((sum, n) => sum + billed(half.includes(n) ? "beta" : "alpha", n), 0);
    const wantTokens = Array.from({ length: ISSUES }, (_, k) => k + 1).reduce(
      (s, n) => ({ input: s.input + TURNS * tokens(n).input, output: s.output + TURNS * tokens(n).output }),
      { input: 0, output: 0 },
    );
    const diff = Math.abs(spend.today.usd - want);
    await fleet.shutdown();

    // Failover: alpha answers with the plan-limit line; beta is configured beside it.
    const repo2 = "bench/failover";
    const forge2 = await readyForge(ctx, { repo: repo2, issues: 1 });
    const fleet2 = await benchFleet(ctx, forge2, { instance: "bench-failover", timeScale: 0.2 });
    ctx.defer(() => fleet2.shutdown());
    await writeFile(join(dir, "limited"), "");
    ctx.log("failing over from alpha's usage limit to beta");
    const t0 = Date.now();
    await fleet2.host.start({ repo: repo2, engine: "alpha", target: 1, auto_merge: true, config: config(bins) });
    await closedAll(forge2, repo2, 1, 120_000);
    const records = await lane(fleet2, "supervisor");
    const paused = records.find((r) => r.event === "engine_paused");
    const born = records.filter((r) => r.event === "worker_born");
    const failover = records.find((r) => r.event === "failover");
    const afterPause = paused ? born.find((r) => Date.parse(r.ts) >= Date.parse(paused.ts)) : undefined;
    const ticks =
      paused && afterPause
        ? (await lane(fleet2, "monitor")).filter(
            (r) => r.event === "tick" && Date.parse(r.ts) > Date.parse(paused.ts) && Date.parse(r.ts) <= Date.parse(afterPause.ts),
          ).length
        : null;
    const attempts = born.map((r) => (r as { attempt?: number }).attempt);
    const landedMs = Date.now() - t0;
    await fleet2.shutdown();

    const figures: Figure[] = [
      { key: "attempts_recorded", label: "attempts with a spend record", value: spend.today.attempts, goal: `${ISSUES}`, ok: spend.today.attempts === ISSUES },
      { key: "usd_billed", label: "USD billed by the stand-ins", value: round(want, 9), unit: "$" },
      { key: "usd_recorded", label: "USD recorded (status.spend.today)", value: round(spend.today.usd, 9), unit: "$" },
      {
        key: "usd_abs_error",
        label: "recorded − billed, absolute",
        value: Number(diff.toExponential(2)),
        unit: "$",
        goal: "< 1e-9 (exact up to float sums)",
        ok: diff < 1e-9,
      },
      {
        key: "tokens_exact",
        label: "input and output tokens recorded = billed",
        value: spend.today.input_tokens === wantTokens.input && spend.today.output_tokens === wantTokens.output,
        goal: "true",
        ok: spend.today.input_tokens === wantTokens.input && spend.today.output_tokens === wantTokens.output,
      },
      { key: "unknown_attempts", label: "attempts of unknown cost", value: spend.today.unknown_attempts, goal: "0", ok: spend.today.unknown_attempts === 0 },
      { key: "failover_seen", label: "failover from alpha to beta logged", value: failover !== undefined, goal: "true", ok: failover !== undefined },
      { key: "failover_ticks", label: "ticks from the usage limit to the birth on beta", value: ticks, goal: "≤ 1", ok: ticks !== null && ticks <= 1 },
      {
        key: "failover_ms",
        label: "  in time (time scale 0.2: ticks ~1 s apart)",
        value: paused && afterPause ? Date.parse(afterPause.ts) - Date.parse(paused.ts) : null,
        unit: "ms",
      },
      {
        key: "failover_attempts",
        label: "attempt numbers of the births (no attempt spent)",
        value: attempts.join(", "),
        goal: "1, 1",
        ok: attempts.join(", ") === "1, 1",
      },
      { key: "failover_total_ms", label: "project_start until the issue landed on beta", value: landedMs, unit: "ms" },
    ];
    return { figures, details: { spend: spend.today, want_usd: want, want_tokens: wantTokens } };
  },
};
