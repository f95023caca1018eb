#!/usr/bin/env node
// Regenerates docs/dashboard.png from a real run, not a test's fixture: the demo's backlog
// drained by the real Claude Code CLI against the demo's scripted model (so every attempt's
// spend is known), then the dashboard of this machine's daemon, with a fleet registered on
// the drained repository under a day budget, photographed by Debian's chromium.
//
//   npm run build && node scripts/dashboard-shot.mjs [--out docs/dashboard.png] [--keep]
//
// Not run in CI. Needs the devDependencies (claude, playwright-core) and /usr/bin/chromium
// (`apt-get install -y --no-install-recommends chromium`). It runs the demo once (a few
// minutes on a 2-core machine) and leaves nothing behind but the PNG (--keep: the temp dir).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const BIN = join(ROOT, "dist", "server", "bin.js");
const CHROMIUM = "/usr/bin/chromium";
// The Node 22 devDependency, as npm scripts would put it first on PATH.
const NODE = existsSync(join(ROOT, "node_modules", ".bin", "node")) ? join(ROOT, "node_modules", ".bin", "node") : process.execPath;
const REPO = "afk/demo";

const { values } = parseArgs({ options: { out: { type: "string", default: join(ROOT, "docs", "dashboard.png") }, keep: { type: "boolean", default: false } } });
if (!existsSync(BIN)) fail(`${BIN} is missing: run npm run build first`);
if (!existsSync(CHROMIUM)) fail(`${CHROMIUM} is missing: apt-get install -y --no-install-recommends chromium`);

const dir = await mkdtemp(join(tmpdir(), "afk-shot-"));
// The demo's own state dir (it sets AFK_STATE_DIR to <keep dir>/state): its ledger is the dashboard's.
const demoDir = join(dir, "demo");
const state = join(demoDir, "state");
const children = [];
let daemonEnv = null;

try {
  // The host-wide day budget every fleet of this state dir answers to (docs/engines.md).
  await mkdir(state, { recursive: true });
  await writeFile(join(state, "host.json"), JSON.stringify({ budget: { usd_per_day: 20 }, max_workers: 6 }));

  say("running the demo's backlog with --engine claude (the scripted model: no login, no cost)");
  const demo = start(NODE, [BIN, "demo", "--engine", "claude", "--runtime", "local", "--keep", demoDir, "--json"], process.env);
  // --json prints the report pretty, then the forge stays up for inspection (--keep).
  await firstLine(demo, (l) => l.includes("the forge keeps running"), 900_000);
  const report = lastJson(demo.lines.stdout);
  if (!report.ok) fail(`the demo did not reach its expected ends: ${JSON.stringify(report).slice(0, 2000)}`);
  const forge = report.forge;
  say(`demo done: ${report.issues?.length ?? "?"} issues; forge at ${forge.apiUrl}`);

  // A fleet on the drained repository, in this state dir's daemon, with a fleet budget beside the host's.
  daemonEnv = { ...process.env, GITHUB_API_URL: forge.apiUrl, GITHUB_TOKEN: forge.token, AFK_STATE_DIR: state, AFK_RUNTIME: "local" };
  delete daemonEnv.GH_TOKEN;
  const run = start(
    NODE,
    [BIN, "run", "--repo", REPO, "--worker", "true", "--auto-merge", "--set", "budget.usd_per_day=5", "--set", "budget.usd_per_issue=1"],
    daemonEnv,
  );
  await firstLine(run, (line) => /^\d{4}-\d\d-\d\dT/.test(line), 120_000); // "<tick time>: <summary>"

  const token = "shot-" + Math.random().toString(36).slice(2);
  const dashboard = start(NODE, [BIN, "dashboard", "--port", "0"], { ...daemonEnv, AFK_HTTP_TOKEN: token });
  const line = await firstLine(dashboard, (l) => l.includes("dashboard at "), 60_000, "stderr");
  const url = line.slice(line.indexOf("http")).split(" ")[0];
  say(`dashboard: ${url.replace(/token=.*/, "token=…")}`);

  const context = await chromium.launchPersistentContext(join(dir, "chromium"), {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1280, height: 900 },
    deviceScaleFactor: 1,
  });
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: "load" });
    // The fleet's facts are in: its budget and the day's spend are not "unknown".
    await page.waitForFunction(
      () => {
        const budget = document.querySelector(".budget")?.textContent ?? "";
        const spend = document.querySelector(".spend-today")?.textContent ?? "";
        return budget !== "" && !budget.includes("unknown") && spend !== "" && !spend.includes("unknown");
      },
      undefined,
      { timeout: 60_000 },
    );
    // The top of the page: the fleet's facts, the timelines, the report and the ledger's newest rows.
    const height = Math.min(1300, await page.evaluate(() => document.documentElement.scrollHeight));
    await page.screenshot({ path: values.out, fullPage: true, clip: { x: 0, y: 0, width: 1280, height } });
    say(`wrote ${values.out}`);
  } finally {
    await context.close();
  }
} finally {
  for (const child of children.reverse()) await stop(child);
  if (daemonEnv) await finished(start(NODE, [BIN, "daemon", "stop", "--kill-workers"], daemonEnv), 60_000).catch(() => undefined);
  if (!values.keep) await rm(dir, { recursive: true, force: true });
  else say(`kept ${dir}`);
}

