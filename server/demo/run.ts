// `afk-mcp demo`: the embedded default. A local forge in a temp dir seeded with a small
// project and a backlog, a local CI runner that tests every PR head, the fleet (the same
// host the MCP server runs) with scripted workers, a live board, and a final report that
// checks every issue reached its expected end.
import { mkdtemp, rm, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startForge, type ResponseObserver, type RunningForge } from "../forge-emulator/index.js";
import { FleetHost } from "../host/host.js";
import { sandboxAvailability } from "../runtimes/sandbox/available.js";
import { buildSeed, expectationsFor, ESCALATE_LABEL, type Expectation } from "./backlog.js";
import { startCiRunner, type CiRunner } from "./ci-runner.js";
import { workerShellCommand } from "./worker-command.js";
import { demoEngine } from "./engine.js";
import { UsageError } from "../gh/errors.js";
import { DEFAULT_CONFIG, RUNTIME_NAMES, type RuntimeName } from "../../schemas/config.js";
import { runtimeOf } from "../runtimes/sandbox/index.js";
import { actionsRuns, installWorkflow, runnerEngineEnv, type ActionsDemoRuns } from "./actions.js";
import { setTimeout as sleep } from "node:timers/promises";

export interface DemoOptions {
  /** A real agent's command instead of the scripted worker. */
  worker?: string;
  /** The real agent CLI (claude or codex) driven by the demo's scripted model on 127.0.0.1 (engine.ts). */
  engine?: string;
  /** With `engine`: what the scripted model does in each conversation (engine.ts demoScript; default "recipe"). */
  engineScript?: "recipe" | "explore";
  /** Config keys over the demo's own (the bench turns fix_forward off with it). */
  config?: Record<string, unknown>;
  /** Keep the forge running in this directory after the run (for inspection). */
  keep?: string;
  concurrency?: number;
  /**
   * Where the workers run: "sandbox" (the default where bubblewrap can run), "local", or
   * "actions" (every worker a workflow run on the embedded forge's Actions runner). Over
   * AFK_RUNTIME in the environment.
   */
  runtime?: RuntimeName;
  /** Give up after this long (default 15 minutes). */
  timeoutSeconds?: number;
  /** Multiplies the fleet's pacing and thresholds (default: brisk, for a demo). */
  timeScale?: number;
  /** Draws a live board when true; JSON lines otherwise. */
  tty: boolean;
  write: (line: string) => void;
  /** Redraws the live board in place (TTY only). */
  redraw?: (lines: string[]) => void;
  /** Sees every REST answer of the forge (the bench attributes the fleet's requests by it). */
  onResponse?: ResponseObserver;
}

export interface IssueEnd {
  number: number;
  title: string;
  expected: string;
  actual: string;
  attempts: number;
  seconds: number | null;
  ok: boolean;
}

export interface DemoReport {
  ok: boolean;
  issues: IssueEnd[];
  merged: number;
  escalated: number;
  closedDone: number;
  seconds: number;
  requests: { total: number; counted: number; notModified: number };
  /** The fleet's own requests that counted against its rate limit (the CI runner and the demo's watcher have their own user). */
  fleetCounted: number | null;
  /** The fleet's own requests per method and route template, the demo's setup left out (304s apart). */
  fleetRoutes: Record<string, RouteTally>;
  /** The fleet's login on the forge. */
  fleetLogin: string;
  ci: { runs: number; passed: number; failed: number };
  forge: { apiUrl: string; gitUrl: string; token: string; dir: string } | null;
  /** With --engine: the CLI, the model it asked the scripted model for, its turns, and spend recorded against billed. */
  engine?: { name: string; model: string; turns: number; billed_usd: number; recorded_usd: number | null };
  /** The runtime the workers ran with, and why that one. */
  runtime: { name: RuntimeName; why: string };
  /** With runtime "actions": the workflow runs the workers were. */
  actions?: ActionsDemoRuns;
}

export interface RouteTally {
  total: number;
  counted: number;
  not_modified: number;
}

interface Accounts {
  total: number;
  counted: number;
  not_modified: number;
  by_user: Record<string, Record<string, RouteTally>>;
}

interface IssueView {
  number: number;
  title: string;
  state: string;
  labels: string[];
}

const REPO = "afk/demo";

