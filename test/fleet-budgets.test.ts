// Budgets a fleet enforces itself, through the production spawn path with real processes on the
// local forge: the host-wide day budget and max_workers shared by two registrations of one host
// (<state dir>/host.json), and the per-attempt budget of an engine whose CLI takes no budget
// flag (checkpoint, then stop; the attempt ends as over budget with its spend in the comment).
// The workers are a `command` engine whose output the profile's usage reader parses: Codex's
// `exec --json` shape (turn.completed with token usage), priced with the config's price table.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { api, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { COMMIT_WORK, READY, cleanupsAfterFile, fleetHost } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";
import type { FleetHost } from "../server/host/host.js";

const cleanups = cleanupsAfterFile();
const OTHER = "afk/other";
/** One turn: 1,000 input and 100 output tokens at $6 and $60 per million: $0.012. */
const TURN = '{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":100}}';
const PRICES = { m1: { input_per_mtok: 6, output_per_mtok: 60 } };

async function scene(): Promise<{ forge: TestForge; dir: string }> {
  const forge = await startTestForge({ repos: [OTHER] });
  cleanups.push(() => forge.dispose());
  return { forge, dir: await tempDir("afk-budgets-") };
}

async function issuesIn(forge: TestForge, repo: string, titles: readonly string[]): Promise<number[]> {
  await api(forge, "POST", `/repos/${repo}/labels`, { name: READY, color: "0e8a16" });
  const out: number[] = [];
  for (const title of titles) {
    const r = await api(forge, "POST", `/repos/${repo}/issues`, { title, body: "", labels: [READY] });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    out.push(r.body.number as number);
  }
  return out;
}

const issue = async (forge: TestForge, repo: string, n: number): Promise<{ state: string; labels: Array<{ name: string }> }> =>
  (await api(forge, "GET", `/repos/${repo}/issues/${n}`)).body;

/** A metered worker: the script's lines, as an engine whose output carries Codex-shaped usage. */
async function meterStart(
  dir: string,
  repo: string,
  lines: string[],
  extra: Record<string, unknown> = {},
  target = 1,
): Promise<Parameters<FleetHost["start"]>[0]> {
  const script = join(dir, `meter-${repo.replace("/", "-")}.sh`);
  await writeFile(script, ["#!/bin/sh", "cat > /dev/null", ...lines, ""].join("\n"));
  return {
    repo,
    engine: "meter",
    target,
    auto_merge: true,
    config: {
      gate: { ci: "local", local_command: "true" },
      landing: { strategy: "push" },
      pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 },
      engines: { meter: { command: `sh ${script}`, usage: "codex-json", default_model: "m1" } },
      prices: PRICES,
      ...extra,
    },
  };
}

async function supervisor(host: FleetHost, repo: string): Promise<string> {
  const records = (await host.logs({ repo, lane: "supervisor", tail_lines: 500 })).records as Array<{ event?: unknown; msg?: unknown }>;
  return records.map((r) => `${String(r.event)}: ${String(r.msg)}`).join("\n");
}

const bornIn = async (host: FleetHost, repo: string): Promise<number> =>
  ((await host.logs({ repo, lane: "supervisor", tail_lines: 1000 })).records as Array<{ event?: unknown }>).filter((r) => r.event === "worker_born").length;

