// The chaos harness inside the suite: `npm run chaos -- --quick` as a user runs it (the built
// harness, real `afk-mcp run` hosts SIGKILLed and restarted, forge faults, then a 30-issue drain
// by two hosts with separate state dirs on one repository), each of its checks asserted apart so
// a regression names the invariant it broke. The seed is fixed, so a failure can be replayed with
// `npm run chaos -- --quick --seed 21`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const HARNESS = fileURLToPath(new URL("../bench/chaos/main.js", import.meta.url));
const SEED = "21";

interface RefsLeft {
  claim: number;
  lock: number;
  probe: number;
  names: string[];
}

interface Chaos {
  ok: boolean;
  issues: number;
  drained: boolean;
  lost: number[];
  wrong_ends: unknown[];
  double_merged: number[];
  foreign_merged: number[];
  untested_base_trees: string[];
  refs_left: RefsLeft;
  orphan_workers: number;
  worked_twice_at_once: unknown[];
  hostile_executed: boolean;
  kills: { total: number };
  daemons_left: string[];
  two_host: {
    ok: boolean;
    issues: number;
    drained: boolean;
    per_host: number[];
    shared: number[];
    lost: number[];
    double_merged: number[];
    foreign_merged: number[];
    untested_base_trees: string[];
    refs_left: RefsLeft;
    worked_twice_at_once: unknown[];
  } | null;
}

function runChaos(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [HARNESS, "--quick", "--seed", SEED], { stdio: ["ignore", "pipe", "pipe"], env: process.env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

test("chaos --quick: kills, restarts and faults lose nothing, and two hosts drain 30 issues without sharing one", { timeout: 40 * 60_000 }, async () => {
  const run = await runChaos();
  const line = run.stdout.split("\n").find((l) => l.startsWith('{"chaos":'));
  assert.ok(line, `the harness printed no result line (exit ${run.code}); its log:\n${run.stderr.slice(-4000)}`);
  const chaos = (JSON.parse(line) as { chaos: Chaos }).chaos;
  const tail = `\n(harness log tail:\n${run.stderr.slice(-3000)})`;

  // The kills phase: SIGKILLed hosts restarted on the same or a fresh state dir.
  assert.ok(chaos.kills.total > 0, `no host was killed${tail}`);
  assert.equal(chaos.drained, true, `the backlog did not drain after the kills${tail}`);
  assert.deepEqual(chaos.lost, [], `issues lost${tail}`);
  assert.deepEqual(chaos.wrong_ends, [], `issues that ended the wrong way${tail}`);
  assert.deepEqual(chaos.double_merged, [], `issues merged twice${tail}`);
  assert.deepEqual(chaos.foreign_merged, [], `PRs merged that the fleet did not open${tail}`);
  assert.deepEqual(chaos.untested_base_trees, [], `base trees CI never passed${tail}`);
  assert.deepEqual([chaos.refs_left.claim, chaos.refs_left.lock, chaos.refs_left.probe], [0, 0, 0], `refs left: ${chaos.refs_left.names.join(", ")}${tail}`);
  assert.equal(chaos.orphan_workers, 0, `workers outlived their hosts${tail}`);
  assert.deepEqual(chaos.worked_twice_at_once, [], `issues worked twice at once${tail}`);
  assert.equal(chaos.hostile_executed, false, `hostile issue text was executed${tail}`);
  assert.deepEqual(chaos.daemons_left, [], `daemons outlived the run${tail}`);

  // The two-host drain: two daemons, separate state dirs, one repository.
  const two = chaos.two_host;
  assert.ok(two, `the two-host drain did not run${tail}`);
  assert.ok(two.issues >= 30, `the two-host drain had only ${two.issues} issues`);
  assert.equal(two.drained, true, `the two hosts did not drain their backlog${tail}`);
  assert.equal(two.per_host.length, 2);
  assert.ok(
    two.per_host.every((n) => n > 0),
    `one host worked no issue (per host: ${two.per_host.join(", ")}): not a two-host drain${tail}`,
  );
  assert.deepEqual(two.shared, [], `issues worked by both hosts${tail}`);
  assert.deepEqual(two.worked_twice_at_once, [], `issues worked twice at once${tail}`);
  assert.deepEqual(two.lost, [], `issues lost by the two hosts${tail}`);
  assert.deepEqual(two.double_merged, [], `issues merged twice by the two hosts${tail}`);
  assert.deepEqual(two.foreign_merged, [], `PRs merged that the fleet did not open${tail}`);
  assert.deepEqual(two.untested_base_trees, [], `base trees CI never passed${tail}`);
  assert.deepEqual([two.refs_left.claim, two.refs_left.lock, two.refs_left.probe], [0, 0, 0], `refs left: ${two.refs_left.names.join(", ")}${tail}`);

  assert.equal(chaos.ok, true, `the harness's own verdict${tail}`);
  assert.equal(run.code, 0);
});