export async function runDemo(options: DemoOptions): Promise<DemoReport> {
  const started = Date.now();
  if (options.engine !== undefined && options.worker !== undefined) throw new UsageError("demo: pass --engine or --worker, not both");
  // Refused before anything is made: an unknown runtime, or one that cannot run here.
  const { runtime, why } = await demoRuntime(options.runtime);
  const dir = options.keep ?? (await mkdtemp(join(tmpdir(), "afk-demo-")));
  await mkdir(dir, { recursive: true });
  // Refused (with the install command) before anything starts when the CLI is missing.
  const agent =
    options.engine === undefined
      ? null
      : await demoEngine(options.engine, dir, undefined, undefined, options.engineScript).catch(async (error: unknown) => {
          if (!options.keep) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
          throw error;
        });
  const seedPath = join(dir, "seed.json");
  await writeFile(seedPath, JSON.stringify(buildSeed()));
  const concurrency = options.concurrency ?? 3;
  // The CI runner and the demo's own watching use a user of their own, so the fleet's rate
  // limit counts the fleet alone.
  const forge = await startForge({
    dir: join(dir, "forge"),
    repo: REPO,
    seed: seedPath,
    users: ["ci"],
    // With runtime "actions", the forge's runner takes as many runs at once as the fleet has workers.
    ...(runtime === "actions" ? { actionsConcurrency: concurrency } : {}),
    ...(options.onResponse ? { onResponse: options.onResponse } : {}),
  });
  const api = client(forge, forge.token);
  const watcher = client(forge, forge.users.ci ?? forge.token);
  // Before the base is protected (the workflow's PR is the setup's, not a change CI gates).
  if (runtime === "actions") await installWorkflow(forge, REPO, api, join(dir, "actions-init-state"));
  // With a real CLI on the runner: its API key is a repository secret the workflow names, as a
  // user sets it (`gh secret set`); the rest of its environment is handed over by name.
  const handed = runtime === "actions" && agent ? await runnerEngineEnv(api, agent.env) : [];
  // Required checks make the gate real: a PR lands only once CI passed on its head.
  await api("PUT", `/repos/${REPO}/branches/main/protection`, {
    required_status_checks: { strict: true, contexts: ["test"] },
    enforce_admins: null,
    required_pull_request_reviews: null,
    restrictions: null,
  });
  const fleetLogin = ((await api("GET", "/user")) as { login: string }).login;
  const setupUsed = await rateLimitUsed(api);
  const setupRoutes = ((await api("GET", "/_forge/accounting")) as Accounts).by_user[fleetLogin] ?? {};
  const ci: CiRunner = startCiRunner({
    apiUrl: forge.apiUrl,
    token: forge.users.ci ?? forge.token,
    repo: REPO,
    gitUrl: forge.gitUrl,
    workDir: join(dir, "ci"),
    intervalMs: 500,
    onLog: (line) => {
      if (!options.tty) options.write(JSON.stringify({ ci: line }));
    },
  });
  const env = {
    ...process.env,
    ...(agent?.env ?? {}),
    GITHUB_API_URL: forge.apiUrl,
    GITHUB_TOKEN: forge.token,
    AFK_STATE_DIR: join(dir, "state"),
    AFK_RUNTIME: runtime,
  };
  delete (env as Record<string, string | undefined>).GH_TOKEN;
  // A real CLI starts in seconds, silent at first: thresholds less compressed than for the scripted worker.
  const host = new FleetHost({ env, timeScale: options.timeScale ?? (agent ? 0.2 : 0.05), instance: "demo" });
  const retry = 2;
  const expectations = expectationsFor(retry);
  const firstSeen = new Map<number, number>();
  // Escalation removes the attempt labels, so the highest one seen during the run is kept.
  const maxAttempt = new Map<number, number>();
  const endedAt = new Map<number, number>();
  let report: DemoReport | null = null;
  options.write(options.tty ? `the demo's workers run with runtime "${runtime}" (${why})` : JSON.stringify({ runtime, why }));
  try {
    const start = await host.start({
      repo: REPO,
      ...(agent ? { engine: agent.engine, model: agent.model } : { worker_command: options.worker ?? workerShellCommand({ AFK_DEMO_DELAY_MS: "200" }) }),
      target: concurrency,
      auto_merge: true,
      config: {
        retry,
        runtime,
        // The runner's heartbeat at its briskest, as the rest of the demo's pacing.
        ...(runtime === "actions" ? { actions: { beat_seconds: 10, env: handed } } : {}),
        ...(agent?.config ?? {}),
        ...(options.config ?? {}),
      },
    });
    options.write(options.tty ? start.message : JSON.stringify({ started: start.registration }));
    const deadline = started + (options.timeoutSeconds ?? 900) * 1000;
    let last = "";
    for (;;) {
      await sleep(1000);
      const issues = await listIssues(watcher);
      const status = await host.status({ repo: REPO, scope: "worker" });
      const now = Date.now();
      for (const e of expectations) {
        const issue = issues.get(e.number);
        if (issue && !firstSeen.has(e.number) && (status.workers.some((w) => w.issue === e.number) || attemptsOf(issue) > 0)) firstSeen.set(e.number, now);
        if (issue && reached(e, issue) && !endedAt.has(e.number)) endedAt.set(e.number, now);
        if (issue) maxAttempt.set(e.number, Math.max(maxAttempt.get(e.number) ?? 0, attemptsOf(issue)));
      }
      const lines = board(expectations, issues, status.workers, status.last_tick, ci);
      if (options.tty && options.redraw) options.redraw(lines);
      else {
        const line = JSON.stringify({ tick: status.last_tick, workers: status.workers.map((w) => ({ issue: w.issue, state: w.state })) });
        if (line !== last) options.write(line);
        last = line;
      }
      const done = expectations.every((e) => {
        const issue = issues.get(e.number);
        return issue !== undefined && reached(e, issue);
      });
      const settled = done && status.workers.every((w) => w.state !== "running");
      if (settled || now > deadline) {
        const recorded = agent ? (await host.status({ repo: REPO, scope: "worker" })).spend?.today : undefined;
        const engine = agent
          ? {
              name: agent.engine,
              model: agent.model,
              turns: agent.scripted.turns.length,
              billed_usd: agent.scripted.billedUsd(),
              recorded_usd: recorded && recorded.unknown_attempts === 0 ? recorded.usd : null,
            }
          : undefined;
        const final = await finalReport(
          expectations,
          issues,
          maxAttempt,
          firstSeen,
          endedAt,
          started,
          forge,
          api,
          ci,
          options.keep !== undefined,
          setupUsed,
          (routes) => routesSince(routes[fleetLogin] ?? {}, setupRoutes),
        );
        // With runtime "actions", the demo holds only if every attempt was a run on the runner.
        const actions = runtime === "actions" ? await actionsRuns(watcher, REPO, new Map(final.issues.map((i) => [i.number, i.attempts]))) : undefined;
        report = {
          fleetLogin,
          runtime: { name: runtime, why },
          ...(actions ? { actions } : {}),
          ...(engine ? { engine } : {}),
          ...final,
          ok: final.ok && (actions?.one_run_per_attempt ?? true),
        };
        break;
      }
    }
  } finally {
    await host.stop({ repo: REPO }).catch(() => undefined);
    await host.close().catch(() => undefined);
    await ci.stop();
    await agent?.scripted.close();
    if (!options.keep) {
      await forge.close();
      await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    }
  }
  return report!;
}

