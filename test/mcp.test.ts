// The MCP server through a real MCP Client: in memory (createServer around a FleetHost) and
// over stdio against the built binary. Both talk to the local forge over real HTTP.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { createServer } from "../server/server.js";
import { FleetHost } from "../server/host/host.js";
import { GitRefStore } from "../server/gh/gitrefs.js";
import { Lease } from "../server/gh/lease.js";
import { api, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { BIN, ROOT } from "./support/paths.js";
import { Ajv } from "ajv";
import { toJsonSchemaCompat } from "@modelcontextprotocol/sdk/server/zod-json-schema-compat.js";
import { TOOLS } from "../server/server.js";
import { fleetConfigJsonSchema } from "../schemas/config.js";

const SNAPSHOTS = join(ROOT, "test", "__toolsnaps__");

let forge: TestForge;
let env: Record<string, string>;

before(async () => {
  forge = await startTestForge({ users: ["alice"] });
  await api(forge, "POST", "/repos/afk/demo/labels", { name: "ready-for-agent", color: "0e8a16" });
  for (const title of ["first", "second", "third"]) {
    await api(forge, "POST", "/repos/afk/demo/issues", { title, labels: ["ready-for-agent"] });
  }
  await api(forge, "POST", "/repos/afk/demo/issues", { title: "an epic", labels: ["ready-for-agent", "epic"] });
  env = {
    GITHUB_API_URL: forge.apiUrl,
    GITHUB_TOKEN: forge.token,
    // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
    AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
    AFK_STATE_DIR: await tempDir("afk-state-"),
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
  };
});

after(async () => {
  await forge.dispose();
});

/** The built binary over stdio, as a client runs it (no daemon starts for these calls). */
async function stdioClient(...args: string[]): Promise<Client> {
  assert.ok(existsSync(BIN), `build first: ${BIN} is missing`);
  const client = new Client({ name: "afk-stdio-test", version: "0.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, ...args], env, stderr: "pipe" }));
  return client;
}

async function inMemoryClient(): Promise<Client> {
  const host = new FleetHost({ env, instance: "memtest" });
  const server = createServer(host);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "afk-test", version: "0.0.0" });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return client;
}

describe("the MCP server through a real client (in memory, or over stdio where the test says so)", () => {
  it("lists each tool exactly as its committed snapshot says (description included)", async () => {
    const client = await inMemoryClient();
    const { tools } = await client.listTools();
    const update = process.env.UPDATE_TOOLSNAPS === "1";
    const problems: string[] = [];
    for (const t of tools) {
      const file = join(SNAPSHOTS, `${t.name}.snap`);
      const snapshot =
        JSON.stringify(
          {
            name: t.name,
            title: t.title,
            description: t.description,
            annotations: t.annotations,
            inputSchema: t.inputSchema,
            outputSchema: t.outputSchema,
            // The board app's link (status): listed only where a tool has one.
            ...(t._meta ? { _meta: t._meta } : {}),
          },
          null,
          2,
        ) + "\n";
      if (update) await writeFile(file, snapshot);
      // A missing snapshot fails like a changed one: it is written only on request, never silently.
      else if (!existsSync(file)) problems.push(`${t.name}: no snapshot at test/__toolsnaps__/${t.name}.snap`);
      else if ((await readFile(file, "utf8")) !== snapshot) problems.push(`${t.name}: tools/list differs from test/__toolsnaps__/${t.name}.snap`);
    }
    const stale = (await readdir(SNAPSHOTS)).filter((f) => !tools.some((t) => `${t.name}.snap` === f));
    for (const f of stale) problems.push(`${f}: a snapshot for no tool (delete it)`);
    assert.deepEqual(problems, [], "review the diff, then refresh with UPDATE_TOOLSNAPS=1 node --test dist/test/mcp.test.js (after npm run build)");
    await client.close();
  });

  it("derives honest annotations: status is read-only, takeover destructive (over stdio)", async () => {
    const client = await stdioClient();
    const { tools } = await client.listTools();
    const status = tools.find((t) => t.name === "status");
    const takeover = tools.find((t) => t.name === "takeover");
    assert.equal(status?.annotations?.readOnlyHint, true);
    assert.equal(status?.annotations?.destructiveHint, false);
    assert.equal(takeover?.annotations?.readOnlyHint, false);
    assert.equal(takeover?.annotations?.destructiveHint, true);
    await client.close();
  });

  it("derives hints from what each tool does: logs reads only local files, project_start can land on the base (over stdio)", async () => {
    const client = await stdioClient();
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    assert.equal(byName.get("logs")?.annotations?.openWorldHint, false);
    assert.equal(byName.get("status")?.annotations?.openWorldHint, true);
    assert.equal(byName.get("project_start")?.annotations?.destructiveHint, true);
    await client.close();
  });

  it("refuses what it would otherwise drop or keep uselessly: unknown keys (named, with the nearest), blank strings, a selector picking everything (over stdio)", async () => {
    const client = await stdioClient();
    const textOf = (r: Awaited<ReturnType<Client["callTool"]>>) => (r.content as { text: string }[])[0]!.text;
    const typo = await client.callTool({ name: "project_start", arguments: { repo: "afk/demo", worker_command: "true", autoMerge: true } });
    assert.equal(typo.isError, true);
    assert.match(textOf(typo), /unknown key "autoMerge" \(did you mean "auto_merge"\?\)/);
    const blank = await client.callTool({ name: "project_start", arguments: { repo: "afk/demo", worker_command: "   " } });
    assert.equal(blank.isError, true);
    assert.match(textOf(blank), /must not be blank/);
    const everything = await client.callTool({ name: "project_resize", arguments: { repo: "afk/demo", selectors: [{ label: null }] } });
    assert.equal(everything.isError, true);
    assert.match(textOf(everything), /would pick every open issue/);
    const nested = await client.callTool({ name: "project_resize", arguments: { repo: "afk/demo", selectors: [{ lable: "x" }] } });
    assert.equal(nested.isError, true);
    assert.match(textOf(nested), /unknown key "lable" \(did you mean "label"\?\)/);
    const badConfig = await client.callTool({ name: "project_start", arguments: { repo: "afk/demo", dry_run: true, config: { concurency: 2 } } });
    assert.equal(badConfig.isError, true);
    assert.match(textOf(badConfig), /concurency.*did you mean "concurrency"/);
    const { tools } = await client.listTools();
    const start = tools.find((t) => t.name === "project_start")!;
    assert.equal(start.inputSchema.additionalProperties, false);
    const config = (start.inputSchema.properties as Record<string, { properties?: Record<string, unknown>; additionalProperties?: unknown }>).config!;
    assert.equal(config.additionalProperties, false);
    assert.ok(config.properties?.concurrency, "the config argument advertises the config's keys");
    // The config argument is the real config schema: every key path of it, and no other.
    assert.deepEqual(
      keyPaths(config as SchemaNode),
      keyPaths(fleetConfigJsonSchema() as SchemaNode).filter((k) => k !== "$schema"),
    );
    // additionalProperties: false at every level a client sends, in every tool.
    for (const t of tools) assert.deepEqual(looseObjects(t.inputSchema), [], `${t.name}: objects that accept unknown keys`);
    await client.close();
  });

  it("registers no mutating tool in read-only mode (over stdio)", async () => {
    const client = await stdioClient("--read-only");
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ["logs", "status"]);
    await client.close();
  });

  it("status returns the dry-run plan as structured content: a summary by default, every row with detail", async () => {
    const client = await inMemoryClient();
    type Plan = {
      dispatch: { number: number }[];
      excluded: { number: number; reason: string; text: string }[];
      excluded_by_reason: Record<string, number>;
      ready: boolean;
    };
    const result = await client.callTool({ name: "status", arguments: { repo: "afk/demo", scope: "project" } });
    assert.notEqual(result.isError, true, JSON.stringify(result.content));
    const plan = (result.structuredContent as { plan: Plan }).plan;
    assert.deepEqual(
      plan.dispatch.map((d) => d.number),
      [1, 2, 3],
    );
    assert.deepEqual(plan.excluded, []);
    assert.deepEqual(plan.excluded_by_reason, { epic: 1 });
    assert.equal(plan.ready, true);
    const text = (result.content as { type: string; text: string }[])[0]!.text;
    assert.match(text, /dispatch \(3, in order\)/);
    assert.match(text, /excluded \(1: 1 epic\)/);
    assert.match(text, /not running on this host/);
    assert.match(text, /plan: read from GitHub now/);
    const detailed = await client.callTool({ name: "status", arguments: { repo: "afk/demo", detail: true } });
    const rows = (detailed.structuredContent as { plan: Plan }).plan.excluded;
    assert.deepEqual(rows, [{ number: 4, reason: "epic", text: rows[0]!.text }]);
    await client.close();
  });

  it("status for one issue says where it stands", async () => {
    const client = await inMemoryClient();
    const result = await client.callTool({ name: "status", arguments: { repo: "afk/demo", scope: "issue", issue: 4 } });
    const issue = (result.structuredContent as { issue: { where: string; detail: string } }).issue;
    assert.equal(issue.where, "excluded");
    assert.match(issue.detail, /epic/);
    await client.close();
  });

  it("answers bad input with an error result naming the problem, not a crash (over stdio)", async () => {
    const client = await stdioClient();
    const badSlug = await client.callTool({ name: "status", arguments: { repo: "not a slug" } });
    assert.equal(badSlug.isError, true);
    assert.match((badSlug.content as { text: string }[])[0]!.text, /owner\/name/);
    const missingIssue = await client.callTool({ name: "status", arguments: { repo: "afk/demo", scope: "issue" } });
    assert.equal(missingIssue.isError, true);
    assert.match((missingIssue.content as { text: string }[])[0]!.text, /needs `issue`/);
    const badInstance = await client.callTool({ name: "takeover", arguments: { repo: "afk/demo", instance: "-rm -rf" } });
    assert.equal(badInstance.isError, true);
    await client.close();
  });

  it("takeover lists instances and refuses a fresh lease without confirm", async () => {
    // A peer (instance "peer1", another host) claims #2 and beats its heartbeat.
    const peerRefs = new GitRefStore({ controlDir: join(await tempDir("afk-peer-"), "control.git"), remoteUrl: forge.gitUrl, token: forge.token });
    const peer = new Lease(peerRefs, { namespace: "refs/afk", ttlSeconds: 4500, heartbeatSeconds: 300 }, "peer1", "peer-host");
    assert.equal((await peer.claim(2)).won, true);
    assert.equal(await peer.heartbeat(), true);

    const client = await inMemoryClient();
    const listed = await client.callTool({ name: "takeover", arguments: { repo: "afk/demo", list: true } });
    const rows = (listed.structuredContent as { instances: { instance: string; claims: number[]; fresh: boolean }[] }).instances;
    const row = rows.find((r) => r.instance === "peer1");
    assert.deepEqual(row?.claims, [2]);
    assert.equal(row?.fresh, true);

    const refused = await client.callTool({ name: "takeover", arguments: { repo: "afk/demo", instance: "peer1" } });
    assert.equal((refused.structuredContent as { action: string }).action, "confirm");
    assert.match((refused.content as { text: string }[])[0]!.text, /looks alive/);

    const taken = await client.callTool({ name: "takeover", arguments: { repo: "afk/demo", instance: "peer1", confirm: true } });
    const out = taken.structuredContent as { action: string; taken: { issue: number }[] };
    assert.equal(out.action, "taken");
    assert.deepEqual(
      out.taken.map((t) => t.issue),
      [2],
    );
    const status = await client.callTool({ name: "status", arguments: { repo: "afk/demo", scope: "issue", issue: 2 } });
    assert.equal((status.structuredContent as { issue: { where: string } }).issue.where, "mine");
    await client.close();
  });
});

