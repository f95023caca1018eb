// The parts of `afk-mcp demo`, each against the real thing: the sample project's tests on the
// seeded base, the seeded backlog's structure as the forge serves it, the scripted worker in
// real clones (commits, verdicts, a CI failure fixed on the second attempt), and the local CI
// runner judging real pull requests with check runs.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { BACKLOG, RECIPES, buildSeed, expectations, expectationsFor, issueNumberOf, stepFor, type Recipe } from "../server/demo/backlog.js";
import { failureExcerpt, startCiRunner, type CiRunner } from "../server/demo/ci-runner.js";
import { SAMPLE_FILES } from "../server/demo/sample.js";
import { workerArgv, workerShellCommand } from "../server/demo/worker-command.js";
import { demoScript } from "../server/demo/engine.js";
import { nextStep, startScriptedModel } from "../server/demo/scripted-model.js";
import { startForge, type RunningForge } from "../server/forge-emulator/index.js";
import { renderBrief } from "../server/agent/brief.js";
import { api, cloneRepo, git, repoPath, tempDir } from "./support/forge-fixtures.js";
import { waitFor } from "./support/wait.js";

let forge: RunningForge;
let forgeDir: string;
const cleanup: string[] = [];

/** A temp dir removed after the suite. */
async function scratch(prefix: string): Promise<string> {
  const dir = await tempDir(prefix);
  cleanup.push(dir);
  return dir;
}

interface ProcResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program asynchronously (the forge serves from this process), feeding `input` on stdin. */
function runProc(argv: readonly string[], opts: { cwd: string; env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number }): Promise<ProcResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: opts.cwd, env: opts.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdin.on("error", () => {});
    child.stdin.end(opts.input ?? "");
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 30_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The sample's tests in `dir`, as CI runs them: a clean environment, no nested test context.
 * TAP, which the assertions read: Node 23 and newer report in the spec format by default.
 */
function sampleTests(dir: string, only: string[] = []): Promise<ProcResult> {
  return runProc([process.execPath, "--test", "--test-reporter=tap", ...only], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: "1" },
  });
}

async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

function recipe(key: string): Recipe {
  const r = RECIPES.find((x) => x.key === key);
  assert.ok(r, `no recipe ${key}`);
  return r;
}

/** The brief the fleet would give for `key` at `attempt`, rendered by the fleet's own code. */
async function briefFor(key: string, attempt: number, worktree: string, verdictPath: string): Promise<string> {
  const number = issueNumberOf(key);
  const issue = (await api(forge, "GET", repoPath(forge, `/issues/${number}`))).body;
  return renderBrief({
    repo: forge.repo,
    issue: { number, title: issue.title, body: issue.body ?? "", url: issue.html_url, labels: issue.labels.map((l: { name: string }) => l.name) },
    branch: `afk/${number}`,
    base: "main",
    worktree,
    attempt,
    maxAttempts: 3,
    lastFailure: attempt > 1 ? { kind: "ci", summary: "test: failure", excerpt: "not ok 2 - truncate fits the ellipsis within max" } : null,
    verdictPath,
  });
}

interface WorkerRun extends ProcResult {
  verdictPath: string;
}

/** Runs the scripted worker for `key` in `worktree` the way the fleet does: AFK_* env, brief on stdin. */
async function runWorker(
  key: string,
  attempt: number,
  worktree: string,
  opts: { stdin?: boolean; extraEnv?: Record<string, string> } = {},
): Promise<WorkerRun> {
  const stateDir = await scratch("afk-demo-state-");
  const verdictPath = join(stateDir, "verdict.json");
  const brief = await briefFor(key, attempt, worktree, verdictPath);
  const briefPath = join(stateDir, "brief.md");
  await writeFile(briefPath, brief);
  const number = issueNumberOf(key);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    AFK_ISSUE: String(number),
    AFK_ATTEMPT: String(attempt),
    AFK_WORKTREE: worktree,
    AFK_BRANCH: `afk/${number}`,
    AFK_BASE: "main",
    AFK_REPO: forge.repo,
    AFK_BRIEF: briefPath,
    AFK_VERDICT_FILE: verdictPath,
    ...opts.extraEnv,
  };
  const r = await runProc(workerArgv(), { cwd: worktree, env, input: opts.stdin === false ? "" : brief });
  return { ...r, verdictPath };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** A clone on a fresh branch off origin/main. */