describe("the host-wide budget (host.json), shared by two registrations of one host", () => {
  it("the day budget reached by one registration holds births in the other: nothing killed, no attempt spent; status says which budget and when it resets", async () => {
    const { forge, dir } = await scene();
    await mkdir(join(dir, "state"), { recursive: true });
    await writeFile(join(dir, "state", "host.json"), JSON.stringify({ budget: { usd_per_day: 0.01 } }));
    const [a1, a2] = (await issuesIn(forge, forge.repo, ["A one", "A two"])) as [number, number];
    const [b1] = (await issuesIn(forge, OTHER, ["B one"])) as [number];
    const host = fleetHost(forge, dir, cleanups, {}, { timeScale: 0.2 });
    cleanups.push(() => host.stop({ repo: OTHER, stop_workers: true }).catch(() => undefined));
    await host.start(await meterStart(dir, forge.repo, [`echo '${TURN}'`, ...COMMIT_WORK]));
    await waitFor(`#${a1} landed`, async () => (await issue(forge, forge.repo, a1)).state === "closed", {
      deadlineMs: 120_000,
      explain: () => supervisor(host, forge.repo),
    });
    const a = await waitFor(
      "A held by the host's day budget",
      async () => {
        const s = await host.status({ repo: forge.repo, scope: "worker" });
        return s.births?.paused && /host budget usd_per_day/.test(s.births.reason ?? "") ? s : false;
      },
      { deadlineMs: 60_000, explain: () => supervisor(host, forge.repo) },
    );
    assert.match(
      a.births!.reason!,
      /^host budget usd_per_day reached \(host\.json\): \$0\.0120 spent today \(UTC \d{4}-\d\d-\d\d\) by this host's 1 registration\(s\), of \$0\.0100/,
    );
    assert.match(a.births!.until!, /T00:00:00\.000Z$/, "the host day budget resets at the next UTC midnight");
    assert.match(a.spend!.budget, /^\$0\.0100 a day \(UTC\) for the host, \$0\.0120 spent today$/);

    // The second registration spent nothing itself: the host's budget holds it from its first tick.
    await host.start(await meterStart(dir, OTHER, [`echo '${TURN}'`, ...COMMIT_WORK]));
    const b = await waitFor(
      "B's first tick",
      async () => {
        const s = await host.status({ repo: OTHER, scope: "worker" });
        return s.last_tick ? s : false;
      },
      { deadlineMs: 60_000, explain: () => supervisor(host, OTHER) },
    );
    assert.equal(b.births?.paused, true);
    assert.match(b.births!.reason!, /host budget usd_per_day reached .* by this host's 2 registration\(s\)/);
    assert.equal(b.spend!.today.attempts, 0);
    assert.equal(await bornIn(host, OTHER), 0, "no worker was born in the second registration");
    assert.equal(await bornIn(host, forge.repo), 1, "nor a second one in the first");
    assert.equal((await issue(forge, forge.repo, a2)).state, "open");
    assert.equal((await issue(forge, OTHER, b1)).state, "open");
    assert.ok(!(await issue(forge, OTHER, b1)).labels.some((l) => l.name.startsWith("afk-attempt/")), "no attempt spent");
  });

  it("max_workers caps the workers alive summed over both registrations; births resume as workers exit", async () => {
    const { forge, dir } = await scene();
    await mkdir(join(dir, "state"), { recursive: true });
    await writeFile(join(dir, "state", "host.json"), JSON.stringify({ max_workers: 1 }));
    const marks = join(dir, "marks");
    await mkdir(marks);
    const a = await issuesIn(forge, forge.repo, ["A one", "A two"]);
    const [b1] = (await issuesIn(forge, OTHER, ["B one"])) as [number];
    // Each worker holds the `alive` directory while it runs (mkdir is atomic: a second one alive at once fails it and says so), and waits for `go`.
    const hold = [
      `mkdir "${marks}/alive" || touch "${marks}/overlap"`,
      `while [ ! -e "${marks}/go" ]; do sleep 0.1; done`,
      `echo '${TURN}'`,
      ...COMMIT_WORK,
      `rmdir "${marks}/alive"`,
    ];
    const host = fleetHost(forge, dir, cleanups, {}, { timeScale: 0.2 });
    cleanups.push(() => host.stop({ repo: OTHER, stop_workers: true }).catch(() => undefined));
    await host.start(await meterStart(dir, forge.repo, hold, {}, 2));
    await waitFor("A's first worker", async () => existsSync(join(marks, "alive")), { deadlineMs: 60_000, explain: () => supervisor(host, forge.repo) });
    await host.start(await meterStart(dir, OTHER, hold));
    const held = await waitFor(
      "B held by the host's max_workers",
      async () => {
        const s = await host.status({ repo: OTHER, scope: "worker" });
        return s.last_tick && s.births?.paused ? s : false;
      },
      { deadlineMs: 60_000, explain: () => supervisor(host, OTHER) },
    );
    assert.match(
      held.births!.reason!,
      /^host max_workers reached \(host\.json\): 1 worker\(s\) alive across this host's registrations, of 1; births resume as workers exit$/,
    );
    assert.equal(held.births!.until, null, "no reset time: a slot frees when a worker exits");
    const own = await host.status({ repo: forge.repo, scope: "worker" });
    assert.equal(own.workers.filter((w) => w.pid !== null).length, 1, "A's target of 2 is capped by the host");
    await writeFile(join(marks, "go"), "");
    for (const [repo, n] of [...a.map((n) => [forge.repo, n] as const), [OTHER, b1] as const]) {
      await waitFor(`${repo}#${n} landed`, async () => (await issue(forge, repo, n)).state === "closed", {
        deadlineMs: 180_000,
        explain: () => supervisor(host, repo),
      });
    }
    assert.equal(existsSync(join(marks, "overlap")), false, "never two workers alive at once on the host");
    assert.equal((await bornIn(host, forge.repo)) + (await bornIn(host, OTHER)), 3, "one birth per issue: a held birth spent nothing");
  });

  it("refuses a start whose host.json is not valid, naming the key and the fix", async () => {
    const { forge, dir } = await scene();
    await mkdir(join(dir, "state"), { recursive: true });
    await issuesIn(forge, forge.repo, ["A one"]);
    const host = fleetHost(forge, dir, cleanups, {}, { timeScale: 0.2 });
    const rows: Array<[unknown, RegExp]> = [
      [{ max_workers: 0 }, /host\.json: max_workers: .* expected a positive whole number of workers/],
      [{ max_workers: 2.5 }, /host\.json: max_workers: .* expected a positive whole number/],
      [{ budget: { usd_per_day: -1 } }, /host\.json: budget\.usd_per_day: .* expected a positive number of US dollars/],
      [{ budget: { usd_per_day: "5" } }, /host\.json: budget\.usd_per_day: .* expected a positive number of US dollars/],
      [{ max_worker: 3 }, /host\.json: max_worker: .* keys are budget\.usd_per_day and max_workers/],
    ];
    for (const [body, refused] of rows) {
      await writeFile(join(dir, "state", "host.json"), JSON.stringify(body));
      await assert.rejects(host.start(await meterStart(dir, forge.repo, ["true"])), refused, JSON.stringify(body));
    }
    await writeFile(join(dir, "state", "host.json"), "{ not json");
    await assert.rejects(host.start(await meterStart(dir, forge.repo, ["true"])), /host\.json is not JSON .* or remove it/);
    assert.equal((await host.repos()).running.length, 0, "nothing started");
  });
});

describe("the per-attempt budget of an engine whose CLI takes none", () => {
  it("is enforced by the fleet: checkpoint, then stop; the attempt ends as over budget with its spend in the comment", async () => {
    const { forge, dir } = await scene();
    const [n] = (await issuesIn(forge, forge.repo, ["Costly"])) as [number];
    const host = fleetHost(forge, dir, cleanups, {}, { timeScale: 0.2 });
    // Commits first, then reports a turn every 0.2 s without end: $0.012 a turn, past $0.03 at the third.
    const started = await host.start(
      await meterStart(dir, forge.repo, [...COMMIT_WORK, `while true; do echo '${TURN}'; sleep 0.2; done`], { retry: 0, budget: { usd_per_attempt: 0.03 } }),
    );
    assert.doesNotMatch(started.registration!.worker_command, /--max-budget/, "a command engine is handed no budget flag");
    const escalated = await waitFor(
      `#${n} escalated`,
      async () => {
        const i = await issue(forge, forge.repo, n);
        return i.labels.some((l) => l.name === "ready-for-human") ? i : false;
      },
      { deadlineMs: 120_000, explain: () => supervisor(host, forge.repo) },
    );
    assert.equal(escalated.state, "open");
    // The escalation comment follows the label (its own request, after it): waited for, not raced.
    const overBudget = /over budget: the attempt spent \$0\.0360 \(3000 input and 300 output tokens\), past budget\.usd_per_attempt \(\$0\.0300\)/;
    let comments: Array<{ body: string }> = [];
    await waitFor(
      `#${n}'s escalation comment`,
      async () => {
        comments = (await api(forge, "GET", `/repos/${forge.repo}/issues/${n}/comments`)).body as Array<{ body: string }>;
        return comments.some((c) => overBudget.test(c.body));
      },
      { deadlineMs: 60_000, explain: async () => `${comments.map((c) => c.body).join("\n---\n")}\n${await supervisor(host, forge.repo)}` },
    );
    const exits = (
      (await host.logs({ repo: forge.repo, lane: "supervisor", tail_lines: 500 })).records as Array<{
        event?: unknown;
        data?: { kill_reason?: string | null; spend?: { usd: number } };
      }>
    ).filter((r) => r.event === "worker_exited");
    assert.equal(exits.length, 1);
    assert.match(exits[0]!.data!.kill_reason ?? "", /^over budget: the attempt spent \$0\.0360/);
    assert.ok(exits[0]!.data!.spend!.usd >= 0.036 - 1e-9, "its spend is recorded");
    // The checkpoint before the stop pushed its commit to its branch.
    const branches = (await api(forge, "GET", `/repos/${forge.repo}/branches`)).body as Array<{ name: string }>;
    assert.ok(
      branches.some((b) => b.name.startsWith(`afk/${n}-`)),
      branches.map((b) => b.name).join(","),
    );
  });
});
