// The actions runtime's two readings that need no runner: which afk-mcp a workflow's worker step
// runs and whether the npm registry has it (a loopback fake registry: has, lacks, errs, is gone),
// and a failed job's log cut to the failing step's last lines (GitHub's log format: timestamps,
// groups, post-job cleanup after the error).
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { askRegistry, checkWorkerPin, pinOf, registryUrl, workerCommandOf } from "../server/runtimes/actions/worker-pin.js";
import { failedStep, failingLines } from "../server/runtimes/actions/run-failure.js";
import { workflowFile } from "../server/runtimes/actions/workflow-file.js";
import { deadRegistryUrl, fakeRegistry } from "./support/fake-registry.js";

describe("the worker step's pin", () => {
  const rows: Array<[string, ReturnType<typeof pinOf>]> = [
    ["npx -y afk-mcp@0.1.0 worker", { kind: "registry", command: "npx -y afk-mcp@0.1.0 worker", spec: "0.1.0" }],
    ["npx afk-mcp worker", { kind: "registry", command: "npx afk-mcp worker", spec: null }],
    ["npm exec --yes afk-mcp@next -- worker", { kind: "registry", command: "npm exec --yes afk-mcp@next -- worker", spec: "next" }],
    ["node tools/afk/bin.js worker", { kind: "own", command: "node tools/afk/bin.js worker" }],
    ["npx -y github:you/afk-mcp#main worker", { kind: "own", command: "npx -y github:you/afk-mcp#main worker" }],
  ];
  for (const [command, pin] of rows) it(`${command} → ${pin.kind}`, () => assert.deepEqual(pinOf(command), pin));

  it("finds the worker step in the file `actions init` writes, and in one that only takes AFK_COMMAND", () => {
    assert.equal(workerCommandOf(workflowFile({ worker: "npx -y afk-mcp@1.2.3 worker", setup: ["npm i -g x"] })), "npx -y afk-mcp@1.2.3 worker");
    const renamed =
      "jobs:\n  w:\n    steps:\n      - run: echo hi\n      - name: mine\n        env:\n          AFK_COMMAND: x\n        run: node b.js worker\n";
    assert.equal(workerCommandOf(renamed), "node b.js worker");
    assert.equal(workerCommandOf("jobs: {a: {steps: [{run: echo}]}}"), null);
    assert.equal(workerCommandOf("{ not: yaml: at all"), null);
  });

  it("the registry is npm's: npm_config_registry in any case, else the public one", () => {
    assert.equal(registryUrl({}), "https://registry.npmjs.org/");
    assert.equal(registryUrl({ npm_config_registry: "http://127.0.0.1:1/" }), "http://127.0.0.1:1/");
    assert.equal(registryUrl({ NPM_CONFIG_REGISTRY: "http://127.0.0.1:2/" }), "http://127.0.0.1:2/");
  });
});