/**
 * The demo's runtime: the one asked for, else AFK_RUNTIME, else sandboxed where bubblewrap can
 * run (and said so where it cannot: a fresh machine).
 */
async function demoRuntime(asked: RuntimeName | undefined): Promise<{ runtime: RuntimeName; why: string }> {
  if (asked !== undefined) {
    if (!RUNTIME_NAMES.includes(asked)) throw new UsageError(`--runtime must be one of ${RUNTIME_NAMES.join(", ")}`);
    return { runtime: asked, why: "--runtime" };
  }
  // AFK_RUNTIME as any start reads it (a bad value refused by name).
  if (process.env.AFK_RUNTIME) return { runtime: runtimeOf(DEFAULT_CONFIG, process.env), why: "AFK_RUNTIME" };
  const sandbox = await sandboxAvailability();
  return sandbox.ok ? { runtime: "sandbox", why: sandbox.detail } : { runtime: "local", why: `no sandbox here: ${sandbox.detail}` };
}

/** Serves the forge until interrupted (for --keep). */
export async function holdForge(write: (line: string) => void): Promise<void> {
  write("the forge keeps running for inspection; Ctrl-C to stop");
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
}

type Api = (method: string, path: string, body?: unknown) => Promise<unknown>;

/** What the token's rate limit has counted (GET /rate_limit itself costs nothing; its window is an hour, far longer than the demo). */
async function rateLimitUsed(api: Api): Promise<number | null> {
  const limit = (await api("GET", "/rate_limit").catch(() => null)) as { rate?: { used?: number } } | null;
  return limit?.rate?.used ?? null;
}

