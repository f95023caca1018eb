// `afk-mcp demo --runtime actions`: the demo's whole backlog drained with every worker a workflow
// run on the embedded forge's Actions runner. The demo proposes the worker workflow through
// `afk-mcp actions init` and merges it, the fleet dispatches one run per attempt, the runner runs
// this package's real `afk-mcp worker` in a fresh clone, and every issue reaches the end the demo
// expects. The proof that no worker ran on the host: the runs, by title, are exactly the attempts
// the issues' labels record — one each, none more. With --engine claude, the real Claude Code is
// the engine on the runner, and the spend it reports there is what the host records.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { runDemo } from "../server/demo/run.js";

describe("afk-mcp demo --runtime actions", () => {
  it("drains the demo's backlog with every attempt a workflow run on the forge's runner, one run per attempt", { timeout: 900_000 }, async () => {
    const lines: string[] = [];
    const report = await runDemo({ runtime: "actions", tty: false, write: (line) => lines.push(line), timeoutSeconds: 600 });
    const explain = JSON.stringify({ issues: report.issues.filter((i) => !i.ok), actions: report.actions }) + "\n" + lines.slice(-30).join("\n");
    assert.deepEqual(report.runtime, { name: "actions", why: "--runtime" });
    assert.equal(report.ok, true, explain);
    assert.equal(report.actions?.one_run_per_attempt, true, explain);
    const attempts = report.issues.reduce((sum, i) => sum + i.attempts, 0);
    assert.equal(report.actions?.runs, attempts, explain);
    assert.ok(report.merged >= 5, `merged ${report.merged}`);
    // The runs that retried did so because CI or the worker said so, not because a run broke.
    assert.deepEqual(Object.keys(report.actions?.conclusions ?? {}), ["success"], explain);
    assert.ok(
      lines.some((l) => l === JSON.stringify({ runtime: "actions", why: "--runtime" })),
      "the demo says where its workers run",
    );
  });

  it(
    "with --engine claude: the real Claude Code runs on the runner against the demo's scripted model, its key a repository secret; spend comes home",
    { timeout: 900_000 },
    async () => {
      const lines: string[] = [];
      const report = await runDemo({ runtime: "actions", engine: "claude", tty: false, write: (line) => lines.push(line), timeoutSeconds: 600 });
      const explain = JSON.stringify({ issues: report.issues.filter((i) => !i.ok), actions: report.actions }) + "\n" + lines.slice(-30).join("\n");
      assert.equal(report.ok, true, explain);
      assert.equal(report.actions?.one_run_per_attempt, true, explain);
      assert.equal(report.engine?.name, "claude");
      assert.ok((report.engine?.turns ?? 0) >= report.issues.length, "the real CLI on the runner asked the scripted model at least once per issue");
      // What the CLI reported on the runner reached the host through the beats, to the cent.
      assert.ok(
        report.engine!.recorded_usd !== null && Math.abs(report.engine!.recorded_usd - report.engine!.billed_usd) < 1e-9,
        `recorded ${report.engine!.recorded_usd} vs billed ${report.engine!.billed_usd}`,
      );
    },
  );

  it("refuses a runtime it does not know, naming the ones it does", async () => {
    await assert.rejects(runDemo({ runtime: "k8s" as never, tty: false, write: () => undefined }), /--runtime must be one of sandbox, local, actions/);
  });
});
