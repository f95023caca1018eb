// `afk-mcp --http 0`, the built binary as a user starts it (with the daemon it starts): the
// address and the bearer token are printed on stderr, and two HTTP sessions each get the log
// notifications at the level they set (the SDK keeps a level per transport session, so a
// message sent without the session's id would ignore it), plus board updates and a status.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema, type LoggingMessageNotification } from "@modelcontextprotocol/sdk/types.js";
import { BASE_CONFIG, daemonWorld, teardown, type DaemonWorld } from "./support/daemon-fixtures.js";
import { BIN } from "./support/paths.js";
import { waitFor } from "./support/wait.js";

let world: DaemonWorld;
let server: ChildProcess;
let url: string;
let token: string;
let stderr = "";
const clients: Client[] = [];

before(async () => {
  assert.ok(existsSync(BIN), `build first: ${BIN} is missing`);
  world = await daemonWorld(["one", "two", "three"], "await");
  server = spawn(process.execPath, [BIN, "--http", "0"], { env: world.env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  server.stdout!.on("data", (d: Buffer) => void (stdout += d.toString()));
  server.stderr!.on("data", (d: Buffer) => void (stderr += d.toString()));
  const said = await waitFor(
    "the address and the token on stderr",
    () => {
      const at = /MCP over Streamable HTTP at (http:\/\/127\.0\.0\.1:\d+\/mcp) \(127\.0\.0\.1 only\)/.exec(stderr);
      const bearer = /bearer token: (\S+)/.exec(stderr);
      return at && bearer ? { url: at[1]!, token: bearer[1]! } : null;
    },
    { deadlineMs: 60_000, explain: () => `stderr so far: ${stderr}` },
  );
  ({ url, token } = said);
  assert.equal(stdout, "", "nothing on stdout: the address and the token go to stderr");
});

after(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server.once("exit", resolve));
    server.kill("SIGTERM");
    await exited;
  }
  if (world) await teardown(world);
});

async function connect(name: string): Promise<{ client: Client; logs: LoggingMessageNotification["params"][]; updated: string[] }> {
  const client = new Client({ name, version: "0.0.0" });
  const logs: LoggingMessageNotification["params"][] = [];
  const updated: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return { client, logs, updated };
}

describe("afk-mcp --http, the binary", () => {
  it("each HTTP session gets the supervisor's log messages at the level it set, and board updates", async () => {
    const quiet = await connect("errors-only");
    const chatty = await connect("warnings-too");
    await quiet.client.setLoggingLevel("error");
    await chatty.client.setLoggingLevel("warning");
    const REPO = world.forge.repo;
    await quiet.client.subscribeResource({ uri: `afk://${REPO}/board` });
    // Workers that die at once trip the breaker (an error); the sweep that follows is a warning.
    const started = await quiet.client.callTool({
      name: "project_start",
      arguments: {
        repo: REPO,
        worker_command: "exit 3",
        target: 3,
        config: { ...BASE_CONFIG, circuit: { k: 3, fast_death_seconds: 600, window_seconds: 3600 } },
      },
    });
    assert.notEqual(started.isError, true, JSON.stringify(started.content));
    const deadline = { deadlineMs: 180_000, intervalMs: 100 };
    for (const s of [quiet, chatty]) {
      const error = await waitFor("the breaker's error as a log message", () => s.logs.find((l) => /circuit breaker tripped/.test(String(l.data))), deadline);
      assert.equal(error.level, "error");
      assert.equal(error.logger, `afk/${REPO}/supervisor`);
    }
    const warning = await waitFor("a warning for the session that asked for warnings", () => chatty.logs.find((l) => l.level === "warning"), deadline);
    assert.equal(warning.logger, `afk/${REPO}/supervisor`);
    await waitFor("a board update", () => quiet.updated.includes(`afk://${REPO}/board`), deadline);
    // Same events, same order of delivery per session: the errors-only session got none of the warnings.
    assert.deepEqual(
      quiet.logs.filter((l) => l.level !== "error"),
      [],
      "logging/setLevel error on this session: no warnings pushed to it",
    );
    const status = await chatty.client.callTool({ name: "status", arguments: { repo: REPO } });
    const births = (status.structuredContent as { births: { paused: boolean; reason: string } }).births;
    assert.equal(births.paused, true);
    assert.ok((status.content as { text: string }[])[0]!.text.includes(`births: PAUSED: ${births.reason}`));
    const stopped = await chatty.client.callTool({ name: "project_stop", arguments: { repo: REPO, stop_workers: true } });
    assert.notEqual(stopped.isError, true, JSON.stringify(stopped.content));
  });
});
