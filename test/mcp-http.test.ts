// `afk-mcp --http`: the same server over Streamable HTTP, through the SDK's HTTP client: the
// bearer token is required, a foreign Host header is refused (DNS rebinding), loopback only.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { FleetHost } from "../server/host/host.js";
import { serveHttp, type HttpServing } from "../server/http.js";
import { api, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";

let forge: TestForge;
let serving: HttpServing;

before(async () => {
  forge = await startTestForge();
  await api(forge, "POST", "/repos/afk/demo/labels", { name: "ready-for-agent", color: "0e8a16" });
  await api(forge, "POST", "/repos/afk/demo/issues", { title: "one", labels: ["ready-for-agent"] });
  const env = { GITHUB_API_URL: forge.apiUrl, GITHUB_TOKEN: forge.token, AFK_STATE_DIR: await tempDir("afk-http-state-"), PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" };
  serving = await serveHttp(new FleetHost({ env, instance: "httptest" }), 0);
});

after(async () => {
  await serving?.close();
  await forge?.dispose();
});

describe("MCP over Streamable HTTP", () => {
  it("serves the tools and resources to a client with the bearer token, on 127.0.0.1", async () => {
    assert.match(serving.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = new Client({ name: "afk-http-test", version: "0.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(serving.url), { requestInit: { headers: { authorization: `Bearer ${serving.token}` } } }));
    const { tools } = await client.listTools();
    assert.equal(tools.length, 7);
    const status = await client.callTool({ name: "status", arguments: { repo: "afk/demo" } });
    assert.notEqual(status.isError, true, JSON.stringify(status.content));
    assert.match((status.content as { text: string }[])[0]!.text, /dispatch \(1, in order\)/);
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.ok(resourceTemplates.some((t) => t.uriTemplate === "afk://{owner}/{repo}/board"));
    await client.close();
  });

  it("refuses a request without the token, or with a foreign Host header", async () => {
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "0" } } };
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const noToken = await fetch(serving.url, { method: "POST", headers, body: JSON.stringify(init) });
    assert.equal(noToken.status, 401);
    const wrong = await fetch(serving.url, { method: "POST", headers: { ...headers, authorization: "Bearer nope" }, body: JSON.stringify(init) });
    assert.equal(wrong.status, 401);
    // A page on evil.example resolving to 127.0.0.1 sends its own name as Host.
    const { request } = await import("node:http");
    const port = Number(new URL(serving.url).port);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, path: "/mcp", method: "POST", headers: { ...headers, host: `evil.example:${port}`, authorization: `Bearer ${serving.token}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end(JSON.stringify(init));
    });
    assert.equal(status, 403);
  });
});