function client(forge: RunningForge, token: string): Api {
  return async (method, path, body) => {
    const response = await fetch(`${forge.apiUrl}${path}`, {
      method,
      headers: { authorization: `token ${token}`, accept: "application/vnd.github+json", "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!response.ok) throw new Error(`demo: ${method} ${path} answered ${response.status}`);
    return response.status === 204 ? null : response.json();
  };
}

async function listIssues(api: Api): Promise<Map<number, IssueView>> {
  const out = new Map<number, IssueView>();
  for (let page = 1; page < 20; page += 1) {
    const batch = (await api("GET", `/repos/${REPO}/issues?state=all&per_page=100&page=${page}`)) as Array<{
      number: number;
      title: string;
      state: string;
      labels: Array<{ name: string }>;
      pull_request?: unknown;
    }>;
    for (const i of batch) if (!i.pull_request) out.set(i.number, { number: i.number, title: i.title, state: i.state, labels: i.labels.map((l) => l.name) });
    if (batch.length < 100) break;
  }
  return out;
}

function attemptsOf(issue: IssueView): number {
  let n = 0;
  for (const label of issue.labels) {
    const m = /^afk-attempt\/(\d+)$/.exec(label);
    if (m) n = Math.max(n, Number(m[1]));
  }
  return n;
}

function endOf(issue: IssueView): string {
  if (issue.labels.includes(ESCALATE_LABEL)) return "escalated";
  if (issue.state === "closed") return "closed";
  return "open";
}

function reached(e: Expectation, issue: IssueView): boolean {
  const end = endOf(issue);
  switch (e.end) {
    case "merged":
    case "closed_done":
      return end === "closed";
    case "escalated":
      return end === "escalated";
    case "epic_done":
      return end === "closed";
    case "open_epic":
      return end === "open";
  }
}

function board(
  expectations: readonly Expectation[],
  issues: Map<number, IssueView>,
  workers: { issue: number; state: string }[],
  lastTick: string | null,
  ci: CiRunner,
): string[] {
  const lines = ["afk-mcp demo — a local forge, a sample project, scripted workers (or the real CLI of --engine), concurrency 3", ""];
  for (const e of expectations) {
    const issue = issues.get(e.number);
    const worker = workers.find((w) => w.issue === e.number);
    const now = issue ? endOf(issue) : "?";
    const mark = issue && reached(e, issue) ? "✓" : worker ? "…" : " ";
    const attempt = issue ? attemptsOf(issue) : 0;
    lines.push(
      `${mark} #${String(e.number).padEnd(3)} ${e.title.slice(0, 52).padEnd(52)} ${now.padEnd(10)} expect ${e.end.padEnd(12)}${attempt ? ` retry ${attempt}` : ""}${worker ? `  [${worker.state}]` : ""}`,
    );
  }
  const stats = ci.stats();
  lines.push("", `ci: ${stats.runs} run(s), ${stats.passed} passed, ${stats.failed} failed${stats.running ? `, testing ${stats.running.slice(0, 8)}` : ""}`);
  lines.push(`fleet: ${lastTick ?? "starting…"}`);
  return lines;
}

async function finalReport(
  expectations: readonly Expectation[],
  issues: Map<number, IssueView>,
  maxAttempt: Map<number, number>,
  firstSeen: Map<number, number>,
  endedAt: Map<number, number>,
  started: number,
  forge: RunningForge,
  api: Api,
  ci: CiRunner,
  keep: boolean,
  setupUsed: number | null,
  fleetRoutes: (byUser: Accounts["by_user"]) => Record<string, RouteTally>,
): Promise<Omit<DemoReport, "fleetLogin" | "runtime" | "actions" | "engine">> {
  const ends: IssueEnd[] = expectations.map((e) => {
    const issue = issues.get(e.number);
    const actual = issue ? endOf(issue) : "missing";
    const from = firstSeen.get(e.number);
    const to = endedAt.get(e.number);
    return {
      number: e.number,
      title: e.title,
      expected: e.end,
      actual:
        actual === "closed"
          ? e.end === "closed_done" || e.end === "epic_done"
            ? e.end
            : "merged"
          : actual === "open" && e.end === "open_epic"
            ? "open_epic"
            : actual,
      attempts: e.end === "open_epic" || e.end === "epic_done" ? 0 : (maxAttempt.get(e.number) ?? 0) + 1,
      seconds: from !== undefined && to !== undefined ? Math.round((to - from) / 100) / 10 : null,
      ok: issue !== undefined && reached(e, issue) && (e.attempts === undefined || (maxAttempt.get(e.number) ?? 0) + 1 === e.attempts),
    };
  });
  const accounting = (await api("GET", "/_forge/accounting")) as Accounts;
  const fleetUsed = await rateLimitUsed(api);
  const stats = ci.stats();
  return {
    ok: ends.every((e) => e.ok),
    issues: ends,
    merged: ends.filter((e) => e.actual === "merged").length,
    escalated: ends.filter((e) => e.actual === "escalated").length,
    closedDone: ends.filter((e) => e.actual === "closed_done").length,
    seconds: Math.round((Date.now() - started) / 1000),
    requests: { total: accounting.total, counted: accounting.counted, notModified: accounting.not_modified },
    fleetCounted: fleetUsed === null || setupUsed === null ? null : fleetUsed - setupUsed,
    fleetRoutes: fleetRoutes(accounting.by_user),
    ci: { runs: stats.runs, passed: stats.passed, failed: stats.failed },
    forge: keep ? { apiUrl: forge.apiUrl, gitUrl: forge.gitUrl, token: forge.token, dir: forge.dir } : null,
  };
}

/** Per route, what was made after `before` was taken; routes made only before are left out. */
function routesSince(now: Record<string, RouteTally>, before: Record<string, RouteTally>): Record<string, RouteTally> {
  const out: Record<string, RouteTally> = {};
  for (const [route, t] of Object.entries(now)) {
    const b = before[route] ?? { total: 0, counted: 0, not_modified: 0 };
    const d = { total: t.total - b.total, counted: t.counted - b.counted, not_modified: t.not_modified - b.not_modified };
    if (d.total > 0) out[route] = d;
  }
  return out;
}

export function renderReport(report: DemoReport): string[] {
  const lines = ["", `afk-mcp demo: ${report.ok ? "every issue reached its expected end" : "SOME ISSUES DID NOT REACH THEIR EXPECTED END"}`, ""];
  lines.push(`  #    issue${" ".repeat(48)}expected      actual        attempts  time`);
  for (const e of report.issues) {
    lines.push(
      `${e.ok ? "✓" : "✗"} #${String(e.number).padEnd(3)} ${e.title.slice(0, 52).padEnd(52)} ${e.expected.padEnd(13)} ${e.actual.padEnd(13)} ${String(e.attempts).padEnd(9)} ${e.seconds === null ? "-" : `${e.seconds}s`}`,
    );
  }
  lines.push(
    "",
    `merged ${report.merged}, escalated ${report.escalated}, closed as done ${report.closedDone}; ${report.seconds}s in all`,
    `CI: ${report.ci.runs} runs (${report.ci.passed} passed, ${report.ci.failed} failed)`,
    `GitHub API requests: ${report.requests.total} (${report.requests.counted} counted against the rate limit, ${report.requests.notModified} answered 304)`,
  );
  if (report.fleetCounted !== null) {
    const landed = report.merged > 0 ? ` (${Math.round((report.fleetCounted / report.merged) * 10) / 10} per landed issue)` : "";
    lines.push(`  of which the fleet's own, counted: ${report.fleetCounted}${landed}; the rest are the CI runner's and the demo's watching`);
  }
  lines.push(`workers: runtime ${report.runtime.name} (${report.runtime.why})`);
  if (report.actions) {
    const ends = Object.entries(report.actions.conclusions)
      .map(([end, n]) => `${n} ${end}`)
      .join(", ");
    const m = report.actions.mismatch;
    lines.push(
      report.actions.one_run_per_attempt
        ? `  every attempt a workflow run on the forge's Actions runner, none on this host: ${report.actions.runs} runs (${ends})`
        : `  NOT one run per attempt: ${report.actions.runs} runs (${ends}); attempts without a run: ${m?.attempts_without_run.join(", ") || "none"}; runs no attempt accounts for: ${m?.runs_without_attempt.join(", ") || "none"}`,
    );
  }
  if (report.engine)
    lines.push(
      `engine: the real ${report.engine.name} (model ${report.engine.model}) against the demo's scripted model on 127.0.0.1: ${report.engine.turns} model turns, billed $${report.engine.billed_usd.toFixed(4)}, recorded ${report.engine.recorded_usd === null ? "unknown" : `$${report.engine.recorded_usd.toFixed(4)}`}`,
    );
  if (report.forge)
    lines.push(`forge: GITHUB_API_URL=${report.forge.apiUrl} GITHUB_TOKEN=${report.forge.token} (git ${report.forge.gitUrl}, dir ${report.forge.dir})`);
  return lines;
}
