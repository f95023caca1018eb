// `afk-mcp ledger` and `afk-mcp report` through the built binary, on a state dir whose ledger a
// fleet left (no daemon runs: the CLI reads the state dir itself), and their refusals.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { tempDirSync } from "./support/forge-fixtures.js";
import { promisify } from "node:util";
import { BIN } from "./support/paths.js";
import { createRedactor, laneDir, Ledger } from "../server/lanes/index.js";

const run = promisify(execFile);

async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

describe("afk-mcp ledger and report", () => {
  const state = tempDirSync("afk-cli-ledger-");
  const env = { AFK_STATE_DIR: state, XDG_RUNTIME_DIR: state };
  let t = Date.parse("2026-01-01T00:00:00Z");
  const ledger = new Ledger({ dir: laneDir(state, "acme", "widget"), redactor: createRedactor(() => []), clock: () => new Date((t += 1000)) });
  ledger.record({ event: "queued", issue: 4, msg: "#4 queued" });
  ledger.record({ event: "dispatch", issue: 4, attempt: 1, msg: "#4 claimed" });
  ledger.record({ event: "attempt_start", issue: 4, attempt: 1, msg: "#4 worker", data: { role: "worker", engine: "unknown", model: "unknown" } });
  ledger.record({ event: "attempt_end", issue: 4, attempt: 1, msg: "#4 ended", data: { role: "worker", duration_ms: 3000, spend: { usd: 1.25 } } });
  ledger.record({ event: "escalation", issue: 4, msg: "#4: escalated" });
  ledger.record({ event: "queued", issue: 5, msg: "#5 queued" });
  ledger.record({ event: "stop", msg: "stopped", data: { requests: { total: 30, counted: 21, not_modified: 9 } } });
  ledger.close();

  it("report prints the per-issue lines and totals; --json the same as JSON", async () => {
    const text = await cli(["report", "--repo", "acme/widget"], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /2 issue\(s\): 1 escalated, 1 queued/);
    assert.match(text.stdout, /#4 {2}escalated {2}1 attempt\(s\) {2}4 s {2}\$1\.25/);
    assert.match(text.stdout, /GitHub requests: 21 counted against the rate limit, 9 answered 304, 30 sent \(over 1 run\(s\)\)/);
    const json = await cli(["report", "--repo", "acme/widget", "--json"], env);
    const report = JSON.parse(json.stdout) as { totals: { issues: number; spend: unknown }; issues: Array<{ issue: number; outcome: string }> };
    assert.deepEqual(
      report.issues.map((i) => [i.issue, i.outcome]),
      [
        [4, "escalated"],
        [5, "queued"],
      ],
    );
    assert.deepEqual(report.totals.spend, { usd: 1.25 });
  });

  it("ledger prints one record per line, filters by issue, and gives a timeline", async () => {
    const all = await cli(["ledger", "--repo", "acme/widget"], env);
    assert.equal(all.code, 0, all.stderr);
    assert.equal(all.stdout.trim().split("\n").length, 7);
    const four = await cli(["ledger", "--repo", "acme/widget", "--issue", "4"], env);
    assert.deepEqual(
      four.stdout
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { event: string }).event),
      ["queued", "dispatch", "attempt_start", "attempt_end", "escalation"],
    );
    const timeline = JSON.parse((await cli(["ledger", "--repo", "acme/widget", "--timeline", "4"], env)).stdout) as {
      outcome: string;
      phases: Array<{ phase: string }>;
    };
    assert.equal(timeline.outcome, "escalated");
    assert.deepEqual(
      timeline.phases.map((p) => p.phase),
      ["queued", "claimed", "worker", "escalated"],
    );
    const bad = await cli(["ledger", "--repo", "acme/widget", "--timeline", "x"], env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--timeline must be an integer/);
  });
});
