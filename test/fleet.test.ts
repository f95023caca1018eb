// The fleet for real: a local forge over HTTP, a FleetHost driven through a real MCP client,
// and scripted worker programs (test/support/workers/scripted.sh) started through the same
// code path as a real agent — project_start's worker_command, a shell, a worktree, the brief
// on stdin. Each scenario gets its own forge and fleet and they run concurrently; every
// assertion is about outcomes on the forge (issues, labels, comments, PRs, refs), the lanes
// and the processes, never about how long something took.
import { after, describe, it, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { open, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createServer } from "../server/server.js";
import { FleetHost } from "../server/host/host.js";
import { BRIEF_BODY_MAX_BYTES } from "../server/agent/brief.js";
import { readProcTable } from "../server/runtimes/local/proc.js";
import { api, git, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { ROOT } from "./support/paths.js";
import { RUNTIME_TEXTS } from "./support/runtime-texts.js";

const WORKER = join(ROOT, "test", "support", "workers", "scripted.sh");
const REPO = "afk/demo";
const READY = "ready-for-agent";
const HUMAN = "ready-for-human";
/** The escalation comment (board.ts renders it). */
const ESCALATION = /<!-- afk:escalation -->|to a human/;

/** Durations of the loop run at this fraction: 10 s pacing → 0.5 s, a 60 s stall → 3 s. */
const SCALE = 0.05;

/** Config every scenario starts from: a local gate, brisk pacing (a worker's exit wakes the loop at once). */
const BASE_CONFIG = {
  gate: { ci: "local", local_command: "true" },
  pacing: { busy_seconds: 10, idle_seconds: 10, long_idle_seconds: 10 },
};

interface IssueSpec {
  title: string;
  body?: string;
  /** Default: the ready label. */
  labels?: string[];
  /** The scripted worker's behaviour for this issue (see scripted.sh); none: not for a worker. */
  plan?: string;
}

interface Scenario {
  forge: TestForge;
  client: Client;
  host: FleetHost;
  env: Record<string, string>;
  stateDir: string;
  planDir: string;
  /** issue numbers, in the order of the specs */
  issues: number[];
}

const scenarios: Scenario[] = [];
const children: ChildProcess[] = [];

after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await Promise.all(scenarios.map((s) => shutdown(s)));
});

const shutdowns = new Map<Scenario, Promise<void>>();

/** Stops the scenario's fleet (killing its workers) and removes its forge and directories. Once. */
function shutdown(s: Scenario): Promise<void> {
  let done = shutdowns.get(s);
  if (!done) shutdowns.set(s, (done = dispose(s)));
  return done;
}

async function dispose(s: Scenario): Promise<void> {
  // FLEET_DEBUG=1: the scenario's supervisor and liveness lanes on stderr, for a failure's story.
  if (process.env.FLEET_DEBUG) {
    for (const name of ["supervisor", "liveness"] as const) {
      for (const r of await lane(s, name).catch(() => [])) console.error(`${r.ts} ${name} ${r.event}: ${r.msg}`);
    }
  }
  await s.host.stop({ repo: REPO, stop_workers: true }).catch(() => undefined);
  await s.host.close().catch(() => undefined);
  await s.client.close().catch(() => undefined);
  await killRecordedGroups(s.planDir);
  await s.forge.dispose().catch(() => undefined);
  await rm(s.stateDir, { recursive: true, force: true });
  await rm(s.planDir, { recursive: true, force: true });
}

/**
 * A forge with the ready label and the issues, a plan directory, a host and an MCP client; all
 * of it goes when the test ends (an idle fleet still ticks, and the others need the CPU).
 */
async function scenario(t: TestContext, issues: IssueSpec[], options: { instance?: string } = {}): Promise<Scenario> {
  const forge = await startTestForge();
  for (const name of [READY, "plain"]) {
    const r = await api(forge, "POST", repoPath(forge, "/labels"), { name, color: "0e8a16" });
    assert.equal(r.status, 201);
  }
  const planDir = await tempDir("afk-plan-");
  const numbers: number[] = [];
  for (const spec of issues) {
    const r = await api(forge, "POST", repoPath(forge, "/issues"), { title: spec.title, body: spec.body ?? "", labels: spec.labels ?? [READY] });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    numbers.push(r.body.number as number);
    if (spec.plan) await writeFile(join(planDir, String(r.body.number)), `${spec.plan}\n`);
  }
  const stateDir = await tempDir("afk-state-");
  const env = {
    GITHUB_API_URL: forge.apiUrl,
    GITHUB_TOKEN: forge.token,
    // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
    AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
    AFK_STATE_DIR: stateDir,
    AFK_USER_PLAN: planDir,
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
  };
  const { host, client } = await connectHost(env, options.instance);
  const s: Scenario = { forge, client, host, env, stateDir, planDir, issues: numbers };
  scenarios.push(s);
  t.after(() => shutdown(s));
  return s;
}

async function connectHost(env: Record<string, string>, instance?: string): Promise<{ host: FleetHost; client: Client }> {
  const host = new FleetHost({ env, timeScale: SCALE, ...(instance ? { instance } : {}) });
  const server = createServer(host);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "afk-fleet-test", version: "0.0.0" });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return { host, client };
}

// ---- MCP calls ----------------------------------------------------------------------------------