async function branchClone(branch: string): Promise<string> {
  const dir = await cloneRepo(forge);
  cleanup.push(dirname(dir));
  await git(dir, "checkout", "--quiet", "-b", branch, "origin/main");
  return dir;
}

async function changedFiles(dir: string): Promise<string[]> {
  const out = (await git(dir, "diff", "--name-only", "origin/main..HEAD")).stdout;
  return out === "" ? [] : out.split("\n").sort();
}

async function commitCount(dir: string): Promise<number> {
  return Number((await git(dir, "rev-list", "--count", "origin/main..HEAD")).stdout);
}

before(async () => {
  forgeDir = await tempDir("afk-demo-forge-");
  const seedPath = join(forgeDir, "..", `${forgeDir.split("/").pop()}-seed.json`);
  await writeFile(seedPath, JSON.stringify(buildSeed(), null, 2));
  cleanup.push(seedPath);
  forge = await startForge({ dir: forgeDir, seed: seedPath });
});

after(async () => {
  await forge?.close();
  for (const dir of [forgeDir, ...cleanup]) await rm(dir, { recursive: true, force: true });
});

describe("the sample project", () => {
  it("is the seeded base, and its tests pass there", async () => {
    const dir = await cloneRepo(forge);
    cleanup.push(dirname(dir));
    for (const [path, content] of Object.entries(SAMPLE_FILES)) {
      assert.equal(await readFile(join(dir, path), "utf8"), content, path);
    }
    const r = await sampleTests(dir);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /# pass [1-9]/);
    assert.match(r.stdout, /# fail 0/);
  });

  it("has recipes that do what their expected end says, and never write the same path", async () => {
    const owner = new Map<string, string>();
    for (const r of RECIPES) {
      for (const step of r.steps) {
        if (step.kind !== "commit") continue;
        for (const path of Object.keys(step.files)) {
          assert.ok(!(path in SAMPLE_FILES), `${r.key} overwrites the base file ${path}`);
          const other = owner.get(path);
          assert.ok(other === undefined || other === r.key, `${r.key} and ${other} both write ${path}: landings would conflict`);
          owner.set(path, r.key);
        }
      }
    }
    // Every commit step on the base plus the merged prerequisites: a chain link sees its
    // blockers landed, as the fleet only dispatches it then. The runs are mostly waiting on
    // process start-up, so they go in parallel.
    const landed: Record<string, string> = {};
    const cases: { label: string; dir: string; tests: string[]; shouldPass: boolean }[] = [];
    for (const item of BACKLOG) {
      const steps = item.steps ?? [];
      for (const [i, step] of steps.entries()) {
        if (step.kind !== "commit") continue;
        const dir = await scratch(`afk-demo-recipe-${item.key}-`);
        const files = Object.fromEntries(Object.entries(step.files).map(([p, c]) => [p, c.split("{{attempt}}").join(String(i + 1))]));
        await writeFiles(dir, { ...SAMPLE_FILES, ...landed, ...files });
        // Only the recipe's own tests: it touches no other file (checked above), so the rest
        // of the suite cannot change, and each test file costs a Node start-up.
        const tests = Object.keys(files).filter((p) => p.endsWith(".test.js"));
        assert.ok(tests.length > 0, `${item.key} attempt ${i + 1} adds no test`);
        cases.push({ label: `${item.key} attempt ${i + 1}`, dir, tests, shouldPass: item.end === "merged" && i === steps.length - 1 });
      }
      const final = steps.at(-1);
      if (item.end === "merged" && final?.kind === "commit") Object.assign(landed, final.files);
    }
    const results = await Promise.all(cases.map((c) => sampleTests(c.dir, c.tests)));
    for (const [i, c] of cases.entries()) {
      const r = results[i]!;
      assert.equal(r.code === 0, c.shouldPass, `${c.label}: expected the tests to ${c.shouldPass ? "pass" : "fail"}\n${r.stdout}`);
    }
  });
});

describe("the seeded backlog", () => {
  it("loads with the dependency chain, the epic and the labels", async () => {
    const issues = (await api(forge, "GET", repoPath(forge, "/issues?state=all&per_page=100"))).body as {
      number: number;
      title: string;
      body: string;
      labels: { name: string }[];
    }[];
    assert.equal(issues.length, BACKLOG.length);
    const byNumber = new Map(issues.map((i) => [i.number, i]));
    for (const [i, item] of BACKLOG.entries()) {
      const issue = byNumber.get(i + 1)!;
      assert.equal(issue.title, item.title);
      assert.match(issue.body, new RegExp(`afk-demo-recipe: ${item.key}\\b`));
      assert.deepEqual(issue.labels.map((l) => l.name).sort(), [...item.labels].sort());
    }

    const [words, camel, pascal, epic, freq, reading] = ["words", "camel-case", "pascal-case", "stats-epic", "char-frequency", "reading-time"].map(
      issueNumberOf,
    );
    // Chain: #2 natively blocked by #1, #3 by #2 through its body's `## Blocked by` section.
    const blockers = async (n: number): Promise<number[]> =>
      (await api(forge, "GET", repoPath(forge, `/issues/${n}/dependencies/blocked_by`))).body.map((i: { number: number }) => i.number);
    assert.deepEqual(await blockers(camel!), [words]);
    assert.deepEqual(await blockers(pascal!), []);
    assert.match(byNumber.get(pascal!)!.body, new RegExp(`## Blocked by\\n\\n- #${camel}\\n`));
    assert.deepEqual(await blockers(words!), []);
    // Epic: labelled, with two native sub-issues, and no recipe (never dispatched).
    const subs = (await api(forge, "GET", repoPath(forge, `/issues/${epic}/sub_issues`))).body.map((i: { number: number }) => i.number);
    assert.deepEqual(subs.sort(), [freq, reading]);
    assert.ok(byNumber.get(epic!)!.labels.some((l) => l.name === "epic"));
    assert.equal(
      RECIPES.some((r) => r.key === "stats-epic"),
      false,
    );

    const labels = (await api(forge, "GET", repoPath(forge, "/labels"))).body.map((l: { name: string }) => l.name);
    for (const name of ["ready-for-agent", "ready-for-human", "epic"]) assert.ok(labels.includes(name), name);
  });

  it("states an expected end for every issue", () => {
    assert.equal(expectations.length, BACKLOG.length);
    const ends = (key: string) => expectations.find((e) => e.key === key);
    assert.deepEqual(ends("truncate"), { key: "truncate", number: issueNumberOf("truncate"), title: recipe("truncate").title, end: "merged", attempts: 2 });
    assert.equal(ends("capitalize")?.end, "closed_done");
    assert.equal(ends("stats-epic")?.end, "epic_done");
    assert.equal(ends("stats-epic")?.attempts, undefined);
    assert.deepEqual(
      expectations.filter((e) => e.end === "escalated").map((e) => [e.key, e.attempts]),
      [
        ["hyphenate", 3],
        ["detect-language", 3],
      ],
    );
    assert.equal(expectations.filter((e) => e.end === "merged").length, 7);
    // With no retries, the issue that needs a second attempt is escalated instead.
    assert.deepEqual(
      expectationsFor(0).find((e) => e.key === "truncate"),
      { ...ends("truncate"), end: "escalated", attempts: 1 },
    );
    assert.equal(stepFor(recipe("hyphenate"), 9), recipe("hyphenate").steps.at(-1));
  });
});

describe("the scripted worker", { concurrency: true }, () => {
  it("commits a plain issue's recipe files, once, and writes no verdict", async () => {
    const dir = await branchClone("afk/1");
    const r = await runWorker("words", 1, dir);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /afk-demo worker: issue #1 \(words\), attempt 1/);
    assert.match(r.stdout, /committed [0-9a-f]+: Add words\(\)/);
    assert.equal(await commitCount(dir), 1);
    assert.deepEqual(await changedFiles(dir), ["src/words.js", "test/words.test.js"]);
    assert.equal(await exists(r.verdictPath), false);
    assert.equal((await git(dir, "status", "--porcelain")).stdout, "");
    assert.equal((await git(dir, "log", "-1", "--format=%an <%ae>")).stdout, "afk demo worker <afk-demo-worker@localhost>");
    // The same attempt again (a restarted worker): nothing new, no empty commit.
    const again = await runWorker("words", 1, dir);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /nothing new to commit/);
    assert.equal(await commitCount(dir), 1);
  });

  it("fails the sample's tests on attempt 1 of the truncate issue and passes them on attempt 2", async () => {
    const dir = await branchClone("afk/7");
    const first = await runWorker("truncate", 1, dir);
    assert.equal(first.code, 0, first.stderr);
    const red = await sampleTests(dir);
    assert.notEqual(red.code, 0, "attempt 1 should break the tests");
    assert.match(red.stdout, /not ok \d+ - truncate fits the ellipsis within max/);

    const second = await runWorker("truncate", 2, dir);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /attempt 2/);
    const green = await sampleTests(dir);
    assert.equal(green.code, 0, green.stdout);
    assert.equal(await commitCount(dir), 2, "attempt 2 continues the branch");
    assert.deepEqual(await changedFiles(dir), ["src/truncate.js", "test/truncate.test.js"]);
  });

  it("writes an already-satisfied verdict and commits nothing", async () => {
    const dir = await branchClone("afk/8");
    const r = await runWorker("capitalize", 1, dir);
    assert.equal(r.code, 0, r.stderr);
    const verdict = JSON.parse(await readFile(r.verdictPath, "utf8"));
    assert.equal(verdict.verdict, "already-satisfied");
    assert.match(verdict.reason, /src\/case\.js/);
    assert.equal(await commitCount(dir), 0);
    assert.equal((await git(dir, "status", "--porcelain")).stdout, "");
  });

  it("gives up on the language issue, reads the brief from $AFK_BRIEF without stdin, and gives up on an unknown issue", async () => {
    const dir = await branchClone("afk/10");
    const r = await runWorker("detect-language", 2, dir, { stdin: false });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\(detect-language\), attempt 2/);
    assert.equal(JSON.parse(await readFile(r.verdictPath, "utf8")).verdict, "giving-up");
    assert.equal(await commitCount(dir), 0);

    const recipesFile = join(await scratch("afk-demo-recipes-"), "recipes.json");
    await writeFile(recipesFile, JSON.stringify([]));
    const unknown = await runWorker("pad-center", 1, dir, { extraEnv: { AFK_DEMO_RECIPES: recipesFile } });
    assert.equal(unknown.code, 0, unknown.stderr);
    const verdict = JSON.parse(await readFile(unknown.verdictPath, "utf8"));
    assert.equal(verdict.verdict, "giving-up");
    assert.match(verdict.reason, /no recipe for issue #11/);
  });

  it("has a shell command line that quotes every word", () => {
    const line = workerShellCommand({ AFK_DEMO_DELAY_MS: "50" });
    assert.match(line, /^AFK_DEMO_DELAY_MS='50' '/);
    assert.ok(line.includes(`'${process.execPath}'`));
    assert.match(line, /worker\.(ts|js)'$/);
  });
});

describe("the scripted model's exploring script (the fix-forward bench's)", () => {
  const rows: Array<{ outputs: string[]; want: string }> = [
    { outputs: [], want: "git log" },
    { outputs: ["0\n"], want: "sed -n 1,80p" },
    { outputs: ["0\n", "brief", "files", "{}"], want: "worker" },
    { outputs: ["2\n"], want: "worker" },
    { outputs: ["2\n", "committed"], want: "git show" },
    { outputs: ["2\n", "committed", "stat"], want: "done" },
    { outputs: ["0\n", "brief", "files", "{}", "committed", "stat"], want: "done" },
  ];
  for (const row of rows) {
    it(`after ${JSON.stringify(row.outputs)}: ${row.want}`, () => {
      const step = nextStep(demoScript("explore"), row.outputs.length, row.outputs);
      assert.ok("shell" in step ? step.shell.includes(row.want) : "text" in step && step.text === row.want, JSON.stringify(step));
    });
  }

  it("reads the branch from real git: a fresh branch explores (0 commits of a worker), a continued one fixes", async () => {
    const dir = await scratch("afk-demo-explore-");
    const check = demoScript("explore")[0]!;
    assert.ok("shell" in check && check.when);
    await git(dir, "init", "-q", "-b", "main");
    const commit = (message: string) =>
      git(dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "-m", message);
    await commit("the sample project");
    const count = async () => (await runProc(["sh", "-c", check.shell], { cwd: dir, env: process.env })).stdout;
    assert.doesNotMatch(await count(), new RegExp(check.when.match, "m"));
    await commit("Add truncate()\n\nScripted demo worker, attempt 1.");
    assert.match(await count(), new RegExp(check.when.match, "m"));
  });

  it("answers over both APIs with the branch the last tool result picked", async () => {
    const model = await startScriptedModel({ script: demoScript("explore") });
    try {
      const post = async (path: string, body: unknown): Promise<string> => {
        const res = await fetch(`${model.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        return res.text();
      };
      const anthropic = await post("/v1/messages", {
        model: "m",
        tools: [{ name: "Bash" }],
        messages: [
          { role: "user", content: "the brief" },
          { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Bash", input: {} }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "1" }] }] },
        ],
      });
      assert.match(anthropic, /worker\.(js|ts)/, "the continued branch goes straight to the work");
      const openai = await post("/v1/responses", {
        model: "m",
        tools: [{ type: "function", name: "shell" }],
        input: [
          { type: "message", role: "user", content: "the brief" },
          { type: "function_call", call_id: "c1", name: "shell", arguments: "{}" },
          { type: "function_call_output", call_id: "c1", output: "0" },
        ],
      });
      assert.match(openai, /sed -n 1,80p/, "a fresh branch is explored first");
      assert.equal(model.turns.length, 2);
    } finally {
      await model.close();
    }
  });
});

describe("the scripted model's tool step (a client's MCP tools, named by suffix)", () => {
  const script = [
    { tool: "status", input: { repo: "afk/demo" } },
    { tool: "project_stop", input: { repo: "afk/demo" } },
  ];
  const post = async (url: string, path: string, body: unknown): Promise<string> =>
    (await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).text();
  const reminder = {
    role: "user",
    content: [{ type: "text", text: "<system-reminder>\nDeferred tools:\nWebFetch\nmcp__afk__project_stop\nmcp__afk__status\n</system-reminder>" }],
  };
  const called = (sse: string): { name?: string; input?: unknown; text?: string } => {
    const start = /"content_block_start","index":0,"content_block":(\{.*\})\}/.exec(sse);
    const delta = /"content_block_delta","index":0,"delta":(\{.*\})\}/.exec(sse);
    const block = JSON.parse(start![1]!) as { name?: string };
    const d = JSON.parse(delta![1]!) as { partial_json?: string; text?: string };
    return d.partial_json !== undefined ? { name: block.name, input: JSON.parse(d.partial_json) } : { text: d.text };
  };

  it("calls an offered tool by its suffix, loads a deferred one through ToolSearch first (not a step), waits for servers, else says so", async () => {
    const model = await startScriptedModel({ script });
    try {
      const rows: Array<{ tools: string[]; messages: unknown[]; want: { name?: string; input?: unknown; text?: string } }> = [
        { tools: ["Bash", "mcp__afk__status"], messages: [reminder], want: { name: "mcp__afk__status", input: { repo: "afk/demo" } } },
        { tools: ["Bash", "ToolSearch"], messages: [reminder], want: { name: "ToolSearch", input: { query: "select:mcp__afk__status" } } },
        {
          tools: ["Bash", "ToolSearch", "mcp__afk__status"],
          messages: [
            reminder,
            { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "ToolSearch", input: {} }] },
            { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "loaded" }] },
          ],
          want: { name: "mcp__afk__status", input: { repo: "afk/demo" } },
        },
        {
          tools: ["Bash", "ToolSearch", "mcp__afk__status"],
          messages: [
            reminder,
            { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "mcp__afk__status", input: {} }] },
            { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "plan for afk/demo" }] }] },
          ],
          want: { name: "ToolSearch", input: { query: "select:mcp__afk__project_stop" } },
        },
        { tools: ["Bash", "WaitForMcpServers"], messages: [{ role: "user", content: "go" }], want: { name: "WaitForMcpServers", input: {} } },
        { tools: ["Bash", "afk_status_extra"], messages: [{ role: "user", content: "go" }], want: { text: "scripted model: no tool status offered" } },
      ];
      for (const row of rows) {
        const sse = await post(model.url, "/v1/messages", { model: "m", tools: row.tools.map((name) => ({ name })), messages: row.messages });
        assert.deepEqual(called(sse), row.want, JSON.stringify(row.tools));
      }
      assert.deepEqual(
        model.turns.map((t) => t.reply),
        ["mcp__afk__status", "ToolSearch", "mcp__afk__status", "ToolSearch", "WaitForMcpServers", "text"],
      );
      assert.equal(model.turns[3]!.read, "plan for afk/demo", "what the model read: the last tool result");
      assert.equal(model.turns[0]!.read, undefined);
    } finally {
      await model.close();
    }
  });

  it("calls Codex's namespaced MCP tool (namespace mcp__afk, name status) over the Responses API", async () => {
    const model = await startScriptedModel({ script });
    try {
      const sse = await post(model.url, "/v1/responses", {
        model: "m",
        tools: [
          { type: "function", name: "shell" },
          { type: "namespace", name: "mcp__afk", tools: [{ name: "status" }, { name: "project_stop" }] },
        ],
        input: [{ type: "message", role: "user", content: "go" }],
      });
      const item = /"response\.output_item\.done","output_index":0,"item":(\{.*\})\}/.exec(sse);
      const call = JSON.parse(item![1]!) as { type: string; name: string; namespace: string; arguments: string };
      assert.deepEqual(
        { type: call.type, name: call.name, namespace: call.namespace, input: JSON.parse(call.arguments) },
        { type: "function_call", name: "status", namespace: "mcp__afk", input: { repo: "afk/demo" } },
      );
      assert.equal(model.turns[0]!.reply, "mcp__afk__status");
    } finally {
      await model.close();
    }
  });
});

describe("the local CI runner", () => {
  let runner: CiRunner | null = null;
  const logs: string[] = [];

  after(async () => {
    await runner?.stop();
  });

  /** Pushes `files` as one commit on `branch` (off main, or on top of the branch); returns the sha. */
  async function pushFiles(dir: string, branch: string, files: Record<string, string>, message: string): Promise<string> {
    await writeFiles(dir, files);
    await git(dir, "add", "--", ...Object.keys(files));
    await git(dir, "commit", "--quiet", "-m", message);
    await git(dir, "push", "--quiet", "origin", `HEAD:refs/heads/${branch}`);
    return (await git(dir, "rev-parse", "HEAD")).stdout;
  }

  async function openPr(branch: string, title: string): Promise<number> {
    const r = await api(forge, "POST", repoPath(forge, "/pulls"), { title, head: branch, base: "main", body: "" });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.number;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function completedRun(sha: string, timeoutMs = 30_000): Promise<any> {
    return waitFor(
      `a completed check run on ${sha}`,
      async () =>
        (await api(forge, "GET", repoPath(forge, `/commits/${sha}/check-runs`))).body.check_runs.find(
          (c: { name: string; status: string }) => c.name === "test" && c.status === "completed",
        ),
      { deadlineMs: timeoutMs, intervalMs: 100, explain: () => `logs:\n${logs.join("\n")}` },
    );
  }

  it("posts failure for a red head, success for a green one, and judges a PR's new head again", async () => {
    const redDir = await branchClone("ci-red");
    const greenDir = await branchClone("ci-green");
    const truncate = recipe("truncate");
    const [buggy, fixed] = truncate.steps as unknown as [{ kind: "commit"; files: Record<string, string> }, { kind: "commit"; files: Record<string, string> }];
    const redSha = await pushFiles(redDir, "ci-red", buggy.files, "buggy truncate");
    const words = stepFor(recipe("words"), 1) as { kind: "commit"; files: Record<string, string> };
    const greenSha = await pushFiles(greenDir, "ci-green", words.files, "words");
    const redPr = await openPr("ci-red", "red");
    await openPr("ci-green", "green");

    runner = startCiRunner({
      apiUrl: forge.apiUrl,
      token: forge.token,
      repo: forge.repo,
      gitUrl: forge.gitUrl,
      workDir: await scratch("afk-demo-ci-"),
      intervalMs: 100,
      checkName: "test",
      onLog: (line) => logs.push(line),
    });

    const red = await completedRun(redSha);
    assert.equal(red.conclusion, "failure");
    assert.equal(red.output.title, "2 of 7 tests failed");
    assert.match(red.output.summary, /exited with 1: 7 tests, 5 passed, 2 failed/);
    assert.match(red.output.text, /failing tests:/);
    assert.match(red.output.text, /truncate fits the ellipsis within max/);
    assert.match(red.output.text, /'hello wo…'/);
    assert.doesNotMatch(red.output.text, /node:internal|\/tmp\//, "the excerpt drops Node's frames and the checkout path");
    assert.ok(!red.output.text.includes(forge.token));

    const green = await completedRun(greenSha);
    assert.equal(green.conclusion, "success");
    assert.match(green.output.title, /^tests passed \(\d+ tests, \d+ passed, 0 failed\)$/);

    // The next attempt pushes a fix on the same branch: the PR's new head is judged on its own.
    const fixedSha = await pushFiles(redDir, "ci-red", fixed.files, "fixed truncate");
    assert.equal((await api(forge, "GET", repoPath(forge, `/pulls/${redPr}`))).body.head.sha, fixedSha);
    assert.equal((await completedRun(fixedSha)).conclusion, "success");

    const stats = runner.stats();
    assert.equal(stats.runs, 3);
    assert.deepEqual([stats.passed, stats.failed], [2, 1]);
    // One run per head: a completed head is not run again on later polls.
    const polls = stats.polls;
    // Two more polls, however long a loaded machine takes for them.
    await waitFor("the runner to keep polling", () => runner!.stats().polls >= polls + 2, { deadlineMs: 120_000, intervalMs: 50 });
    assert.equal(runner.stats().runs, 3);
    const runsOnRed = (await api(forge, "GET", repoPath(forge, `/commits/${redSha}/check-runs`))).body.check_runs;
    assert.equal(runsOnRed.length, 1);
    await runner.stop();
    runner = null;
  });

  it("survives an unreachable API and reports it through the log callback", async () => {
    const errors: string[] = [];
    const dead = startCiRunner({
      apiUrl: "http://127.0.0.1:9", // discard port: connection refused
      token: "t",
      repo: forge.repo,
      gitUrl: forge.gitUrl,
      workDir: await scratch("afk-demo-ci-dead-"),
      intervalMs: 50,
      onLog: (line) => errors.push(line),
    });
    // Two failed polls, however slow the machine: wait for them, not for a time.
    await waitFor("two failed polls", () => dead.stats().errors >= 2, { deadlineMs: 120_000, intervalMs: 50 });
    const stats = dead.stats();
    await dead.stop();
    assert.ok(stats.polls >= 2, `polls: ${stats.polls}`);
    assert.ok(stats.errors >= 2);
    assert.match(errors[0] ?? "", /^ci: poll: .*retrying on the next poll/);
  });

  it("cuts a long failure down to its failing tests", () => {
    const output = [
      "✔ ok one",
      "ℹ tests 2",
      "✖ failing tests:",
      "",
      "test at /tmp/x/test/a.test.js:1:1",
      "✖ boom",
      "    at Test.run (node:internal/test_runner/test:1:1)",
      "    at file:///tmp/x/test/a.test.js:3:3",
      "x".repeat(20_000),
    ].join("\n");
    const excerpt = failureExcerpt(output, "/tmp/x");
    assert.ok(Buffer.byteLength(excerpt) <= 8 * 1024 + 100);
    assert.doesNotMatch(excerpt, /node:internal/);
    const short = failureExcerpt(output.split("\n").slice(0, 8).join("\n"), "/tmp/x");
    assert.match(short, /^✖ failing tests:\n\ntest at \.\/test\/a\.test\.js:1:1\n✖ boom\n {4}at file:\/\/\.\/test\/a\.test\.js:3:3$/);
  });
});
