// `afk-mcp demo --engine claude`: the demo's whole backlog drained by the real Claude Code (this
// package's devDependency) driven by the demo's scripted model on 127.0.0.1 — every issue reaches
// the end the demo expects, through the CLI's own shell tool, and the spend recorded equals what
// the scripted model billed. And the refusals: an engine the demo cannot drive, a CLI not installed.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { runDemo } from "../server/demo/run.js";
import { demoEngine } from "../server/demo/engine.js";
import { tempDir } from "./support/forge-fixtures.js";

describe("afk-mcp demo --engine", () => {
  it("claude drains the demo's backlog against the demo's scripted model, every issue at its expected end", async () => {
    const lines: string[] = [];
    const report = await runDemo({ engine: "claude", tty: false, write: (line) => lines.push(line), timeoutSeconds: 900 });
    assert.equal(report.ok, true, JSON.stringify(report.issues.filter((i) => !i.ok)) + "\n" + lines.slice(-30).join("\n"));
    assert.ok(report.merged >= 5, `merged ${report.merged}`);
    assert.equal(report.engine?.name, "claude");
    assert.equal(report.engine?.model, "claude-sonnet-4-5-20250929");
    assert.ok((report.engine?.turns ?? 0) >= report.issues.length, "the real CLI asked the scripted model at least once per issue");
    assert.ok(
      report.engine!.recorded_usd !== null && Math.abs(report.engine!.recorded_usd - report.engine!.billed_usd) < 1e-9,
      `recorded ${report.engine!.recorded_usd} vs billed ${report.engine!.billed_usd}`,
    );
  });

  it("refuses an engine it cannot drive, and a CLI that is not installed, with the install command", async () => {
    const dir = await tempDir("afk-demo-engine-");
    await assert.rejects(demoEngine("gemini", dir), /--engine must be claude or codex/);
    await assert.rejects(
      demoEngine("claude", dir, "/nonexistent", false),
      /demo --engine claude runs the real claude CLI, which is not installed: npm i -g @anthropic-ai\/claude-code/,
    );
    await assert.rejects(demoEngine("codex", dir, "/nonexistent", false), /npm i -g @openai\/codex/);
    await assert.rejects(runDemo({ engine: "claude", worker: "true", tty: false, write: () => undefined }), /pass --engine or --worker, not both/);
  });
});
