// A workflow run that fails before the worker's first beat says why, on the local forge's Actions
// runner: a step before the worker's (an engine install, as `actions init --setup` writes one)
// prints an npm error and exits 3. The host reads the run's jobs and the failing job's log
// (GitHub's job-log route) and the attempt's failure names the step, its exit code and the log's
// last lines (terminal colours gone, a token-shaped string redacted): on the board and in status
// after attempt 1 (while attempt 2's run waits), in the escalation comment after attempt 2, and as the worker's output in its lane.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { shellQuote } from "../server/runtimes/local/spawn.js";
import { ACTIONS_CONFIG, comments, initWorkflow, runLogs, workflowRuns } from "./support/actions-fixtures.js";
import { cleanupsAfterFile, fleetHost, issueWorld, laneText } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";

const cleanups = cleanupsAfterFile();

const TOKEN_SHAPED = `ghp_${"x1".repeat(12)}`;
/**
 * The engine's install fails as `npx` does for a version the registry lacks; attempt 2's waits for
 * the file `go` under `dir` first (the test reads status and the board meanwhile).
 */
function failingSetup(dir: string): string {
  return [
    `if [ -e ${shellQuote(join(dir, "first"))} ]; then while [ ! -e ${shellQuote(join(dir, "go"))} ]; do sleep 0.2; done; fi`,
    `touch ${shellQuote(join(dir, "first"))}`,
    `echo "npm error code ETARGET" >&2`,
    `printf '\\033[31mnpm error\\033[0m notarget No matching version found for afk-mcp@9.9.9 (${TOKEN_SHAPED})\\n' >&2`,
    "exit 3",
  ].join("; ");
}

describe("a workflow run that fails before the worker starts (actions runtime)", () => {
  it("the failure names the failing step and quotes the last lines of its log: board, status, escalation, worker lane", { timeout: 300_000 }, async () => {
    const { forge, dir, issues } = await issueWorld(cleanups, ["Never starts"], "afk-act-fail-");
    await initWorkflow(forge, dir, [failingSetup(dir)]);
    const [n] = issues as [number];
    const host = fleetHost(forge, dir, cleanups, { AFK_RUNTIME: "actions" });
    const story = async () => `${await runLogs(forge)}\n===== supervisor\n${await laneText(host, forge.repo, "supervisor")}`;
    // Boards written at once: attempt 1's failure shows while attempt 2's run waits.
    await host.start({ repo: forge.repo, worker_command: "true", target: 1, config: { ...ACTIONS_CONFIG, board: { settle_seconds: 0 } } });
    const step = /step "Install the engine \(1\)" failed \(exit code 3\) before the worker's first beat, workflow run \d+; its log ends: /;
    const quoted = /npm error code ETARGET ⏎ npm error notarget No matching version found for afk-mcp@9\.9\.9 \(\[redacted\]\)/;
    let seen = "";
    const detail = await waitFor(
      `#${n}'s status names the failed step`,
      async () => {
        seen = String((await host.status({ repo: forge.repo, scope: "issue", issue: n })).issue?.detail ?? "");
        return seen.includes("the last attempt failed") ? seen : null;
      },
      { deadlineMs: 2 * 60_000, intervalMs: 250, explain: async () => `status: ${seen}\n${await story()}` },
    );
    assert.match(detail, step);
    assert.match(detail, quoted);
    const board = await waitFor(
      `#${n}'s board says attempt 1 failed`,
      async () => ((await comments(forge, n)).includes("Attempt 1 failed") ? comments(forge, n) : null),
      {
        deadlineMs: 60_000,
        intervalMs: 250,
        explain: story,
      },
    );
    assert.match(board, /Attempt 1 failed: step "Install the engine \(1\)" failed \(exit code 3\) before the worker's first beat/);
    assert.match(board, /npm error code ETARGET ⏎ npm error notarget No matching version found/);

    // Attempt 2 fails the same way: the escalation comment quotes it.
    await writeFile(join(dir, "go"), "");
    const escalated = await waitFor(
      `#${n} escalated`,
      async () => ((await comments(forge, n)).includes("handed this issue to a human") ? comments(forge, n) : null),
      {
        deadlineMs: 2 * 60_000,
        intervalMs: 250,
        explain: story,
      },
    );
    const told = await story();
    await host.stop({ repo: forge.repo, stop_workers: true });
    assert.match(escalated, /\*\*Evidence \(no-result\):\*\* step "Install the engine \(1\)" failed \(exit code 3\) before the worker's first beat/, told);
    assert.match(escalated, quoted, told);
    assert.ok(!escalated.includes(TOKEN_SHAPED) && !escalated.includes("\u001b"), "redacted, no terminal escapes");

    // The log's last lines are the worker's output in its lane (what status's last line and the breaker quote).
    const worker = await laneText(host, forge.repo, "worker", 200);
    assert.match(
      worker,
      /afk: step "Install the engine \(1\)" failed \(exit code 3\) before the worker's first beat, workflow run \d+; the last lines of its log:/,
      told,
    );
    assert.match(worker, /npm error notarget No matching version found for afk-mcp@9\.9\.9 \(\[redacted\]\)/, told);
    assert.equal((await workflowRuns(forge)).length, 2, told);
  });
});