describe("MCP server over stdio (the built binary)", () => {
  it("serves tools/list and status, writing nothing but JSON-RPC to stdout", async () => {
    assert.ok(existsSync(BIN), `build first: ${BIN} is missing`);
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN], env, stderr: "pipe" });
    const client = new Client({ name: "afk-stdio-test", version: "0.0.0" });
    await client.connect(transport);
    // Always close: a child left running would keep the test runner waiting forever.
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ["logs", "project_reset", "project_resize", "project_start", "project_stop", "status", "takeover"]);
      const result = await client.callTool({ name: "status", arguments: { repo: "afk/demo" } });
      assert.notEqual(result.isError, true, JSON.stringify(result.content));
      const plan = (result.structuredContent as { plan: { repo: string } }).plan;
      assert.equal(plan.repo, "afk/demo");
      assert.equal((result.structuredContent as { daemon: unknown }).daemon, null, "status reads GitHub itself: no daemon was started for it");
    } finally {
      await client.close();
    }
  });
  it("tools/list is the SDK's own rendering less the implicit integer bounds, one definition for a repeat, and plan-less change answers; real results validate against it", async () => {
    const client = await stdioClient();
    try {
      const { tools } = await client.listTools();
      const bytes = Buffer.byteLength(JSON.stringify({ tools }));
      // 59,862 bytes before the cut (docs/mcp-conformance.md); a guard against regrowth. 39,836 before
      // engines (issue 24), which added the config's engines, prices, budget and routing to
      // project_start's config argument (~1.7 kB), status.spend (~0.9 kB), and the engine of the
      // registration and of each worker row: 43,563 after; with run limits (once, max_issues),
      // selector blockers and epics.close_when_done (issue 26): 44,070; with a selector's engine and
      // model (issue 24, routing per selector): 44,647; with the runtime and sandbox keys in project_start's config (issue 25): 44,944;
      // with status.eta (issue 26, the ETA of running issues and of the queue): 45,778; with the
      // actions runtime's keys in project_start's config (issue 25): 46,134; with what will run (the
      // start's plan.run: engines, runtime and what it lets through), each dispatch's route and the
      // named issues that will not run (issue 35; status's plan omits run): 48,878; with each
      // worker's stage, last line and quiet time, the registrations' overview, and fix_forward
      // (issue 35): 50,251; with status's link to the board app (issue 38, _meta.ui.resourceUri): 50,341;
      // with gate.rerun_failed (issue 35): 50,399 (the budget is spent: trim before adding).
      assert.ok(bytes < 50_400, `tools/list is ${bytes} bytes`);
      const ajv = new Ajv({ strict: false });
      for (const listed of tools) {
        const tool = TOOLS.find((t) => t.name === listed.name)!;
        assert.doesNotMatch(JSON.stringify(listed), /9007199254740991/, `${listed.name}: an implicit integer bound is listed`);
        // What the SDK would have listed, less what was dropped on purpose: nothing else differs.
        for (const [io, mine, zod] of [
          ["input", listed.inputSchema, tool.listing.input],
          ["output", listed.outputSchema, tool.listing.output],
        ] as const) {
          const sdk = toJsonSchemaCompat(zod, { strictUnions: true, pipeStrategy: io }) as Record<string, unknown>;
          assert.deepEqual(inlined(mine as Record<string, unknown>), inlined(withoutSafeBounds(sdk)), `${listed.name} ${io}`);
        }
        ajv.compile(listed.inputSchema);
      }
      const validate = (name: string) => ajv.compile(tools.find((t) => t.name === name)!.outputSchema!);
      const results: [string, Record<string, unknown>][] = [
        ["status", { repo: "afk/demo" }],
        ["status", { repo: "afk/demo", detail: true }],
        ["status", { repo: "afk/demo", scope: "issue", issue: 1 }],
        ["logs", { repo: "afk/demo", lane: "supervisor" }],
        ["project_start", { repo: "afk/demo", dry_run: true }],
      ];
      for (const [name, args] of results) {
        const result = await client.callTool({ name, arguments: args });
        assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`);
        const check = validate(name);
        assert.ok(check(result.structuredContent), `${name} ${JSON.stringify(args)}: ${ajv.errorsText(check.errors)}`);
      }
      const plan = (tools.find((t) => t.name === "project_stop")!.outputSchema!.properties as Record<string, unknown>).plan;
      assert.deepEqual(plan, { type: "null", description: "Always null: status {repo} shows the plan." });
    } finally {
      await client.close();
    }
  });
});

type SchemaNode = { properties?: Record<string, SchemaNode>; items?: SchemaNode; anyOf?: SchemaNode[]; additionalProperties?: unknown; type?: unknown };

/** Every key path of an object schema ("gate.local_command", "selectors[].label"), through lists and nullable branches. */
function keyPaths(node: SchemaNode, prefix = ""): string[] {
  const out: string[] = [];
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    const at = prefix ? `${prefix}.${key}` : key;
    out.push(at, ...keyPaths(child, at));
  }
  if (node.items) out.push(...keyPaths(node.items, `${prefix}[]`));
  for (const branch of node.anyOf ?? []) out.push(...keyPaths(branch, prefix));
  return [...new Set(out)].sort();
}

/** Where an object schema, anywhere in `schema` (definitions included), does not refuse unknown keys. */
function looseObjects(schema: unknown, at = "(root)"): string[] {
  if (schema === null || typeof schema !== "object") return [];
  if (Array.isArray(schema)) return schema.flatMap((s, i) => looseObjects(s, `${at}[${i}]`));
  const node = schema as SchemaNode & Record<string, unknown>;
  // A map of entries the user names (config `engines`, `prices`: propertyNames bounds the keys,
  // additionalProperties is each entry's strict schema) has no fixed key a typo could miss.
  const keyedMap = node.properties === undefined && typeof node.propertyNames === "object" && typeof node.additionalProperties === "object";
  const own = (node.type === "object" || node.properties) && node.additionalProperties !== false && !keyedMap ? [at] : [];
  return [...own, ...Object.entries(node).flatMap(([k, v]) => looseObjects(v, `${at}.${k}`))];
}

/** A listed schema with its definitions put back where they are referenced. */
function inlined(schema: Record<string, unknown>): Record<string, unknown> {
  const defs = (schema.definitions ?? {}) as Record<string, unknown>;
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== "object") return node;
    const ref = (node as { $ref?: string }).$ref;
    if (ref?.startsWith("#/definitions/")) return walk(defs[ref.slice("#/definitions/".length)]);
    return Object.fromEntries(
      Object.entries(node)
        .filter(([k]) => k !== "definitions")
        .map(([k, v]) => [k, walk(v)]),
    );
  };
  return walk(schema) as Record<string, unknown>;
}

/**
 * The SDK's rendering without the ±(2^53-1) bounds zod writes on every unbounded integer. An
 * integer-or-null left with nothing but its types is then written as one type list, as zod
 * writes a string-or-null: the same schema.
 */
function withoutSafeBounds(schema: Record<string, unknown>): Record<string, unknown> {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== "object") return node;
    const out = Object.fromEntries(
      Object.entries(node)
        .filter(([k, v]) => !((k === "maximum" && v === Number.MAX_SAFE_INTEGER) || (k === "minimum" && v === -Number.MAX_SAFE_INTEGER)))
        .map(([k, v]) => [k, walk(v)]),
    );
    const anyOf = out.anyOf as Record<string, unknown>[] | undefined;
    if (anyOf?.length === 2 && anyOf.every((a) => Object.keys(a).length === 1 && typeof a.type === "string") && anyOf[1]!.type === "null") {
      delete out.anyOf;
      return { type: anyOf.map((a) => a.type), ...out };
    }
    return out;
  };
  return walk(schema) as Record<string, unknown>;
}
