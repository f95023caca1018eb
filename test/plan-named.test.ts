// The dry run says what will run, and what becomes of every issue a selector names: through a
// real MCP client (in memory) and the host `afk-mcp plan` calls, against the local forge. A
// number that is no issue (absent, a pull request) refuses the start and its dry run, naming it;
// a closed one, a blocked one and a pulled-in blocker under triage are listed with their reasons
// in the dry run, the start's refusal and status; the dispatch follows the list's order, and with
// an engine each dispatched issue says its engine and model, beside the engine's binary, version,
// budget and the runtime with what it lets through.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { resolve, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createServer } from "../server/server.js";
import { FleetHost } from "../server/host/host.js";
import { runtimeReach } from "../server/runtimes/sandbox/lets-through.js";
import { FleetConfigSchema } from "../schemas/config.js";
import type { PlanOutput } from "../schemas/tools.js";
import { api, cloneRepo, openPull, pushBranch, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";

const CLAUDE = join(resolve(process.cwd(), "node_modules/.bin"), "claude");
let forge: TestForge;
let env: Record<string, string>;
let host: FleetHost;
let client: Client;
const n: Record<string, number> = {};

before(async () => {
  forge = await startTestForge({ users: ["alice"] });
  await api(forge, "POST", "/repos/afk/demo/labels", { name: "ready-for-agent", color: "0e8a16" });
  const issue = async (key: string, labels: string[]) => {
    n[key] = (await api(forge, "POST", "/repos/afk/demo/issues", { title: key, labels })).body.number as number;
  };
  await issue("first", ["ready-for-agent"]);
  await issue("closed", ["ready-for-agent"]);
  await issue("blocked", ["ready-for-agent"]);
  await issue("triage", ["needs-triage"]);
  await issue("last", ["ready-for-agent"]);
  await api(forge, "PATCH", `/repos/afk/demo/issues/${n.closed}`, { state: "closed" });
  const blocker = (await api(forge, "GET", `/repos/afk/demo/issues/${n.triage}`)).body.id as number;
  await api(forge, "POST", `/repos/afk/demo/issues/${n.blocked}/dependencies/blocked_by`, { issue_id: blocker });
  n.pull = (await openPull(forge, await cloneRepo(forge), "feature")).number;
  env = {
    GITHUB_API_URL: forge.apiUrl,
    GITHUB_TOKEN: forge.token,
    AFK_RUNTIME: "local",
    AFK_STATE_DIR: await tempDir("afk-state-"),
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
  };
  host = new FleetHost({ env, instance: "plannamed" });
  const server = createServer(host);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  client = new Client({ name: "afk-test", version: "0.0.0" });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
});

after(async () => {
  await client.close();
  await host.close();
  await forge.dispose();
});

const textOf = (result: Awaited<ReturnType<Client["callTool"]>>): string => (result.content as Array<{ text: string }>).map((c) => c.text).join("\n");
const engineConfig = { engines: { claude: { binary: CLAUDE } }, budget: { usd_per_attempt: 2 } };

describe("named issues: a number that is no issue refuses the start and its dry run", () => {
  for (const [name, dryRun] of [
    ["a dry run", true],
    ["a start", false],
  ] as const) {
    it(`${name}: an absent number and a pull request, each named`, async () => {
      const result = await client.callTool({
        name: "project_start",
        arguments: { repo: "afk/demo", dry_run: dryRun, worker_command: "true", selectors: [{ issues: [n.last, 99, n.pull] }] },
      });
      assert.equal(result.isError, true, textOf(result));
      const text = textOf(result);
      assert.match(text, /project_start refused: named_issues: selectors name #99 \(no such issue in afk\/demo\)/);
      assert.ok(text.includes(`#${n.pull} (a pull request, not an issue)`), text);
    });
  }
});

describe("the dry run says what will run, and what becomes of each named issue", () => {
  it("list order, routes, engine, runtime and the named issues that will not run (text and structure alike)", async () => {
    const selectors = [{ issues: [n.last, n.blocked, n.first, n.closed] }];
    const result = await client.callTool({
      name: "project_start",
      arguments: { repo: "afk/demo", dry_run: true, engine: "claude", model: "claude-sonnet-4-5", selectors, config: engineConfig },
    });
    const text = textOf(result);
    assert.notEqual(result.isError, true, text);
    const { plan, message } = result.structuredContent as { plan: PlanOutput; message: string };
    assert.deepEqual(
      plan.dispatch.map((d) => d.number),
      [n.last, n.first],
      "the list's order; the blocked issue waits for its blocker under triage",
    );
    for (const d of plan.dispatch) assert.deepEqual(d.route, { engine: "claude", model: "claude-sonnet-4-5", from: "start" });
    assert.deepEqual(
      plan.named.map((s) => [s.number, s.reason]),
      [
        [n.blocked, "blocked"],
        [n.closed, "closed"],
        [n.triage, "not_ready"],
      ],
    );
    assert.deepEqual(plan.named.at(-1)!.blocks, [n.blocked], "the blocker is marked as pulled in");
    const run = plan.run!;
    assert.equal(run.engines.length, 1);
    assert.equal(run.engines[0]!.name, "claude");
    assert.equal(run.engines[0]!.path, CLAUDE);
    assert.match(run.engines[0]!.version, /\d+\.\d+/);
    assert.equal(run.engines[0]!.budget, "$2 passed as --max-budget-usd");
    assert.deepEqual([run.runtime.name, run.runtime.unconfined], ["local", true]);
    assert.match(message, /3 named issue\(s\) will not run now/);
    // The text says the same.
    assert.ok(text.includes(`engine claude: ${CLAUDE}, version ${run.engines[0]!.version}`), text);
    assert.match(text, /runtime local: workers run as this user, unconfined/);
    assert.ok(text.includes(`#${n.last}  last  -> claude claude-sonnet-4-5 (start)`), text);
    assert.ok(text.includes(`#${n.closed}  closed  [selector 1]`), text);
    assert.ok(text.includes(`#${n.triage}  not ready: no label ready-for-agent; an open blocker of #${n.blocked}`), text);
  });

  it("without an engine: the opaque command and the runtime, no routes", async () => {
    const result = await client.callTool({ name: "project_start", arguments: { repo: "afk/demo", dry_run: true, worker_command: "sh agent.sh" } });
    const { plan } = result.structuredContent as { plan: PlanOutput };
    assert.equal(plan.run!.command, "sh agent.sh");
    assert.deepEqual(plan.run!.engines, []);
    assert.ok(plan.dispatch.every((d) => d.route === undefined));
    assert.match(textOf(result), /will run:\n {2}command: sh agent\.sh\n {2}runtime local/);
  });

  it("`afk-mcp plan --engine claude`: the same what-will-run", async () => {
    // `afk-mcp plan` takes no config overrides: the repository's config names the binary.
    await pushBranch(await cloneRepo(forge), "main", ".github/afk.json", JSON.stringify({ engines: { claude: { binary: CLAUDE } } }));
    const planHost = new FleetHost({ env, instance: "plannamed2" });
    try {
      const plan = await planHost.plan("afk/demo", {}, { engine: "claude" });
      assert.equal(plan.run!.engines[0]!.name, "claude");
      assert.ok(plan.dispatch.length > 0 && plan.dispatch.every((d) => d.route?.engine === "claude"));
    } finally {
      await planHost.close();
    }
  });
});

describe("status says what becomes of each named issue", () => {
  it("with the repository's selectors naming a closed issue: in the plan and for the issue itself", async () => {
    const dir = await cloneRepo(forge);
    await pushBranch(dir, "main", ".github/afk.json", JSON.stringify({ selectors: [{ issues: [n.last, n.closed] }] }));
    const fresh = new FleetHost({ env, instance: "plannamed3" });
    const server = createServer(fresh);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const reader = new Client({ name: "afk-test", version: "0.0.0" });
    await Promise.all([server.connect(serverSide), reader.connect(clientSide)]);
    try {
      const status = await reader.callTool({ name: "status", arguments: { repo: "afk/demo" } });
      const { plan } = status.structuredContent as { plan: PlanOutput };
      assert.deepEqual(
        plan.named.map((s) => [s.number, s.reason]),
        [[n.closed, "closed"]],
      );
      assert.deepEqual(
        plan.dispatch.map((d) => d.number),
        [n.last],
      );
      assert.ok(textOf(status).includes(`#${n.closed}  closed  [selector 1]`), textOf(status));
      const one = await reader.callTool({ name: "status", arguments: { repo: "afk/demo", scope: "issue", issue: n.closed } });
      assert.match(textOf(one), /named by selector 1: closed/);
    } finally {
      await reader.close();
      await fresh.close();
    }
  });

  it("`afk-mcp plan` with a typo in the repository's selectors: its precondition fails (the command exits 1)", async () => {
    const dir = await cloneRepo(forge);
    await pushBranch(dir, "main", ".github/afk.json", JSON.stringify({ selectors: [{ issues: [n.last, 99] }] }));
    const planHost = new FleetHost({ env, instance: "plannamed4" });
    try {
      const plan = await planHost.plan("afk/demo", {}, {});
      const named = plan.preconditions.find((p) => p.name === "named_issues");
      assert.deepEqual([named?.ok, plan.ready], [false, false]);
      assert.match(named!.message, /#99 \(no such issue in afk\/demo\)/);
      assert.deepEqual(
        plan.named.map((s) => [s.number, s.reason]),
        [[99, "absent"]],
      );
      assert.equal(plan.run!.command, null, "no engine, no command: the runtime is still said");
      assert.equal(plan.run!.runtime.name, "local");
    } finally {
      await planHost.close();
    }
  });
});

describe("what the sandbox lets through", () => {
  it("the writable paths, what it hides, and the hosts of the engines and the config", () => {
    const config = FleetConfigSchema.parse({ sandbox: { allow_hosts: ["registry.npmjs.org"], allow_write: ["/var/cache/x"] } });
    const reach = runtimeReach("sandbox", config, { HOME: "/home/u", AFK_STATE_DIR: "/state" }, { ANTHROPIC_BASE_URL: "http://127.0.0.1:4000" }, ["claude"]);
    assert.equal(reach.unconfined, false);
    assert.ok(reach.writable.includes("the issue's worktree") && reach.writable.includes("/var/cache/x"));
    assert.ok(reach.hidden.includes("/home/u") && reach.hidden.includes("/state"));
    assert.deepEqual(reach.hosts, ["api.anthropic.com", "127.0.0.1:4000", "registry.npmjs.org"]);
    assert.equal(runtimeReach("local", config, {}, {}, [null]).unconfined, true);
  });
});

describe("a start says it too, and a resize refuses a typo as a start does", () => {
  it("the start's answer lists the named issue that will not run; a resize naming an absent issue is refused", async () => {
    const started = await client.callTool({
      name: "project_start",
      arguments: { repo: "afk/demo", worker_command: "sleep 5", target: 1, selectors: [{ issues: [n.last, n.closed] }] },
    });
    try {
      assert.notEqual(started.isError, true, textOf(started));
      assert.match((started.structuredContent as { message: string }).message, new RegExp(`1 named issue\\(s\\) will not run now: #${n.closed} \\(closed\\)`));
      assert.deepEqual(
        (started.structuredContent as { plan: PlanOutput }).plan.named.map((s) => s.number),
        [n.closed],
      );
      const resized = await client.callTool({ name: "project_resize", arguments: { repo: "afk/demo", selectors: [{ issues: [n.first, 99] }] } });
      assert.equal(resized.isError, true, textOf(resized));
      assert.match(textOf(resized), /project_resize refused: selectors name #99 \(no such issue in afk\/demo\)/);
    } finally {
      await client.callTool({ name: "project_stop", arguments: { repo: "afk/demo", stop_workers: true } });
    }
  });
});
