// The MCP surface at scale, through a real MCP client over stdio (the built binary, and the
// daemon it starts): every tool at its largest input, the change tools also against a running fleet, against
// a 1,500-issue backlog on the local forge and a 50 MB worker lane stays within the result
// budget; status and logs page through everything by cursor, each row once; and the
// read-only tools write nothing to GitHub (the forge's request accounting says so).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createWriteStream } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { once } from "node:events";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { laneDir } from "../server/lanes/paths.js";
import { DEFAULT_BUDGET } from "../server/tools/budget.js";
import { LOGS_RECORD_BYTES } from "../server/host/logs.js";
import { api, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { BASE_CONFIG, cli } from "./support/daemon-fixtures.js";
import { BIN } from "./support/paths.js";
import { waitFor } from "./support/wait.js";

const ISSUES = 1500;
const LANE_BYTES = 50 * 1024 * 1024;
const REPO = "afk/demo";

let forge: TestForge;
let client: Client;
let laneRecords = 0;
let env: Record<string, string>;

before(async () => {
  const seedDir = await tempDir("afk-surface-seed-");
  const issues = Array.from({ length: ISSUES }, (_, i) => {
    const n = i + 1;
    // Long titles, and a mix of reasons: most ready, some unlabelled, epics, escalated ones.
    const labels = n % 10 === 0 ? [] : n % 25 === 1 ? ["ready-for-agent", "epic"] : n % 50 === 2 ? ["ready-for-human"] : ["ready-for-agent"];
    return { title: `Issue ${n}: ${"a long title that a careless renderer would repeat in full ".repeat(3)}`, labels };
  });
  const seed = { labels: ["ready-for-agent", "ready-for-human", "epic"].map((name) => ({ name })), issues };
  await writeFile(join(seedDir, "seed.json"), JSON.stringify(seed));
  forge = await startTestForge({ seed: join(seedDir, "seed.json") });
  // Short: the daemon's socket path must stay under ~100 bytes.
  const state = await tempDir("afksf-");
  // A chatty worker lane: 50 MB of records, among them some far over any sane line length.
  const dir = laneDir(state, "afk", "demo");
  await mkdir(dir, { recursive: true });
  const out = createWriteStream(join(dir, "worker.jsonl"));
  const start = Date.parse("2026-01-01T00:00:00.000Z");
  let written = 0;
  while (written < LANE_BYTES) {
    const huge = laneRecords % 500 === 7;
    const record = {
      ts: new Date(start + Math.floor(laneRecords / 3) * 1000).toISOString(),
      lane: "worker",
      level: "info",
      event: "output",
      msg: huge ? "x".repeat(200_000) : `line ${laneRecords} ${"worker output ".repeat(250)}`,
      issue: (laneRecords % 40) + 1,
    };
    const line = JSON.stringify(record) + "\n";
    written += Buffer.byteLength(line);
    laneRecords += 1;
    if (!out.write(line)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
  env = {
    GITHUB_API_URL: forge.apiUrl,
    GITHUB_TOKEN: forge.token,
    // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
    AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
    AFK_STATE_DIR: state,
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
  };
  client = new Client({ name: "afk-surface-test", version: "0.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN], env, stderr: "pipe" }));
});

after(async () => {
  await client?.close();
  if (env) await cli(env, "daemon", "stop", "--kill-workers");
  await forge?.dispose();
});

type Result = Awaited<ReturnType<Client["callTool"]>>;

async function call(name: string, args: Record<string, unknown>): Promise<Result> {
  const result = await client.callTool({ name, arguments: args });
  const text = (result.content as { text: string }[])[0]!.text;
  assert.ok(Buffer.byteLength(text) <= DEFAULT_BUDGET.textBytes, `${name}: text of ${Buffer.byteLength(text)} bytes`);
  if (result.structuredContent) {
    const size = Buffer.byteLength(JSON.stringify(result.structuredContent));
    assert.ok(size <= DEFAULT_BUDGET.structuredBytes, `${name}: structured content of ${size} bytes`);
  }
  return result;
}

function textOf(result: Result): string {
  return (result.content as { text: string }[])[0]!.text;
}

type ChangeAnswer = {
  message: string;
  plan: unknown;
  registration: { repo: string; instance: string; target: number; worker_command: string; base: string; merges: string } | null;
};

/** The text says what the structured content says: the message, and the registration field by field, the worker command in full. */
function saysStructured(name: string, result: Result): ChangeAnswer {
  assert.notEqual(result.isError, true, textOf(result));
  const out = result.structuredContent as ChangeAnswer;
  const text = textOf(result);
  assert.ok(text.startsWith(out.message), `${name}: the text opens with the message`);
  const r = out.registration;
  assert.ok(r, `${name}: a running fleet's registration`);
  assert.ok(
    text.includes(`registration: ${r.repo}, instance ${r.instance}, target ${r.target}, base ${r.base}, merges ${r.merges}`),
    `${name}: ${text.slice(0, 300)}`,
  );
  assert.ok(text.includes(`worker: ${r.worker_command}`), `${name}: the worker command in full`);
  return out;
}

async function accounting(): Promise<{ writes: number; git: { pushes: number } }> {
  return (await api(forge, "GET", "/_forge/accounting")).body as { writes: number; git: { pushes: number } };
}

describe("the MCP surface at scale", () => {
  it("status pages through all 1,500 issues by cursor, each once, within the budget; the summary counts them", async () => {
    const summary = await call("status", { repo: REPO });
    const plan = (
      summary.structuredContent as {
        plan: { totals: { dispatch: number; excluded: number }; excluded_by_reason: Record<string, number>; dispatch: unknown[]; needs_human: unknown[] };
      }
    ).plan;
    assert.equal(plan.totals.dispatch + plan.totals.excluded, ISSUES);
    assert.equal(plan.dispatch.length, 10);
    assert.equal(plan.excluded_by_reason.not_selected, 150);
    assert.equal(plan.excluded_by_reason.epic, 60);
    assert.equal(plan.excluded_by_reason.human_reserved, 30);
    assert.equal(plan.needs_human.length, 30);
    const text = (summary.content as { text: string }[])[0]!.text;
    assert.match(text, /dispatch \(10 of 1260, in order\)/);
    // Read before any start: this machine has no instance for the repository yet, and a start would be accepted.
    assert.match(text, /\(base main, as [\w-]+, no instance on this machine yet\)/);
    assert.match(text, /\nready: a start would be accepted$/);
    assert.match(text, /excluded \(240: /);
    for (const part of ["30 human_reserved", "150 not_selected", "60 epic"]) assert.ok(text.includes(part), part);

    const seen = new Set<number>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await call("status", { repo: REPO, detail: true, ...(cursor ? { cursor } : {}) });
      const p = (page.structuredContent as { plan: { dispatch: { number: number }[]; excluded: { number: number }[]; page: { next_cursor: string | null } } })
        .plan;
      for (const row of [...p.dispatch.map((d) => d.number), ...p.excluded.map((e) => e.number)]) {
        assert.ok(!seen.has(row), `#${row} listed twice`);
        seen.add(row);
      }
      cursor = p.page.next_cursor;
      pages += 1;
    } while (cursor);
    assert.equal(seen.size, ISSUES);
    assert.ok(pages > 1);
    const bad = await call("status", { repo: REPO, detail: true, cursor: "nonsense" });
    assert.equal(bad.isError, true);
    assert.match((bad.content as { text: string }[])[0]!.text, /next_cursor/);
  });

  it("logs at tail_lines 5000 on a 50 MB lane: bounded pages, long records cut with a marker, the cursor reaching older records without repeats", async () => {
    let cursor: string | null = null;
    const seen = new Set<string>();
    let cut = 0;
    for (let page = 0; page < 5; page++) {
      const result = await call("logs", { repo: REPO, lane: "worker", tail_lines: 5000, ...(cursor ? { cursor } : {}) });
      const out = result.structuredContent as {
        records: { msg: string; truncated?: boolean }[];
        next_cursor: string | null;
        truncated: boolean;
        held_back: number;
      };
      assert.ok(out.records.length > 0);
      assert.equal(out.truncated, true);
      // The budget, not tail_lines, ended the page: the rest of the 5,000 asked for is counted, and the text says so.
      assert.equal(out.held_back, 5000 - out.records.length);
      assert.match(
        (result.content as { text: string }[])[0]!.text,
        new RegExp(`^\\(${out.records.length} of the records asked for fit in about 48 KB; the other ${out.held_back} and any older: logs \\{cursor: `),
      );
      for (const r of out.records) {
        assert.ok(Buffer.byteLength(JSON.stringify(r)) <= LOGS_RECORD_BYTES + 200, "one record stays within its share");
        const key = /^line (\d+) /.exec(r.msg)?.[1] ?? r.msg.slice(0, 40);
        if (!r.truncated) {
          assert.ok(!seen.has(key), `record ${key} returned twice`);
          seen.add(key);
        } else {
          cut += 1;
          assert.match(r.msg, /\[record cut: \d+ bytes in the lane\]$/);
        }
      }
      cursor = out.next_cursor;
      assert.ok(cursor);
    }
    assert.ok(cut > 0, "the huge records came back cut, with the marker");
    // The pages are consecutive: the newest record is the lane's last, and no line number is skipped.
    const numbers = [...seen]
      .map(Number)
      .filter((n) => Number.isInteger(n))
      .sort((a, b) => a - b);
    assert.equal(numbers.at(-1), laneRecords - 1);
    const missing = numbers.filter((n, i) => i > 0 && n - numbers[i - 1]! > 1 && !((n - 1) % 500 === 7));
    assert.deepEqual(missing, []);
  });

  it("the other tools at their largest inputs stay within the budget", async () => {
    await call("status", { repo: REPO, scope: "issue", issue: ISSUES });
    await call("status", { repo: REPO, scope: "worker" });
    await call("takeover", { repo: REPO, list: true });
    const selectors = Array.from({ length: 20 }, (_, i) => ({ issues: Array.from({ length: 1000 }, (_, j) => ((i * 1000 + j) % ISSUES) + 1) }));
    const dry = await call("project_start", { repo: REPO, dry_run: true, selectors });
    assert.notEqual(dry.isError, true, JSON.stringify(dry.content));
    // A refusal at the largest input is bounded too: 20 selectors of 1,000 bad issue numbers
    // (the SDK's own message named all 20,000 problems in 1.3 MB).
    const bad = Array.from({ length: 20 }, () => ({ issues: Array.from({ length: 1000 }, () => -1) }));
    for (const name of ["project_start", "project_resize"]) {
      const refused = await call(name, { repo: REPO, ...(name === "project_start" ? { dry_run: true } : {}), selectors: bad });
      assert.equal(refused.isError, true);
      const lines = textOf(refused).split("\n");
      assert.match(
        lines[0]!,
        new RegExp(`^Input validation error: Invalid arguments for tool ${name}: Too small: expected number to be >0 at selectors\\[0\\]\\.issues\\[0\\]$`),
      );
      assert.equal(lines.length, 11, textOf(refused).slice(0, 2000));
      assert.equal(lines.at(-1), "… and 19990 more problem(s), 20000 in all");
    }
    for (const [name, args] of [
      ["project_resize", { repo: REPO, target: 64 }],
      ["project_stop", { repo: REPO, stop_workers: true }],
      ["project_reset", { repo: REPO }],
    ] as const) {
      await call(name, args);
    }
  });

  it("the change tools at their largest inputs against a running fleet: within the budget, and the text says what the structured content says", async () => {
    // The largest valid inputs: 20 selectors of 1,000 issue numbers each (the open issues with no
    // ready label, so the fleet runs with nothing to dispatch; a number that is no issue would
    // refuse the start), a worker command of 4,000 characters.
    const selectors = Array.from({ length: 20 }, (_, i) => ({
      issues: Array.from({ length: 1000 }, (_, j) => (((i * 1000 + j) % (ISSUES / 10)) + 1) * 10),
      ...(i === 0 ? { tags: ["api"], user: "bob" } : {}),
    }));
    const command = (n: number) => `true # worker ${n} ${"x".repeat(4000)}`.slice(0, 4000);
    const started = await call("project_start", { repo: REPO, worker_command: command(1), target: 1, selectors, config: BASE_CONFIG });
    assert.notEqual(started.isError, true, textOf(started));
    saysStructured("project_start", started);
    // The fleet runs: its plan's last line says the preconditions hold, not what a start would do.
    assert.match(textOf(started), /\nready: every precondition holds$/);
    // status answers from the running fleet's last tick, and its text says so with the tick's age.
    const fromTick = await waitFor(
      "status from the fleet's last tick",
      async () => {
        const status = await call("status", { repo: REPO });
        return (status.structuredContent as { source: { from: string } | null }).source?.from === "fleet_tick" && status;
      },
      { deadlineMs: 300_000, intervalMs: 500 },
    );
    const source = (fromTick.structuredContent as { source: { age_seconds: number } }).source;
    assert.ok(textOf(fromTick).includes(`\nplan: from the fleet's last tick, ${source.age_seconds}s old\n`), textOf(fromTick).slice(0, 600));

    const resized = await call("project_resize", { repo: REPO, target: 64, worker_command: command(2), selectors });
    assert.notEqual(resized.isError, true, textOf(resized));
    const out = saysStructured("project_resize", resized);
    assert.equal(out.registration!.target, 64);
    assert.equal(out.registration!.worker_command, command(2));
    assert.match(
      out.message,
      /^resized afk\/demo: target from 1 to 64; worker command replaced; selectors now \[label ready-for-agent, issues 10,20,30,40,50,60,70,80 \+992 more \(1000\), tags api, user bob\] then .* then 15 more selector\(s\) \(20 in all\); applied at the next birth/,
    );
    assert.ok(Buffer.byteLength(out.message) < 2000, `the selectors are summarized: ${Buffer.byteLength(out.message)} bytes`);
    const same = saysStructured("project_resize", await call("project_resize", { repo: REPO }));
    assert.match(same.message, /^nothing to change for afk\/demo: pass target, worker_command or selectors/);

    const reset = saysStructured("project_reset", await call("project_reset", { repo: REPO }));
    assert.match(reset.message, /^births were not paused \(no circuit breaker trip, no runtime pause\): nothing to clear/);
    assert.equal(reset.registration!.target, 64);

    const stopped = saysStructured("project_stop", await call("project_stop", { repo: REPO, stop_workers: true }));
    assert.equal(stopped.registration!.repo, REPO);
    assert.match(stopped.message, /released 0 claim\(s\) without a PR/);
    const after = (await call("status", { repo: REPO })).structuredContent as { registration: unknown };
    assert.equal(after.registration, null, "the fleet stopped");
  });

  it("status, logs and takeover {list} write nothing to GitHub: no REST write, no git push", async () => {
    await api(forge, "POST", "/_forge/accounting/reset");
    await call("status", { repo: REPO });
    await call("status", { repo: REPO, detail: true });
    await call("status", { repo: REPO, scope: "issue", issue: 3 });
    await call("status", { repo: REPO, scope: "worker" });
    await call("logs", { repo: REPO, lane: "worker", tail_lines: 10 });
    await call("takeover", { repo: REPO, list: true });
    const tally = await accounting();
    assert.equal(tally.writes, 0);
    assert.equal(tally.git.pushes, 0);
    // The accounting does see writes: the same counter moves for one REST write.
    await api(forge, "POST", `/repos/${REPO}/labels`, { name: "counted", color: "ededed" });
    assert.equal((await accounting()).writes, 1);
  });
});
