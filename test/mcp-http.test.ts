// `afk-mcp --http`: the same server over Streamable HTTP, through the SDK's HTTP client: the
// bearer token is required, a foreign Host header is refused (DNS rebinding), loopback only.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { FleetHost } from "../server/host/host.js";
import { serveHttp, type HttpServing } from "../server/http.js";
import { api, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { waitFor } from "./support/wait.js";

let forge: TestForge;
let serving: HttpServing;
/** The host subscriptions held now: each MCP server the HTTP endpoint made holds one until it closes. */
let listening = 0;

/** The host, counting its live subscriptions. */
function counted(host: FleetHost): FleetHost {
  return new Proxy(host, {
    get(target, key) {
      if (key === "subscribe") {
        return (listener: Parameters<FleetHost["subscribe"]>[0]) => {
          listening += 1;
          const off = target.subscribe(listener);
          return () => {
            listening -= 1;
            off();
          };
        };
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

before(async () => {
  forge = await startTestForge();
  await api(forge, "POST", "/repos/afk/demo/labels", { name: "ready-for-agent", color: "0e8a16" });
  await api(forge, "POST", "/repos/afk/demo/issues", { title: "one", labels: ["ready-for-agent"] });
  const env = {
    GITHUB_API_URL: forge.apiUrl,
    GITHUB_TOKEN: forge.token,
    // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
    AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
    AFK_STATE_DIR: await tempDir("afk-http-state-"),
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
  };
  serving = await serveHttp(counted(new FleetHost({ env, instance: "httptest" })), 0);
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

  it("refuses a request without the token, or with a foreign Host header, and keeps nothing of a refused initialize", async () => {
    const before = listening;
    assert.equal(before, serving.sessionCount(), "one host subscription per open session");
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "0" } },
    };
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const noToken = await fetch(serving.url, { method: "POST", headers, body: JSON.stringify(init) });
    assert.equal(noToken.status, 401);
    // The challenge names the bearer token (and no OAuth resource metadata), so a client says what to send instead of trying OAuth.
    const challenge = noToken.headers.get("www-authenticate") ?? "";
    assert.match(
      challenge,
      /^Bearer realm="afk-mcp", error_description="afk-mcp takes the bearer token it printed at start \(or AFK_HTTP_TOKEN\): send Authorization: Bearer <token>; it uses no OAuth"$/,
    );
    assert.match(
      ((await noToken.json()) as { error: { message: string } }).error.message,
      /^missing bearer token: send the header "Authorization: Bearer <token>"/,
    );
    const wrong = await fetch(serving.url, { method: "POST", headers: { ...headers, authorization: "Bearer nope" }, body: JSON.stringify(init) });
    assert.equal(wrong.status, 401);
    assert.match(wrong.headers.get("www-authenticate") ?? "", /^Bearer realm="afk-mcp", error="invalid_token", error_description="/);
    // Where OAuth discovery and registration would look next: a 404 that says there is no OAuth, and what to send.
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server", "/register"]) {
      const probe = await fetch(new URL(path, serving.url), { method: path === "/register" ? "POST" : "GET" });
      assert.equal(probe.status, 404, path);
      assert.match(
        ((await probe.json()) as { error: { message: string } }).error.message,
        /^afk-mcp uses no OAuth: send the header "Authorization: Bearer <token>"/,
        path,
      );
    }
    // A page on evil.example resolving to 127.0.0.1 sends its own name as Host.
    const { request } = await import("node:http");
    const port = Number(new URL(serving.url).port);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port,
          path: "/mcp",
          method: "POST",
          headers: { ...headers, host: `evil.example:${port}`, authorization: `Bearer ${serving.token}` },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify(init));
    });
    assert.equal(status, 403);
    // An initialize the transport refuses (here: an Accept without text/event-stream) makes no session either.
    const notAcceptable = await fetch(serving.url, {
      method: "POST",
      headers: { ...headers, accept: "application/json", authorization: `Bearer ${serving.token}` },
      body: JSON.stringify(init),
    });
    assert.equal(notAcceptable.status, 406);
    // The refused initializes each made a server for the session they asked for; none is left listening.
    assert.equal(serving.sessionCount(), before);
    assert.equal(listening, before, "a refused initialize leaves no MCP server subscribed to the host");
  });
});

