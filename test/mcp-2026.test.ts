// MCP 2026-07-28 beside 2025-11-25: the built binary over raw stdio with no initialize, the
// HTTP endpoint with raw requests that carry no session, and the SDK's v2 client negotiating the
// new revision on both. Each request names its revision and client in `_meta`; the server answers
// server/discover, the same tools, and results that say `resultType`.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { FleetHost } from "../server/host/host.js";
import { serveHttp, type HttpServing } from "../server/http.js";
import { api, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { BIN } from "./support/paths.js";
import { rawSession, type RawSession } from "./support/raw-stdio.js";

const REPO = "afk/demo";
const MODERN = "2026-07-28";
const TOOLS = ["logs", "project_reset", "project_resize", "project_start", "project_stop", "status", "takeover"];

/** The per-request envelope of 2026-07-28: revision, client, capabilities. */
function envelope(client = "afk-2026-test"): Record<string, unknown> {
  return {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": { name: client, version: "0.0.0" },
    "io.modelcontextprotocol/clientCapabilities": {},
  };
}

interface Answer {
  result?: Record<string, unknown> & { resultType?: string; tools?: { name: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };
  error?: { code: number; message: string };
}

let forge: TestForge;
let env: Record<string, string>;

before(async () => {
  forge = await startTestForge();
  await api(forge, "POST", "/repos/afk/demo/labels", { name: "ready-for-agent", color: "0e8a16" });
  await api(forge, "POST", "/repos/afk/demo/issues", { title: "one", labels: ["ready-for-agent"] });
  env = {
    GITHUB_API_URL: forge.apiUrl,
    GITHUB_TOKEN: forge.token,
    AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
    AFK_STATE_DIR: await tempDir("afk-2026-state-"),
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
  };
});

after(async () => {
  await forge?.dispose();
});

describe("MCP 2026-07-28 over stdio (the built binary)", () => {
  let session: RawSession | undefined;
  after(() => session?.child.kill());

  it("answers server/discover with no initialize, then tools/list, a tool call and the launch prompt, each request carrying its own _meta", async () => {
    session = rawSession(env, [], { handshake: false });
    const ask = async (method: string, params: Record<string, unknown> = {}, client?: string): Promise<Answer> =>
      (await session!.answer(session!.send(method, { ...params, _meta: envelope(client) }))) as unknown as Answer;

    const discover = await ask("server/discover");
    assert.equal(discover.error, undefined, JSON.stringify(discover.error));
    const versions = discover.result!.supportedVersions as string[];
    // The stateless revisions it serves (2025-11-25 is reached by initialize, not discovered).
    assert.ok(versions.includes(MODERN), JSON.stringify(versions));
    assert.equal(discover.result!.resultType, "complete");
    assert.ok((discover.result!.capabilities as Record<string, unknown>).tools, JSON.stringify(discover.result));

    const list = await ask("tools/list");
    assert.deepEqual(list.result!.tools!.map((t) => t.name).sort(), TOOLS);
    assert.equal(list.result!.resultType, "complete");

    const status = await ask("tools/call", { name: "status", arguments: { repo: REPO } });
    assert.notEqual(status.result!.isError, true, JSON.stringify(status.result).slice(0, 600));
    assert.equal(status.result!.resultType, "complete");
    assert.ok(status.result!.structuredContent, "structured content");

    // No initialize named the client: the launch prompt reads it from each request's _meta.
    for (const [client, command] of [
      ["codex-mcp-client", /codex exec --json/],
      ["claude-code", /claude -p/],
    ] as const) {
      const prompt = await ask("prompts/get", { name: "launch", arguments: { repo: REPO } }, client);
      const text = JSON.stringify(prompt.result);
      assert.match(text, command, client);
    }
    // Nothing of the 2025 handshake was needed, and nothing but JSON-RPC reached stdout.
    assert.ok(!session.notifications().some((n) => n.method === "notifications/message"));
  });

  it("the SDK's v2 client negotiates 2026-07-28 (mode auto) and calls a tool; a 2025 client on the same binary still gets the handshake", async () => {
    const modern = new Client({ name: "afk-v2-client", version: "0.0.0" }, { versionNegotiation: { mode: "auto" } });
    await modern.connect(new StdioClientTransport({ command: process.execPath, args: [BIN], env, stderr: "pipe" }));
    try {
      assert.equal(modern.getProtocolEra(), "modern");
      const { tools } = await modern.listTools();
      assert.equal(tools.length, TOOLS.length);
      const status = await modern.callTool({ name: "status", arguments: { repo: REPO } });
      assert.notEqual(status.isError, true, JSON.stringify(status.content).slice(0, 600));
    } finally {
      await modern.close();
    }
    const legacy = new Client({ name: "afk-v2-client-legacy", version: "0.0.0" });
    await legacy.connect(new StdioClientTransport({ command: process.execPath, args: [BIN], env, stderr: "pipe" }));
    try {
      assert.equal(legacy.getProtocolEra(), "legacy");
      assert.equal((await legacy.listTools()).tools.length, TOOLS.length);
    } finally {
      await legacy.close();
    }
  });
});

describe("MCP 2026-07-28 over Streamable HTTP", () => {
  let serving: HttpServing;
  before(async () => {
    serving = await serveHttp(new FleetHost({ env, instance: "http2026" }), 0);
  });
  after(async () => {
    await serving?.close();
  });

  const post = async (method: string, params: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const response = await fetch(serving.url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${serving.token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
        ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: envelope() } }),
    });
    const text = await response.text();
    // A JSON body, or one SSE event whose data is the answer.
    const data = text.startsWith("{") ? text : (text.split("\n").find((l) => l.startsWith("data: ")) ?? "data: null").slice(6);
    return { response, answer: JSON.parse(data) as Answer };
  };

  it("server/discover, tools/list and a tool call as independent requests: no session id, no session kept", async () => {
    const discover = await post("server/discover", {});
    assert.equal(discover.response.status, 200);
    assert.equal(discover.response.headers.get("mcp-session-id"), null);
    assert.ok((discover.answer.result!.supportedVersions as string[]).includes(MODERN));

    const list = await post("tools/list", {});
    assert.deepEqual(list.answer.result!.tools!.map((t) => t.name).sort(), TOOLS);

    const status = await post("tools/call", { name: "status", arguments: { repo: REPO } });
    assert.equal(status.response.headers.get("mcp-session-id"), null);
    assert.notEqual(status.answer.result!.isError, true, JSON.stringify(status.answer).slice(0, 600));
    assert.equal(status.answer.result!.resultType, "complete");
    assert.equal(serving.sessionCount(), 0, "a 2026 request opens no session");
  });

  it("refuses a request whose Mcp-Name header says another tool than its body, and one without the token", async () => {
    const mismatch = await post("tools/call", { name: "status", arguments: { repo: REPO } }, { "mcp-name": "logs" });
    assert.equal(mismatch.response.status, 400);
    assert.equal(mismatch.answer.error?.code, -32020, JSON.stringify(mismatch.answer));
    const anonymous = await fetch(serving.url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    assert.equal(anonymous.status, 401);
  });

  it("the SDK's v2 client pinned to 2026-07-28 calls a tool; a 2025 client on the same endpoint gets its session", async () => {
    const headers = { authorization: `Bearer ${serving.token}` };
    const modern = new Client({ name: "afk-v2-http", version: "0.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } });
    await modern.connect(new StreamableHTTPClientTransport(new URL(serving.url), { requestInit: { headers } }));
    try {
      assert.equal(modern.getProtocolEra(), "modern");
      const status = await modern.callTool({ name: "status", arguments: { repo: REPO } });
      assert.notEqual(status.isError, true, JSON.stringify(status.content).slice(0, 600));
      assert.equal(serving.sessionCount(), 0);
    } finally {
      await modern.close();
    }
    const legacy = new Client({ name: "afk-v2-http-legacy", version: "0.0.0" });
    await legacy.connect(new StreamableHTTPClientTransport(new URL(serving.url), { requestInit: { headers } }));
    try {
      assert.equal(legacy.getProtocolEra(), "legacy");
      assert.equal(serving.sessionCount(), 1);
    } finally {
      await legacy.close();
    }
  });
});