// Tests read structured results field by field.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** A loaded machine can take minutes over a start's preflight or a stop's drain: not the SDK's 60 s. */
const CALL_OPTIONS = { timeout: 600_000 };

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Json> {
  const result = await client.callTool({ name, arguments: args }, undefined, CALL_OPTIONS);
  const text = (result.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");
  assert.notEqual(result.isError, true, `${name} failed: ${text}`);
  return result.structuredContent;
}

function start(s: Scenario, input: { config?: Record<string, unknown>; target?: number; auto_merge?: boolean }): Promise<Json> {
  return call(s.client, "project_start", {
    repo: REPO,
    worker_command: `sh ${WORKER}`,
    target: input.target ?? s.issues.length,
    auto_merge: input.auto_merge ?? false,
    config: { ...BASE_CONFIG, ...input.config },
  });
}

interface LaneRecord {
  ts: string;
  level?: string;
  event: string;
  msg: string;
  issue?: number;
  pid?: number;
  attempt?: number;
  data?: Json;
}

type LaneName = "supervisor" | "worker" | "monitor" | "liveness";

/**
 * The whole lane, oldest first, read from its file incrementally (only the bytes written since
 * the last read are parsed). The scenarios poll their lanes every quarter second; done through
 * the logs tool, each poll re-read and re-validated the whole lane inside the process that also
 * runs every scenario's fleet and forge, and on a loaded machine that polling starved the fleets
 * it watched (loops silent for minutes, forge requests timing out). The tool itself is checked
 * once below (laneViaTool) and in the MCP tests.
 */
async function lane(s: Scenario, name: LaneName, issue?: number): Promise<LaneRecord[]> {
  const file = join(s.stateDir, "lanes", "afk", "demo", `${name}.jsonl`);
  let cache = laneCache.get(file);
  const size = (await stat(file).catch(() => null))?.size ?? 0;
  if (!cache || size < cache.offset) cache = { offset: 0, partial: "", records: [] }; // new, or rotated
  if (size > cache.offset) {
    const handle = await open(file, "r");
    try {
      const chunk = Buffer.alloc(size - cache.offset);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, cache.offset);
      cache.offset += bytesRead;
      const lines = (cache.partial + chunk.subarray(0, bytesRead).toString("utf8")).split("\n");
      cache.partial = lines.pop() ?? "";
      for (const line of lines) if (line.trim() !== "") cache.records.push(JSON.parse(line) as LaneRecord);
    } finally {
      await handle.close();
    }
  }
  laneCache.set(file, cache);
  return issue === undefined ? [...cache.records] : cache.records.filter((r) => r.issue === issue);
}

const laneCache = new Map<string, { offset: number; partial: string; records: LaneRecord[] }>();

/** The whole lane through the logs tool, a page at a time through its cursor. */
async function laneViaTool(s: Scenario, name: LaneName, issue?: number): Promise<LaneRecord[]> {
  const pages: LaneRecord[][] = [];
  let cursor: string | null = null;
  do {
    const out = await call(s.client, "logs", {
      repo: REPO,
      lane: name,
      tail_lines: 5000,
      ...(issue !== undefined ? { issue } : {}),
      ...(cursor ? { cursor } : {}),
    });
    pages.unshift(out.records as LaneRecord[]);
    cursor = out.next_cursor as string | null;
  } while (cursor);
  return pages.flat();
}

const events = async (s: Scenario, event: string, issue?: number): Promise<LaneRecord[]> =>
  (await lane(s, event === "tick" ? "monitor" : ["killed", "kill", "busy", "stall_candidate"].includes(event) ? "liveness" : "supervisor", issue)).filter(
    (r) => r.event === event && (issue === undefined || r.issue === issue),
  );

// ---- the forge ----------------------------------------------------------------------------------

async function issue(s: Scenario, n: number): Promise<Json> {
  const r = await api(s.forge, "GET", repoPath(s.forge, `/issues/${n}`));
  assert.equal(r.status, 200);
  return r.body;
}

const labelsOf = (i: Json): string[] => (i.labels as { name: string }[]).map((l) => l.name).sort();

async function comments(s: Scenario, n: number): Promise<string[]> {
  const r = await api(s.forge, "GET", repoPath(s.forge, `/issues/${n}/comments?per_page=100`));
  return (r.body as { body: string }[]).map((c) => c.body);
}

async function pulls(s: Scenario): Promise<Json[]> {
  const r = await api(s.forge, "GET", repoPath(s.forge, "/pulls?state=all&per_page=100"));
  return r.body as Json[];
}

async function pullFor(s: Scenario, n: number): Promise<Json | undefined> {
  return (await pulls(s)).find((p) => new RegExp(`^afk/${n}(?:-|$)`).test(p.head.ref));
}

/** Issue numbers with a claim ref on the forge, read over git as any peer would. */
async function claims(s: Scenario): Promise<number[]> {
  const { stdout } = await git(s.planDir, "ls-remote", s.forge.gitUrl, "refs/afk/claim/*");
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => Number(line.split("\t")[1]!.split("/").pop()))
    .sort((a, b) => a - b);
}

async function heartbeats(s: Scenario): Promise<string[]> {
  const { stdout } = await git(s.planDir, "ls-remote", s.forge.gitUrl, "refs/afk/heartbeat/*");
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => line.split("\t")[1]!.split("/").pop()!);
}

function worktreeOf(s: Scenario, n: number): string {
  return join(s.stateDir, "worktrees", "afk", "demo", `issue-${n}`);
}

// ---- processes ----------------------------------------------------------------------------------

// Pids are reused quickly on a busy machine (pid_max may be 32768): a process counts as one of
// a scenario's workers only if it carries that scenario's plan directory in its environment
// (every worker and its children inherit AFK_USER_PLAN).

async function ours(pid: number, planDir: string): Promise<boolean> {
  const environ = await readFile(`/proc/${pid}/environ`, "utf8").catch(() => "");
  return environ.split("\0").includes(`AFK_USER_PLAN=${planDir}`);
}

/** Live (non-zombie) processes of a scenario's process group. */
async function groupMembers(s: Scenario, pgid: number): Promise<number[]> {
  const table = await readProcTable();
  assert.ok(table, "these tests read /proc");
  const members = table.filter((p) => p.pgrp === pgid && p.state !== "Z" && p.state !== "X").map((p) => p.pid);
  const mine: number[] = [];
  for (const pid of members) if (await ours(pid, s.planDir)) mine.push(pid);
  return mine;
}

async function alive(s: Scenario, pid: number): Promise<boolean> {
  const table = await readProcTable();
  return (table ?? []).some((p) => p.pid === pid && p.state !== "Z" && p.state !== "X") && (await ours(pid, s.planDir));
}