describe("MCP over Streamable HTTP: a dropped SSE stream resumes with Last-Event-ID", () => {
  it("a client that drops a call's response stream after its first event gets the result replayed on GET with Last-Event-ID", async () => {
    const auth = { authorization: `Bearer ${serving.token}` };
    const version = "2025-11-25";
    const post = (body: unknown, extra: Record<string, string> = {}, signal?: AbortSignal) =>
      fetch(serving.url, {
        method: "POST",
        signal,
        headers: { ...auth, ...extra, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify(body),
      });
    const init = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "resumer", version: "0" } },
    });
    assert.equal(init.status, 200);
    const sid = init.headers.get("mcp-session-id")!;
    await init.text();
    const session = { "mcp-session-id": sid, "mcp-protocol-version": version };
    assert.equal((await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session)).status, 202);
    // The call's response stream: read its first event (the priming one, with an id), then drop it.
    const drop = new AbortController();
    const call = await post({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "status", arguments: { repo: "afk/demo" } } }, session, drop.signal);
    assert.equal(call.headers.get("content-type"), "text/event-stream");
    const reader = call.body!.getReader();
    let head = "";
    while (!/\n\n/.test(head)) head += new TextDecoder().decode((await reader.read()).value);
    const primed = /^id: (\S+)$/m.exec(head)?.[1];
    assert.ok(primed, `a priming event with an id: ${JSON.stringify(head)}`);
    drop.abort();
    // Resumed: everything after the priming event, the call's result among it.
    // (409 until the server has seen the drop: the stream still counts as connected.)
    const resumed = await waitFor(
      "the resumed stream",
      async () => {
        const r = await fetch(serving.url, { headers: { ...auth, ...session, accept: "text/event-stream", "last-event-id": primed } });
        if (r.status === 409) await r.text();
        return r.status === 409 ? null : r;
      },
      { deadlineMs: 60_000, intervalMs: 100 },
    );
    assert.equal(resumed.status, 200);
    const replay = resumed.body!.getReader();
    let text = "";
    while (!/"id":2/.test(text)) {
      const { value, done } = await replay.read();
      assert.equal(done, false, `the stream ended before the result: ${text}`);
      text += new TextDecoder().decode(value);
    }
    await replay.cancel();
    const result = JSON.parse(/^data: (.*"id":2.*)$/m.exec(text)![1]!) as { result: { content: { text: string }[] } };
    assert.match(result.result.content[0]!.text, /dispatch \(1, in order\)/);
    // An id the session never sent is refused, not answered with an empty stream.
    const unknown = await fetch(serving.url, { headers: { ...auth, ...session, accept: "text/event-stream", "last-event-id": "nope_1" } });
    assert.equal(unknown.status, 400);
    await fetch(serving.url, { method: "DELETE", headers: { ...auth, ...session } });
  });
});

describe("MCP over Streamable HTTP: sessions left behind", () => {
  it("a session its client left without a DELETE is closed once idle; one listening on its stream lives on; an expired id gets 404", async (t) => {
    const env = {
      GITHUB_API_URL: forge.apiUrl,
      GITHUB_TOKEN: forge.token,
      // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
      AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
      AFK_STATE_DIR: await tempDir("afk-http-idle-"),
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
    };
    const host = new FleetHost({ env, instance: "httpidle" });
    const idle = await serveHttp(host, 0, { sessionIdleMs: 1_000 });
    t.after(async () => {
      await idle.close();
      await host.close();
    });
    const headers = { authorization: `Bearer ${idle.token}` };
    const left = new StreamableHTTPClientTransport(new URL(idle.url), { requestInit: { headers } });
    const leaving = new Client({ name: "leaves", version: "0" });
    await leaving.connect(left);
    const staying = new Client({ name: "stays", version: "0" });
    await staying.connect(new StreamableHTTPClientTransport(new URL(idle.url), { requestInit: { headers } }));
    assert.equal(idle.sessionCount(), 2);
    const goneId = left.sessionId!;
    // The client goes away without terminating its session (as a crashed client does).
    await leaving.close();
    // The staying client listens on its event stream all along, which keeps its session open.
    await waitFor("the abandoned session closed", () => idle.sessionCount() === 1, {
      deadlineMs: 60_000,
      intervalMs: 200,
      explain: () => `${idle.sessionCount()} session(s) open`,
    });
    // Well past the idle time, the listening session still answers.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    assert.equal(idle.sessionCount(), 1);
    await staying.ping();
    const answer = await fetch(idle.url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": goneId },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" }),
    });
    assert.equal(answer.status, 404);
    await staying.close();
  });
});