function say(text) {
  process.stderr.write(`dashboard-shot: ${text}\n`);
}

function fail(text) {
  say(text);
  process.exit(1);
}

/** A child with its output collected line by line; ended with the rest on the way out. */
function start(cmd, args, env) {
  const child = spawn(cmd, args, { env, cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  child.lines = { stdout: [], stderr: [] };
  child.waiters = [];
  for (const stream of ["stdout", "stderr"]) {
    let rest = "";
    child[stream].on("data", (chunk) => {
      rest += chunk;
      const parts = rest.split("\n");
      rest = parts.pop();
      for (const l of parts) {
        child.lines[stream].push(l);
        for (const w of [...child.waiters]) w(stream, l);
      }
    });
  }
  child.once("exit", (code) => {
    for (const w of [...child.waiters]) w("exit", code);
  });
  children.push(child);
  return child;
}

/** The first line of `stream` that `match` accepts; rejects when the child exits first or at the deadline. */
function firstLine(child, match, ms, stream = "stdout") {
  return new Promise((ok, no) => {
    const timer = setTimeout(() => no(new Error(`no matching line in ${ms} ms; last lines: ${tail(child)}`)), ms);
    const waiter = (where, line) => {
      if (where === "exit") return no(new Error(`exited with ${line} first; last lines: ${tail(child)}`));
      if (where === stream && match(line)) {
        clearTimeout(timer);
        child.waiters.splice(child.waiters.indexOf(waiter), 1);
        ok(line);
      }
    };
    for (const l of child.lines[stream]) if (match(l)) return (clearTimeout(timer), ok(l));
    child.waiters.push(waiter);
  });
}

/** The last pretty-printed JSON object in these lines (from a line "{" to a line "}"). */
function lastJson(lines) {
  const from = lines.lastIndexOf("{");
  const to = lines.lastIndexOf("}");
  if (from < 0 || to < from) fail(`no JSON report in the demo's output: ${JSON.stringify(lines.slice(-5))}`);
  return JSON.parse(lines.slice(from, to + 1).join("\n"));
}

function tail(child) {
  return JSON.stringify([...child.lines.stdout.slice(-5), ...child.lines.stderr.slice(-10)]);
}

function finished(child, ms) {
  return new Promise((ok, no) => {
    if (child.exitCode !== null) return ok(child.exitCode);
    const timer = setTimeout(() => no(new Error("still running")), ms);
    child.once("exit", (code) => (clearTimeout(timer), ok(code)));
  });
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGINT");
  await finished(child, 30_000).catch(() => {
    child.kill("SIGKILL");
  });
}