/** Safety net: ends the process groups of this scenario's workers that are somehow still alive. */
async function killRecordedGroups(planDir: string): Promise<void> {
  const names = await readdir(planDir).catch(() => [] as string[]);
  for (const name of names.filter((f) => f.endsWith(".pid"))) {
    const pid = Number((await readFile(join(planDir, name), "utf8")).trim());
    const entry = ((await readProcTable()) ?? []).find((p) => p.pid === pid);
    if (!entry || !(await ours(pid, planDir))) continue;
    try {
      process.kill(-entry.pgrp, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

// ---- waiting ------------------------------------------------------------------------------------

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls `probe` until it returns something truthy. The deadline is counted in the fleet's own
 * ticks, not in seconds: whatever a scenario waits for happens within a few ticks of the loop,
 * and on a loaded machine ticks simply come slower. It fails once the loop has ticked
 * `maxTicks` times without the event, or has not ticked at all for `stuckMs` (a hung loop),
 * or after `capMs` in all (a guard against waiting forever).
 */
async function until<T>(
  s: Scenario,
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  { maxTicks = 200, stuckMs = 180_000, capMs = 900_000 }: { maxTicks?: number; stuckMs?: number; capMs?: number } = {},
): Promise<T> {
  const started = Date.now();
  const baseline = await tickCount(s);
  let seen = baseline;
  let lastTickAt = started;
  let checkedAt = started;
  for (;;) {
    const value = await probe();
    if (value) return value;
    const now = Date.now();
    // Reading the monitor lane costs more than a probe: look at the tick count every few seconds.
    if (now - checkedAt >= 3_000) {
      checkedAt = now;
      const count = await tickCount(s);
      if (count > seen) {
        seen = count;
        lastTickAt = now;
      }
      const why =
        seen - baseline >= maxTicks
          ? `${seen - baseline} ticks passed without it`
          : now - lastTickAt > stuckMs
            ? `the loop did not tick for ${Math.round((now - lastTickAt) / 1000)}s`
            : now - started > capMs
              ? "the overall cap"
              : null;
      if (why) {
        const tail = (await lane(s, "supervisor").catch(() => [] as LaneRecord[])).slice(-25).map((r) => `  ${r.event}: ${r.msg}`);
        const tick = (await lane(s, "monitor").catch(() => [] as LaneRecord[])).slice(-3).map((r) => `  tick: ${r.msg}`);
        assert.fail(`timed out waiting for ${what} (${why})\n${[...tail, ...tick].join("\n")}`);
      }
    }
    // Quick at first, then gentler: most events come within a second or two.
    await sleep(Math.min(1_000, 250 + (Date.now() - started) / 20));
  }
}

/** How many ticks the scenario's loop has logged (0 before its start). */
async function tickCount(s: Scenario): Promise<number> {
  return (await lane(s, "monitor").catch(() => [] as LaneRecord[])).filter((r) => r.event === "tick").length;
}

/** Waits for `count` more ticks than now: lets the loop show that something does NOT happen. */
async function ticks(s: Scenario, count: number): Promise<void> {
  const seen = (await events(s, "tick")).length;
  await until(s, `${count} more ticks`, async () => (await events(s, "tick")).length >= seen + count);
}

/** Supervisor records at error level that a scenario did not expect. */
async function unexpectedErrors(s: Scenario, allowed: string[] = []): Promise<string[]> {
  return (await lane(s, "supervisor")).filter((r) => r.level === "error" && !allowed.includes(r.event)).map((r) => `${r.event}: ${r.msg}`);
}

// ---- the scenarios ------------------------------------------------------------------------------

describe("the fleet on a local forge, through MCP, with scripted workers", { concurrency: true }, () => {
  it("lands a worker's commits, and survives hostile issue text", { timeout: 900_000 }, async (t) => {
    const marker = `/tmp/pwned-${process.pid}-${Date.now().toString(36)}`;
    const shell = `$(touch ${marker}) \`touch ${marker}\`; touch ${marker} && echo "$HOME" '|' > /dev/null`;
    const huge = `# Huge\n\n$(touch ${marker})\n` + "All work and no play. ".repeat(5_000);
    const unicode = "Ünïcödé 🚀 émoji — עברית \u202Eevil\u202C \u200Bzero-width 日本語";
    const s = await scenario(t, [
      { title: "Add a greeting file", body: "Please add issue-1.txt.", plan: "commit" },
      { title: `Fix ${shell}`, body: `Steps:\n1. ${shell}\n2. \`\`\`sh\nrm -rf ~; ${shell}\n\`\`\`\n--- end ---`, plan: "commit" },
      { title: `${unicode}\nsecond line`, body: `${unicode}\n\n\u202Bمرحبا\u202C 👩‍👩‍👧 ${shell}`, plan: "commit" },
      { title: `A 100 KB body ${shell}`, body: huge, plan: "satisfied" },
    ]);
    assert.ok(Buffer.byteLength(huge) > 100_000);
    const [normal, shelly, uni, big] = s.issues as [number, number, number, number];
    // A real gate: it fails unless it runs in a checkout that holds the worker's file.
    const gate = { ci: "local", local_command: "test -f README.md && ls issue-*.txt >/dev/null" };
    const started = await start(s, { auto_merge: true, config: { gate } });
    assert.equal(started.registration.merges, "authorized");

    for (const n of s.issues) {
      await until(s, `#${n} closed`, async () => (await issue(s, n)).state === "closed");
    }
    await until(s, "every claim released", async () => (await claims(s)).length === 0);

    // 1. Commits → PR "Closes #n" → landed → issue closed, no claim, no worktree.
    for (const n of [normal, shelly, uni]) {
      const pr = await pullFor(s, n);
      assert.ok(pr, `a PR for #${n}`);
      assert.match(pr.body, new RegExp(`^Closes #${n}$`, "m"));
      assert.equal(pr.merged_at !== null, true, `PR #${pr.number} merged`);
      assert.equal(pr.base.ref, "main");
      const closed = await issue(s, n);
      assert.equal(closed.state_reason, "completed");
      if (existsSync(worktreeOf(s, n))) {
        const story = (await lane(s, "supervisor", n)).map((r) => `${r.ts} ${r.level} ${r.event}: ${r.msg}`);
        assert.fail(`#${n}'s worktree was not removed; its supervisor records:\n${story.slice(-40).join("\n")}`);
      }
      // The landed base has the worker's file.
      const { stdout } = await git(s.planDir, "--git-dir", s.forge.bareRepo, "show", `main:issue-${n}.txt`);
      assert.equal(stdout, `done ${n}`);
    }
    assert.equal((await pullFor(s, big)) ?? null, null, "already-satisfied opens no PR");
    assert.equal(existsSync(worktreeOf(s, big)), false);
    // The worker's output went to its lane.
    assert.ok((await laneViaTool(s, "worker", normal)).some((r) => r.msg === `working on #${normal} (attempt 1)`));

    // Workers get no token: neither by value nor by name.
    for (const n of s.issues) {
      assert.equal(existsSync(join(s.planDir, `${n}.1.token`)), false, `#${n}'s worker saw a GitHub token`);
      const names = (await readFile(join(s.planDir, `${n}.1.env`), "utf8")).split("\n");
      assert.ok(names.includes("AFK_ISSUE") && names.includes("AFK_USER_PLAN"));
      assert.ok(!names.includes("GITHUB_API_URL") && !names.includes("AFK_STATE_DIR"), names.join(","));
    }

    // 8. Hostile text: nothing ran it, branch names are short valid refs, the brief holds it as data.
    assert.equal(existsSync(marker), false, "issue text was executed by a shell");
    const born = await events(s, "worker_born");
    assert.equal(born.length, s.issues.length);
    for (const record of born) {
      const branch = record.data.branch as string;
      assert.match(branch, /^afk\/\d+(?:-[a-z0-9]+)*$/);
      assert.ok(branch.length <= 50, branch);
      await git(s.planDir, "check-ref-format", "--branch", branch);
    }
    const briefOf = (n: number) => readFile(join(s.planDir, `${n}.1.brief`), "utf8");
    const shellBrief = await briefOf(shelly);
    assert.ok(shellBrief.includes(`Steps:\n1. ${shell}\n2. \`\`\`sh\nrm -rf ~; ${shell}\n\`\`\`\n--- end ---`), "the body verbatim");
    assert.ok(shellBrief.includes(`# Issue #${shelly} in ${REPO}: Fix ${shell}\n`), "the title verbatim");
    const uniBrief = await briefOf(uni);
    assert.ok(uniBrief.includes(`${unicode}\n\n\u202Bمرحبا\u202C 👩‍👩‍👧 ${shell}`));
    assert.ok(uniBrief.includes(`: ${unicode} second line\n`), "a title is one line");
    const bigBrief = await briefOf(big);
    assert.ok(bigBrief.includes(huge.slice(0, BRIEF_BODY_MAX_BYTES)), "the first 64 KiB of the body");
    assert.ok(!bigBrief.includes(huge.slice(0, BRIEF_BODY_MAX_BYTES + 100)), "and no more");
    assert.match(bigBrief, /The issue body was truncated/);
    for (const n of [shelly, uni]) assert.equal((await pullFor(s, n)).title, (await issue(s, n)).title, "PR title is the issue title, untouched");

    const status = await call(s.client, "status", { repo: REPO, scope: "project" });
    assert.deepEqual(status.plan.mine, []);
    assert.deepEqual(status.plan.dispatch, []);
    assert.deepEqual(await unexpectedErrors(s), []);
    assert.deepEqual(s.forge.violations(), []);
  });

  it("honours verdicts: already-satisfied closes, giving-up retries then escalates, blocked escalates the gap", { timeout: 900_000 }, async (t) => {
    const s = await scenario(t, [
      { title: "Already there", plan: "satisfied" },
      { title: "Too hard", plan: "giving-up" },
      { title: "Needs the other one", plan: "blocked BLOCKER" },
      { title: "The prerequisite", labels: ["plain"] },
    ]);
    const [done, hard, blocked, blocker] = s.issues as [number, number, number, number];
    await writeFile(join(s.planDir, String(blocked)), `blocked ${blocker}\n`);
    await writeFile(join(s.planDir, `${hard}.2`), "await giving-up\n");
    await start(s, { config: { retry: 1 } });

    // While the second attempt works, GitHub shows the retry on the issue itself.
    await until(s, `#${hard}'s second attempt`, async () => existsSync(join(s.planDir, `${hard}.2.pid`)));
    assert.deepEqual(labelsOf(await issue(s, hard)), ["afk-attempt/1", READY]);
    assert.ok((await claims(s)).includes(hard), "the claim is kept across the retry");
    await writeFile(join(s.planDir, `${hard}.2.go`), "");

    await until(s, `#${done} closed`, async () => (await issue(s, done)).state === "closed");
    await until(s, `#${hard} escalated`, async () => labelsOf(await issue(s, hard)).includes(HUMAN));
    await until(s, `#${blocked} escalated`, async () => labelsOf(await issue(s, blocked)).includes(HUMAN));
    await until(s, "every claim released", async () => (await claims(s)).length === 0);

    // already-satisfied, no commits: closed as done, with the verdict on record; no PR.
    const closed = await issue(s, done);
    assert.equal(closed.state_reason, "completed");
    const doneNotes = await comments(s, done);
    assert.ok(
      doneNotes.some((c) => /already satisfied/i.test(c) && c.includes("The behaviour already exists.")),
      doneNotes.join("\n---\n"),
    );
    assert.equal((await pullFor(s, done)) ?? null, null);

    // giving-up: attempt 1, a retry labelled afk-attempt/1, attempt 2, then the human.
    const hardIssue = await issue(s, hard);
    assert.equal(hardIssue.state, "open");
    assert.deepEqual(labelsOf(hardIssue), [HUMAN], "ready and attempt labels removed, escalate label added");
    const retries = await events(s, "retry", hard);
    assert.equal(retries.length, 1);
    const secondBrief = await readFile(join(s.planDir, `${hard}.2.brief`), "utf8");
    assert.match(secondBrief, /Attempt 2 of 2/);
    assert.match(secondBrief, /The previous attempt failed[\s\S]*giving-up[\s\S]*attempt 1 could not make it work/);
    assert.equal(existsSync(join(s.planDir, `${hard}.3.brief`)), false, "no third attempt with retry: 1");
    const hardNotes = await comments(s, hard);
    const escalation = hardNotes.find((c) => ESCALATION.test(c));
    assert.ok(escalation, hardNotes.join("\n---\n"));
    assert.match(escalation, /failed 2 attempt/);
    assert.match(escalation, /attempt 2 could not make it work/);

    // blocked by an open issue the graph did not know about: a dependency gap for a human.
    const blockedIssue = await issue(s, blocked);
    assert.deepEqual(labelsOf(blockedIssue), [HUMAN]);
    const blockedNote = (await comments(s, blocked)).find((c) => ESCALATION.test(c));
    assert.ok(blockedNote);
    assert.match(blockedNote, new RegExp(`blocked by open issue\\(s\\) #${blocker}`));
    assert.equal(existsSync(join(s.planDir, `${blocked}.2.brief`)), false, "a dependency gap is not retried");
    assert.equal((await events(s, "worker_born", blocked)).length, 1);

    // The prerequisite was never touched.
    assert.deepEqual(labelsOf(await issue(s, blocker)), ["plain"]);
    assert.equal((await events(s, "worker_born", blocker)).length, 0);

    assert.deepEqual(await unexpectedErrors(s), []);
    assert.deepEqual(s.forge.violations(), []);
  });

  it("kills a quietly hung worker at the kill threshold, but not a quiet one whose child is busy", { timeout: 900_000 }, async (t) => {
    const s = await scenario(t, [
      { title: "Hangs", plan: "hang" },
      { title: "Builds for a long time", plan: "busy" },
    ]);
    const [hung, busy] = s.issues as [number, number];
    // A stall after 3 s quiet and a kill after 6 s (60 s and 120 s, scaled).
    const killSeconds = 120 * SCALE;
    await start(s, { config: { stall: { quiet_seconds: 60, kill_seconds: 120 } } });
    const quietFor = (r: LaneRecord) => Number(/after (\d+)s quiet/.exec(r.msg)?.[1] ?? NaN);

    const killed = await until(s, `#${hung} killed`, async () => (await events(s, "killed", hung))[0]);
    const liveness = await lane(s, "liveness", hung);
    const decision = liveness.find((r) => r.event === "kill")!;
    assert.match(decision.msg, /\(quiet\)/);
    assert.ok(quietFor(decision) >= killSeconds, `killed only past the kill threshold: ${decision.msg}`);
    // Quiet but short of the threshold, it was at most reported (how often depends on the tick rate).
    for (const r of liveness.filter((r) => quietFor(r) < killSeconds)) assert.equal(r.event, "stall_candidate");
    const pgid = killed.pid!;
    const exit = await until(s, `#${hung}'s exit`, async () => (await events(s, "worker_exited", hung)).find((r) => r.ts >= killed.ts));
    assert.equal(exit.data.kill_reason, "quiet past the kill threshold with no busy child");
    assert.deepEqual(await groupMembers(s, pgid), [], "the worker's process group is gone");
    const child = Number(await readFile(join(s.planDir, `${hung}.1.child`), "utf8"));
    assert.equal(await alive(s, child), false, "its child too");

    // The busy one: seen busy, then quiet past the kill threshold and left alone. The lane has
    // one record per change of state, so the busy record carries the quiet time at which it was
    // first seen busy (past the stall threshold, and past the kill threshold only when ticks are
    // slow); the ticks after it, until the worker is quiet for twice the kill threshold, kill nothing.
    const seen = await until(s, `#${busy} seen busy`, async () => (await events(s, "busy", busy))[0]);
    assert.match(seen.msg, /process tree used|running and using CPU/);
    const born = Date.parse((await events(s, "worker_born", busy))[0]!.ts);
    await until(s, `#${busy} quiet past the kill threshold`, async () =>
      (await events(s, "tick")).some((r) => Date.parse(r.ts) > born + 2 * killSeconds * 1000),
    );
    await ticks(s, 2);
    assert.equal((await lane(s, "liveness", busy)).at(-1)!.event, "busy", "still busy, never killed, while quiet past the kill threshold");
    await writeFile(join(s.planDir, `${busy}.1.go`), "");
    await until(s, `#${busy}'s PR`, async () => pullFor(s, busy));
    const busyLiveness = await lane(s, "liveness", busy);
    assert.equal(busyLiveness.filter((r) => r.event === "killed" || r.event === "kill").length, 0, "never killed");
    const busyExit = (await events(s, "worker_exited", busy))[0]!;
    assert.equal(busyExit.data.kill_reason, null);
    assert.equal(busyExit.data.code, 0);
    assert.equal((await events(s, "worker_born", busy)).length, 1);

    assert.deepEqual(await unexpectedErrors(s), []);
    assert.deepEqual(s.forge.violations(), []);
  });

  it("looks twice before killing: a busy worker first seen past the kill threshold lives", { timeout: 900_000 }, async (t) => {
    const s = await scenario(t, [{ title: "Compiles quietly", plan: "busy" }]);
    const [n] = s.issues as [number];
    // Ticks every 15 s (300 s paced, scaled), a kill after 6 s quiet: the first look at the
    // worker comes long after the threshold, with no earlier CPU sample to compare.
    const killSeconds = 120 * SCALE;
    await start(s, {
      config: { stall: { quiet_seconds: 60, kill_seconds: 120 }, pacing: { busy_seconds: 300, idle_seconds: 300, long_idle_seconds: 300 } },
    });
    const first = await until(s, "the first look at the worker", async () => (await lane(s, "liveness", n))[0]);
    assert.equal(first.event, "busy", first.msg);
    assert.ok(Number(/after (\d+)s quiet/.exec(first.msg)?.[1]) > killSeconds, first.msg);
    await writeFile(join(s.planDir, `${n}.1.go`), "");
    await until(s, `#${n}'s PR`, async () => pullFor(s, n));
    assert.deepEqual(
      (await lane(s, "liveness", n)).filter((r) => r.event === "kill" || r.event === "killed"),
      [],
    );
    assert.equal((await events(s, "worker_exited", n))[0]!.data.kill_reason, null);
    assert.deepEqual(await unexpectedErrors(s), []);
    assert.deepEqual(s.forge.violations(), []);
  });

  it("trips the circuit breaker on fast deaths, sweeps the issues back, and resumes on project_reset", { timeout: 900_000 }, async (t) => {
    const s = await scenario(t, [
      { title: "One", plan: "die" },
      { title: "Two", plan: "die" },
      { title: "Three", plan: "die" },
    ]);
    // A death within 6 s (120 s scaled) is fast; three inside the window trip the breaker.
    await start(s, { config: { circuit: { k: 3, fast_death_seconds: 120, window_seconds: 3600 } } });

    await until(s, "the breaker trip", async () => (await events(s, "breaker_tripped"))[0]);
    await until(s, "the sweep", async () => (await events(s, "breaker_swept"))[0]);
    const status = await call(s.client, "status", { repo: REPO, scope: "worker" });
    assert.equal(status.births.paused, true);
    assert.match(status.births.reason, /circuit breaker/);
    // It quotes what the worker said before dying, in status and on each issue.
    assert.match(status.births.reason, /printed: scripted worker: cannot start for #\d+ \(simulated\)/);

    await until(s, "every claim released", async () => (await claims(s)).length === 0);
    for (const n of s.issues) {
      const swept = await issue(s, n);
      assert.equal(swept.state, "open");
      assert.deepEqual(labelsOf(swept), [READY, "runner-error"].sort(), `#${n}: back in the backlog, marked runner-error, no attempt spent`);
      // The breaker's own note (the status board, rendered whenever a tick saw the claim, names the breaker too).
      const note = (await comments(s, n)).find((c) => /circuit breaker/.test(c) && !c.startsWith("<!-- afk:board -->"));
      assert.ok(note, `#${n} was told why`);
      assert.ok(note.includes(`\`\`\`text\nscripted worker: cannot start for #${n} (simulated)\n\`\`\``), note);
    }
    // Births stay parked: a few more ticks start nobody.
    const bornBefore = (await events(s, "worker_born")).length;
    await ticks(s, 3);
    assert.equal((await events(s, "worker_born")).length, bornBefore);
    assert.deepEqual(await claims(s), []);

    // The operator fixes the command, then resets: births resume and the work gets done.
    for (const n of s.issues) await writeFile(join(s.planDir, String(n)), "commit\n");
    const reset = await call(s.client, "project_reset", { repo: REPO });
    assert.match(reset.message, /^births resumed: cleared the tripped circuit breaker$/);
    for (const n of s.issues) await until(s, `#${n}'s PR after the reset`, async () => pullFor(s, n));
    const after = await call(s.client, "status", { repo: REPO, scope: "worker" });
    assert.equal(after.births.paused, false);

    assert.deepEqual(await unexpectedErrors(s, ["breaker_tripped"]), []);
    assert.deepEqual(s.forge.violations(), []);
  });

  it("pauses births fleet-wide on a usage limit, spends no attempt and keeps the claim", { timeout: 900_000 }, async (t) => {
    const s = await scenario(t, [
      { title: "Hits the limit", plan: "quota" },
      { title: "Would be next", plan: "commit" },
    ]);
    const [limited, next] = s.issues as [number, number];
    await start(s, { target: 1 });

    await until(s, "the quota pause", async () => (await events(s, "quota", limited))[0]);
    await until(s, `#${limited}'s worker exit`, async () => (await events(s, "worker_exited", limited))[0]);
    await ticks(s, 3);

    const status = await call(s.client, "status", { repo: REPO, scope: "worker" });
    assert.equal(status.births.paused, true);
    assert.match(status.births.reason, /usage limit/);
    assert.ok(status.births.until, "the reset time the message gave");

    const held = await issue(s, limited);
    assert.deepEqual(labelsOf(held), [READY], "no attempt label, not escalated");
    assert.deepEqual(await claims(s), [limited], "the claim is kept; the next one is not taken");
    const takeover = await call(s.client, "takeover", { repo: REPO, list: true });
    const me = takeover.instances.find((r: Json) => r.is_me);
    assert.ok(me?.fresh, "the lease is alive");
    assert.deepEqual(me.claims, [limited]);
    assert.equal((await events(s, "worker_born", limited)).length, 1, "not restarted while paused");
    assert.equal((await events(s, "worker_born", next)).length, 0, "no birth for the next issue");
    assert.ok((await lane(s, "worker", limited)).some((r) => r.msg.includes("hit your usage limit")));

    // The operator clears the pause: the kept claim is continued first (still attempt 1), then the next issue.
    await writeFile(join(s.planDir, String(limited)), "commit\n");
    await call(s.client, "project_reset", { repo: REPO });
    await until(s, `#${limited}'s PR`, async () => pullFor(s, limited));
    const reborn = (await events(s, "worker_born", limited)).at(-1)!;
    assert.equal(reborn.attempt, 1);
    assert.equal(reborn.data.tier, 1);
    await until(s, `#${next}'s PR`, async () => pullFor(s, next));
    assert.deepEqual(labelsOf(await issue(s, limited)), [READY]);

    assert.deepEqual(await unexpectedErrors(s), []);
    assert.deepEqual(s.forge.violations(), []);
  });

  it("pauses on a runtime's login, root refusal or lost network: no attempt spent, no breaker, the fix said", { timeout: 900_000 }, async (t) => {
    const text = (runtime: string, kind: string, situation: RegExp) =>
      RUNTIME_TEXTS.find((r) => r.runtime === runtime && r.kind === kind && situation.test(r.situation))!.line;
    const s = await scenario(t, [
      { title: "Codex without a valid login", plan: "await print codex-401.out 1" },
      { title: "Claude Code as root", plan: "await print claude-root.out 1" },
      { title: "Codex offline", plan: "await loop codex-offline.out" },
    ]);
    const [unauthorized, root, offline] = s.issues as [number, number, number];
    await writeFile(join(s.planDir, "codex-401.out"), `${text("codex", "auth", /five/)}\n`.repeat(5) + `${text("codex", "auth", /final/)}\n`);
    await writeFile(join(s.planDir, "claude-root.out"), `${text("claude", "refusal", /root/)}\n`);
    await writeFile(join(s.planDir, "codex-offline.out"), `${text("codex", "network", /until killed/)}\n`);
    // Three quick deaths would trip this breaker if they counted.
    await start(s, { config: { circuit: { k: 2, fast_death_seconds: 3600, window_seconds: 3600 } } });
    // All three running before any fails: the first pause must not keep the others from showing theirs.
    for (const n of s.issues) await until(s, `#${n}'s worker`, async () => existsSync(join(s.planDir, `${n}.1.pid`)));
    for (const n of s.issues) await writeFile(join(s.planDir, `${n}.1.go`), "");

    const auth = await until(s, "the login pause", async () => (await events(s, "auth_expired", unauthorized))[0]);
    assert.match(auth.msg, /unexpected status 401 Unauthorized.*codex login/);
    const refused = await until(s, "the refusal pause", async () => (await events(s, "runtime_refused", root))[0]);
    assert.match(refused.msg, /root\/sudo.*IS_SANDBOX=1/);
    const down = await until(s, "the network pause", async () => (await events(s, "network_down", offline))[0]);
    assert.match(down.msg, /waiting for network.*DNS and proxy/);
    // The looping one is ended, not left to retry until its max runtime.
    const ended = await until(s, `#${offline}'s exit`, async () => (await events(s, "worker_exited", offline))[0]);
    assert.equal(ended.data.kill_reason, "the agent cannot reach its API");
    for (const n of [unauthorized, root]) await until(s, `#${n}'s exit`, async () => (await events(s, "worker_exited", n))[0]);
    await ticks(s, 3);

    const status = await call(s.client, "status", { repo: REPO, scope: "worker" });
    assert.equal(status.births.paused, true);
    assert.match(status.births.reason, /project_reset/);
    assert.deepEqual(await events(s, "breaker_tripped"), [], "pauses are not fast deaths");
    assert.deepEqual(
      await claims(s),
      [...s.issues].sort((a, b) => a - b),
      "every claim kept",
    );
    for (const n of s.issues) {
      assert.deepEqual(labelsOf(await issue(s, n)), [READY], `#${n}: no attempt spent, not escalated`);
      assert.equal((await events(s, "worker_born", n)).length, 1, `#${n}: not restarted while paused`);
    }

    // The operator fixes the login and the network, then resets: each continues at attempt 1.
    for (const n of s.issues) await writeFile(join(s.planDir, String(n)), "commit\n");
    const reset = await call(s.client, "project_reset", { repo: REPO });
    assert.match(reset.message, /^births resumed: cleared the runtime pause/);
    for (const n of s.issues) {
      await until(s, `#${n}'s PR`, async () => pullFor(s, n));
      assert.equal((await events(s, "worker_born", n)).at(-1)!.attempt, 1);
    }
    assert.deepEqual(await unexpectedErrors(s), []);
    assert.deepEqual(s.forge.violations(), []);
  });

  it("continues a crashed host's committed work in the same worktree", { timeout: 900_000 }, async (t) => {
    const s = await scenario(t, [{ title: "Two steps", plan: "two-step" }], { instance: "crashy" });
    const [n] = s.issues as [number];
    // Stop the host the MCP test client drives: the first run is a separate process we kill.
    const config = { ...BASE_CONFIG };
    const host = spawnHost(s.env, "crashy", { repo: REPO, worker_command: `sh ${WORKER}`, target: 1, config });
    await until(s, "the first commit", async () => existsSync(join(s.planDir, `${n}.step1`)));
    const firstPid = Number(await readFile(join(s.planDir, `${n}.1.pid`), "utf8"));
    assert.ok(await ours(firstPid, s.planDir), "the first worker is running");
    const firstGroup = ((await readProcTable()) ?? []).find((p) => p.pid === firstPid)!.pgrp;

    // The crash: the host dies at once (SIGKILL, nothing released), then its worker's group.
    host.kill("SIGKILL");
    await new Promise((r) => host.once("exit", r));
    process.kill(-firstGroup, "SIGKILL");
    await until(s, "the first worker gone", async () => (await groupMembers(s, firstGroup)).length === 0);
    assert.deepEqual(await claims(s), [n], "the crashed host's claim is still there");
    assert.deepEqual(await heartbeats(s), ["crashy"]);

    // A new host with the same instance id and state directory picks the claim up.
    await start(s, { target: 1 });
    const pr = await until(s, "the continued PR", async () => pullFor(s, n));
    const born = await events(s, "worker_born", n);
    assert.equal(born.at(-1)!.data.tier, 1, "continued in the worktree the first worker left");
    assert.equal(born.at(-1)!.attempt, 1, "a crash spends no attempt");
    await git(s.planDir, "--git-dir", s.forge.bareRepo, "rev-parse", pr.head.sha);
    const log = await git(s.planDir, "--git-dir", s.forge.bareRepo, "log", "--format=%s", `main..${pr.head.sha}`);
    assert.deepEqual(log.stdout.split("\n"), [`step 2 of #${n}`, `step 1 of #${n}`], "the PR holds both runs' commits");
    assert.deepEqual(labelsOf(await issue(s, n)), [READY]);

    assert.deepEqual(await unexpectedErrors(s), []);
    assert.deepEqual(s.forge.violations(), []);
  });

  it("a failed worker's last lines reach the board and the next brief, and a restart between attempts keeps them", { timeout: 900_000 }, async (t) => {
    const s = await scenario(t, [{ title: "Dies with words" }], { instance: "wordy" });
    const [n] = s.issues as [number];
    // Attempt 1 says where it was and dies with no commits and no verdict; attempt 2 hangs.
    await writeFile(join(s.planDir, "last-words.txt"), "stage: compiling widgets\nerror: widget 7 exploded\n");
    await writeFile(join(s.planDir, `${n}.1`), "print last-words.txt 1\n");
    await writeFile(join(s.planDir, `${n}.2`), "hang\n");
    const config = { ...BASE_CONFIG, stall: { quiet_seconds: 3600, kill_seconds: 7200 }, worker: { max_runtime_seconds: 86_400 } };
    const host = spawnHost(s.env, "wordy", { repo: REPO, worker_command: `sh ${WORKER}`, target: 1, config });
    const secondBrief = join(s.planDir, `${n}.2.brief`);
    const firstPid = Number(
      await until(s, "attempt 2's worker", async () => existsSync(join(s.planDir, `${n}.2.pid`)) && readFile(join(s.planDir, `${n}.2.pid`), "utf8")),
    );
    // The worker lists its environment once it has read the whole brief.
    const secondEnv = join(s.planDir, `${n}.2.env`);
    await until(s, "attempt 2's brief", async () => existsSync(secondEnv));
    const brief = await readFile(secondBrief, "utf8");
    assert.match(brief, /## The previous attempt failed/);
    assert.match(brief, /stage: compiling widgets\nerror: widget 7 exploded/, "the dead worker's last lines are the next brief's evidence");
    const board = await until(s, "the board quoting the last lines", async () =>
      (await comments(s, n)).find((c) => c.includes("<!-- afk:board") && c.includes("error: widget 7 exploded")),
    );
    assert.match(board, /Attempt 1 failed: .*\n\nThe worker's last lines:\n\n```text\nstage: compiling widgets\nerror: widget 7 exploded\n```/);

    // The crash, then a restart: this host forgot the failure; the ledger did not.
    const group = ((await readProcTable()) ?? []).find((p) => p.pid === firstPid)!.pgrp;
    host.kill("SIGKILL");
    await new Promise((r) => host.once("exit", r));
    process.kill(-group, "SIGKILL");
    await until(s, "attempt 2's first worker gone", async () => (await groupMembers(s, group)).length === 0);
    await rm(secondBrief);
    await rm(secondEnv);
    await start(s, { target: 1, config });
    await until(s, "attempt 2's worker born again", async () => existsSync(secondEnv));
    const again = await readFile(secondBrief, "utf8");
    assert.match(again, /## The previous attempt failed/, "the restarted host's brief still says attempt 1 failed");
    assert.match(again, /error: widget 7 exploded/, "with the dead worker's words, read back from the ledger");
    assert.deepEqual(await unexpectedErrors(s), []);
  });

  it("project_stop drains: releases claims without a PR, keeps those with one, lets running workers finish", { timeout: 900_000 }, async (t) => {
    const s = await scenario(t, [
      { title: "Gets a PR", plan: "commit" },
      { title: "Finishes while the fleet stops", plan: "await commit" },
      { title: "Still coding", plan: "hang" },
    ]);
    const [withPr, finishing, coding] = s.issues as [number, number, number];
    await start(s, { config: { stall: { quiet_seconds: 3600, kill_seconds: 7200 }, worker: { max_runtime_seconds: 86_400 } } });

    await until(s, `#${withPr}'s PR`, async () => pullFor(s, withPr));
    const before = await until(s, "the plan with three claims, one held for merge", async () => {
      const st = await call(s.client, "status", { repo: REPO, scope: "project" });
      return st.plan.mine.length === 3 && /merges held for/.test(st.last_tick ?? "") ? st : null;
    });
    assert.equal(before.registration.merges, "held");
    assert.match(before.last_tick, new RegExp(`merges held for #${withPr}$`));
    assert.deepEqual(
      before.plan.mine.map((m: Json) => [m.issue, m.status, m.pr !== null]),
      [
        [withPr, "awaiting_merge", true],
        [finishing, "no_pr", false],
        [coding, "no_pr", false],
      ],
    );
    const workers = await until(s, "two running workers", async () => {
      const st = await call(s.client, "status", { repo: REPO, scope: "worker" });
      return st.workers.filter((w: Json) => w.state === "running").length === 2 ? st.workers : null;
    });
    const pidOf = (n: number) => workers.find((w: Json) => w.issue === n).pid as number;

    // A plain stop drains: nothing new starts, the running workers may finish.
    const draining = await call(s.client, "project_stop", { repo: REPO });
    assert.match(draining.message, /^stopping: released 0 claim\(s\) without a PR; 1 claim\(s\) with a PR kept; 2 worker\(s\) still running/);
    const mid = await call(s.client, "status", { repo: REPO, scope: "worker" });
    assert.notEqual(mid.registration, null, "still registered while it drains");
    assert.deepEqual(mid.births, { paused: true, reason: "stopping", until: null });
    const again = await s.client.callTool(
      { name: "project_start", arguments: { repo: REPO, worker_command: `sh ${WORKER}`, config: BASE_CONFIG } },
      undefined,
      CALL_OPTIONS,
    );
    assert.equal(again.isError, true, "no second project beside a draining one");
    assert.match((again.content as { text: string }[])[0]!.text, /still stopping/);

    // One finishes on its own: its commits still become a PR, and that claim is kept.
    await writeFile(join(s.planDir, `${finishing}.1.go`), "");
    await until(s, `#${finishing}'s PR while draining`, async () => pullFor(s, finishing));
    assert.deepEqual(await claims(s), [withPr, finishing, coding]);

    // The other never would: stop_workers ends it, and its claim (no PR) is released.
    const stopped = await call(s.client, "project_stop", { repo: REPO, stop_workers: true });
    assert.match(stopped.message, /^stopped: released 1 claim\(s\) without a PR; 2 claim\(s\) with a PR kept$/);
    assert.deepEqual(await claims(s), [withPr, finishing]);
    assert.deepEqual(await groupMembers(s, pidOf(coding)), [], "the running worker was stopped");
    assert.deepEqual(await groupMembers(s, pidOf(finishing)), []);

    const after = await call(s.client, "status", { repo: REPO, scope: "project" });
    assert.equal(after.registration, null);
    // (Now planned with the repository's own config, whose gate waits for CI.)
    assert.deepEqual(
      after.plan.mine.map((m: Json) => [m.issue, m.pr !== null]),
      [
        [withPr, true],
        [finishing, true],
      ],
    );
    assert.deepEqual(
      after.plan.dispatch.map((d: Json) => d.number),
      [coding],
      "the released issue is back on the frontier",
    );
    for (const n of [withPr, finishing]) assert.equal((await pullFor(s, n)).state, "open", "PRs stay for a later run or a peer");
    assert.deepEqual(await heartbeats(s), [s.host.instance], "claims are still held: the lease stays");
    const log = (await lane(s, "supervisor")).map((r) => r.event);
    assert.ok(log.includes("draining") && log.at(-1) === "stopped", log.join(","));

    assert.deepEqual(await unexpectedErrors(s), []);
    assert.deepEqual(s.forge.violations(), []);
  });

  it("ends its worker when another instance takes the claim over (one worker per issue)", { timeout: 900_000 }, async (t) => {
    const s = await scenario(t, [{ title: "Long job", plan: "hang" }], { instance: "first" });
    const [n] = s.issues as [number];
    await start(s, { config: { stall: { quiet_seconds: 3600, kill_seconds: 7200 }, worker: { max_runtime_seconds: 86_400 } } });
    const pid = await until(s, "the worker", async () => {
      const st = await call(s.client, "status", { repo: REPO, scope: "worker" });
      return st.workers.find((w: Json) => w.issue === n && w.state === "running")?.pid as number | undefined;
    });

    // A second host (another state directory, as on another machine) takes the claim on a human's word.
    const peerState = await tempDir("afk-state-peer-");
    const peer = await connectHost({ ...s.env, AFK_STATE_DIR: peerState }, "second");
    t.after(async () => {
      await peer.client.close();
      await peer.host.close();
      await rm(peerState, { recursive: true, force: true });
    });
    const refused = await call(peer.client, "takeover", { repo: REPO, instance: "first" });
    assert.equal(refused.action, "confirm", "a live lease is not taken without confirm");
    const taken = await call(peer.client, "takeover", { repo: REPO, instance: "first", confirm: true });
    assert.deepEqual(
      taken.taken.map((c: Json) => c.issue),
      [n],
    );

    await until(s, "the first host to notice", async () => (await events(s, "claim_lost", n))[0]);
    await until(s, "its worker gone", async () => (await groupMembers(s, pid)).length === 0);
    const listed = await call(peer.client, "takeover", { repo: REPO, list: true });
    assert.deepEqual(listed.instances.find((r: Json) => r.instance === "second").claims, [n]);
    assert.deepEqual(listed.instances.find((r: Json) => r.instance === "first")?.claims ?? [], []);
    assert.equal((await pullFor(s, n)) ?? null, null, "the first host pushed nothing");
    await ticks(s, 2);
    assert.equal((await events(s, "worker_born", n)).length, 1, "and started nothing more for it");

    assert.deepEqual(await unexpectedErrors(s), []);
    assert.deepEqual(s.forge.violations(), []);
  });
});

/**
 * A FleetHost in its own process, started on `input`: killing it with SIGKILL is a real crash
 * (no stop, no release). Runs from source (tsx) or from dist alike.
 */
function spawnHost(env: Record<string, string>, instance: string, input: Record<string, unknown>): ChildProcess {
  const here = fileURLToPath(import.meta.url);
  const hostModule = join(here, "..", "..", "server", "host", here.endsWith(".ts") ? "host.ts" : "host.js");
  const script = [
    `import { FleetHost } from ${JSON.stringify(hostModule)};`,
    `const host = new FleetHost({ env: ${JSON.stringify(env)}, instance: ${JSON.stringify(instance)}, timeScale: ${SCALE} });`,
    `await host.start(${JSON.stringify(input)});`,
    `process.stderr.write("started\\n");`,
    `setInterval(() => {}, 1000);`,
  ].join("\n");
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "ignore", "pipe"], cwd: ROOT });
  child.stderr!.setEncoding("utf8").on("data", () => undefined);
  children.push(child);
  return child;
}