describe("asking a registry on loopback", () => {
  const closers: Array<() => Promise<void>> = [];
  after(async () => {
    for (const close of closers) await close();
  });

  it("says whether it has the pinned version, the latest for an unpinned step, and what it could not check", async () => {
    const registry = await fakeRegistry(["0.0.9", "0.1.0"]);
    closers.push(registry.close);
    const env = { npm_config_registry: registry.url };
    assert.deepEqual(await askRegistry("0.1.0", env), { registry: registry.url, verdict: "has", version: "0.1.0" });
    assert.deepEqual(await askRegistry("9.9.9", env), { registry: registry.url, verdict: "missing" });
    assert.deepEqual(await askRegistry(null, env), { registry: registry.url, verdict: "has", version: "0.1.0" });
    assert.equal((await askRegistry("^0.1.0", env)).verdict, "unchecked", "a range is not asked");
    assert.deepEqual(registry.asked, ["/afk-mcp/0.1.0", "/afk-mcp/9.9.9", "/afk-mcp/latest"]);

    const step = (worker: string) => workflowFile({ worker });
    assert.match(
      await checkWorkerPin(step("npx -y afk-mcp@0.1.0 worker"), env),
      /^the worker step runs afk-mcp@0\.1\.0, which the npm registry \(http:\/\/127\.0\.0\.1:\d+\/\) has$/,
    );
    assert.match(
      await checkWorkerPin(step("npx -y afk-mcp@9.9.9 worker"), env),
      /^the worker step runs afk-mcp@9\.9\.9, which the npm registry \(.*\) does not have: every run will fail before its worker starts; .*afk-mcp actions init --worker COMMAND/,
    );
    assert.match(
      await checkWorkerPin(step("npx -y afk-mcp worker"), env),
      /afk-mcp unpinned \(the registry's latest at each run\), which the npm registry .* has \(0\.1\.0\)/,
    );
    assert.match(await checkWorkerPin(step("node build/bin.js worker"), env), /runs `node build\/bin\.js worker`, not a registry package: no version to check/);
    assert.equal(registry.asked.length, 6, "a step of one's own asks nothing");
    assert.match(await checkWorkerPin(null, env), /could not be read/);
  });

  it("a registry that errs or is gone is said to be unchecked, never a failure", async () => {
    const erring = await fakeRegistry([], { status: 503 });
    closers.push(erring.close);
    assert.deepEqual(await askRegistry("0.1.0", { npm_config_registry: erring.url }), { registry: erring.url, verdict: "unchecked", why: "it answered 503" });
    const gone = await deadRegistryUrl();
    const answer = await askRegistry("0.1.0", { npm_config_registry: gone });
    assert.equal(answer.verdict, "unchecked");
    assert.match(answer.why ?? "", /^unreachable/);
    assert.match(
      await checkWorkerPin(workflowFile({ worker: "npx -y afk-mcp@0.1.0 worker" }), { npm_config_registry: gone }),
      /^the worker step runs afk-mcp@0\.1\.0; whether the npm registry \(http:\/\/127\.0\.0\.1:\d+\/\) has it could not be checked: unreachable/,
    );
  });
});

describe("a failed job's log", () => {
  it("GitHub's format: the failing step's last lines, without timestamps, colours, its header block or the post-job cleanup; the exit code apart; tokens redacted", () => {
    const t = (line: string) => `2026-12-07T10:00:0${line.length % 10}.1234567Z ${line}`;
    const log = [
      "\uFEFF" + t("##[group]Run actions/checkout@v4"),
      t("with:"),
      t("##[endgroup]"),
      t("Syncing repository"),
      t("##[group]Run npx -y afk-mcp@9.9.9 worker"),
      t("npx -y afk-mcp@9.9.9 worker"),
      t("env:"),
      t("  AFK_BRIEF_TEXT: a brief that must not be quoted"),
      t("##[endgroup]"),
      ...Array.from({ length: 12 }, (_, i) => t(`npm http fetch ${i}`)),
      t("\u001b[31mnpm error\u001b[0m code ETARGET"),
      t("npm error notarget No matching version found for afk-mcp@9.9.9 with ghp_abcdefghijklmnopqrstuv"),
      t("##[error]Process completed with exit code 1."),
      t("Post job cleanup."),
      t("[command]/usr/bin/git version"),
      t("Cleaning up orphan processes"),
    ].join("\r\n");
    const { lines, exitCode } = failingLines(log);
    assert.equal(exitCode, 1);
    assert.deepEqual(lines.slice(-3), [
      "npm http fetch 11",
      "npm error code ETARGET",
      "npm error notarget No matching version found for afk-mcp@9.9.9 with [redacted]",
    ]);
    assert.equal(lines.length, 8, "bounded to the last lines");
    assert.ok(!lines.some((l) => /brief|cleanup|orphan|Syncing/.test(l)), lines.join("\n"));
  });

  it("a log with no error line is quoted from its end; a long line is cut", () => {
    const { lines, exitCode } = failingLines(`##[group]step\nfirst\n${"x".repeat(1_000)}\n`);
    assert.equal(exitCode, null);
    assert.equal(lines[0], "first");
    assert.ok(Buffer.byteLength(lines[1]!) <= 240 && lines[1]!.endsWith("…"));
  });

  it("the failed step is the first failed job's first failed step (null when the job failed with none)", () => {
    const step = (name: string, conclusion: string | null) => ({ name, status: "completed" as const, conclusion });
    const job = (id: number, conclusion: string, steps: ReturnType<typeof step>[]) => ({
      id,
      name: `job ${id}`,
      status: "completed" as const,
      conclusion,
      runnerName: null,
      steps,
    });
    const found = failedStep([
      job(1, "success", [step("a", "success")]),
      job(2, "failure", [step("a", "success"), step("b", "failure"), step("c", "skipped")]),
    ]);
    assert.deepEqual([found?.job.id, found?.step], [2, "b"]);
    assert.equal(failedStep([job(3, "failure", [step("a", "success")])])?.step, null);
    assert.equal(failedStep([job(4, "success", [])]), null);
  });
});
