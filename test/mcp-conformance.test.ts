// The official MCP conformance suite (@modelcontextprotocol/conformance, a devDependency) against
// the built `afk-mcp --http`, on the Node 22 it needs (the `node` devDependency; npm scripts put
// it first on PATH, but it is named here so the test does not depend on how it was started).
// The suite cannot send a bearer token, so a loopback proxy in this file adds it; it rewrites the
// Host header to the server's own only when the header names the proxy, so the suite's foreign
// Host (the DNS-rebinding scenario) reaches the server unchanged. The outcome must be exactly the
// one below: every scenario afk-mcp can pass passes, and each that fails needs a fixture of the
// reference server ("everything") that afk-mcp does not and should not have. A scenario the
// suite adds in an update is in neither list and fails the test until it is sorted into one.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { daemonWorld, teardown, type DaemonWorld } from "./support/daemon-fixtures.js";
import { BIN, ROOT } from "./support/paths.js";
import { waitFor } from "./support/wait.js";

const NODE22 = join(ROOT, "node_modules", "node", "bin", "node");
const SUITE = join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");

/** Scenarios that must pass, and what each exercises of afk-mcp's own. */
const MUST_PASS: Record<string, string> = {
  "server-initialize": "initialize and its capabilities",
  ping: "ping",
  "tools-list": "tools/list with input and output schemas",
  "logging-set-level": "logging/setLevel (the suite checks only the reply; levels are tested in mcp-push and mcp-http-bin)",
  "resources-list": "resources/list (the daemon lane, each fleet's board)",
  "resources-subscribe": "resources/subscribe (to the suite's URI; board updates are tested in mcp-push)",
  "resources-unsubscribe": "resources/unsubscribe",
  "prompts-list": "prompts/list",
  "server-sse-multiple-streams": "several SSE streams on one session",
  "dns-rebinding-protection": "a foreign Host gets 403, a loopback one is served",
  "server-session-lifecycle": "a 2025 session: initialize gives its id, DELETE ends it",
};

/** Scenarios that need the reference server's fixtures, and which. */
const NEEDS_FIXTURE: Record<string, string> = {
  "completion-complete": "the fixture prompt test_prompt_with_arguments (afk-mcp completes repo and lane: mcp-push)",
  // SDK v2 answers a call to an unknown tool with the protocol error -32602, where 1.x gave an
  // isError result these two took for a pass without exercising afk-mcp's tools.
  "tools-call-simple-text": "the fixture tool test_simple_text",
  "tools-call-error": "the fixture tool test_error_handling",
  "tools-call-image": "the fixture tool test_image_content",
  "tools-call-audio": "the fixture tool test_audio_content",
  "tools-call-embedded-resource": "the fixture tool test_embedded_resource",
  "tools-call-mixed-content": "the fixture tool test_multiple_content_types",
  "tools-call-with-logging": "the fixture tool test_tool_with_logging",
  "tools-call-with-progress": "the fixture tool test_tool_with_progress (afk-mcp's own progress: mcp-push)",
  "tools-call-sampling": "the fixture tool test_sampling",
  "tools-call-elicitation": "the fixture tool test_elicitation",
  "elicitation-sep1034-defaults": "the fixture tool test_elicitation_sep1034_defaults",
  "elicitation-sep1330-enums": "the fixture tool test_elicitation_sep1330_enums",
  "resources-read-text": "the fixture resource test://static-text",
  "resources-read-binary": "the fixture resource test://static-binary",
  "resources-templates-read": "the fixture template test://template/{id}/data",
  "prompts-get-simple": "the fixture prompt test_simple_prompt",
  "prompts-get-with-args": "the fixture prompt test_prompt_with_arguments",
  "prompts-get-embedded-resource": "the fixture prompt test_prompt_with_embedded_resource",
  "prompts-get-with-image": "the fixture prompt test_prompt_with_image",
};

/**
 * The scenarios of `--requirements 2026-07-28` (the stateless revision, served without a session
 * by the SDK's createMcpHandler), sorted the same way.
 */
const MUST_PASS_2026: Record<string, string> = {
  caching: "ttlMs and cacheScope on list results and server/discover",
  "dns-rebinding-protection": "a foreign Host gets 403, a loopback one is served",
  "http-header-validation": "Mcp-Method / Mcp-Name headers checked against the body (-32020)",
  "input-required-result-unsupported-methods": "no input_required result where the revision allows none",
  "input-required-result-validate-input": "input responses validated",
  "prompts-list": "prompts/list",
  "resources-list": "resources/list",
  "sep-2164-resource-not-found": "reading an unknown resource is an error",
  "server-sse-multiple-streams": "several SSE streams",
  "tools-list": "tools/list with input and output schemas",
};
const NEEDS_FIXTURE_2026: Record<string, string> = {
  "json-schema-2020-12": "the fixture tool json_schema_2020_12_tool",
  "server-stateless":
    "the diagnostic tools test_missing_capability, test_streaming_elicitation, test_logging_tool and a mutable tool and prompt list (its other checks, server/discover and the per-request envelope among them, pass)",
  "completion-complete": "the fixture prompt test_prompt_with_arguments",
  "http-custom-header-server-validation": "a fixture tool with x-mcp-header annotations",
  "input-required-result-basic-elicitation": "the fixture tool test_input_required_result_elicitation",
  "input-required-result-basic-list-roots": "the fixture tool test_input_required_result_list_roots",
  "input-required-result-basic-sampling": "the fixture tool test_input_required_result_sampling",
  "input-required-result-capability-check": "the fixture tool test_input_required_result_capabilities",
  "input-required-result-ignore-extra-params": "the fixture tool test_input_required_result_elicitation",
  "input-required-result-missing-input-response": "the reference server's input_required fixture tools (afk-mcp asks no input mid-call)",
  "input-required-result-multi-round": "the reference server's input_required fixture tools (afk-mcp asks no input mid-call)",
  "input-required-result-multiple-input-requests": "the fixture tool test_input_required_result_multiple_inputs",
  "input-required-result-non-tool-request": "the fixture prompt test_input_required_result_prompt",
  "input-required-result-request-state": "the fixture tool test_input_required_result_request_state",
  "input-required-result-result-type": "the fixture tool test_input_required_result_elicitation",
  "input-required-result-tampered-state": "the reference server's input_required fixture tools (afk-mcp asks no input mid-call)",
  "prompts-get-embedded-resource": "the fixture prompt test_prompt_with_embedded_resource",
  "prompts-get-simple": "the fixture prompt test_simple_prompt",
  "prompts-get-with-args": "the fixture prompt test_prompt_with_arguments",
  "prompts-get-with-image": "the fixture prompt test_prompt_with_image",
  "resources-read-binary": "the fixture resource test://static-binary",
  "resources-read-text": "the fixture resource test://static-text",
  "resources-templates-read": "the fixture resource test://template/123/data",
  "tasks-capability-negotiation": "the fixture tool slow_compute",
  "tasks-dispatch-and-envelope": "the fixture tool failing_job",
  "tasks-lifecycle": "the fixture tool greet",
  "tasks-mrtr-composition": "the fixture tool test_tool_with_task",
  "tasks-mrtr-input": "the fixture tool confirm_delete",
  "tasks-request-headers": "the fixture tool greet",
  "tasks-request-state-removal": "the fixture tool slow_compute",
  "tasks-required-task-error": "the tasks extension and its fixture tools (afk-mcp declares no tasks)",
  "tasks-status-notifications": "the tasks extension and its fixture tools (afk-mcp declares no tasks)",
  "tasks-wire-fields": "the fixture tool slow_compute",
  "tools-call-audio": "the fixture tool test_audio_content",
  "tools-call-embedded-resource": "the fixture tool test_embedded_resource",
  "tools-call-error": "the fixture tool test_error_handling",
  "tools-call-image": "the fixture tool test_image_content",
  "tools-call-mixed-content": "the fixture tool test_multiple_content_types",
  "tools-call-simple-text": "the fixture tool test_simple_text",
  "tools-call-with-progress": "the fixture tool test_tool_with_progress",
};

let world: DaemonWorld;
let server: ChildProcess;
let proxy: http.Server;
let out: string;
let proxyPort = 0;
let stderr = "";

before(async () => {
  assert.ok(existsSync(BIN), `build first: ${BIN} is missing`);
  assert.ok(existsSync(NODE22), `the Node 22 devDependency is missing (${NODE22}): run npm ci`);
  assert.ok(existsSync(SUITE), `the conformance suite devDependency is missing (${SUITE}): run npm ci`);
  world = await daemonWorld(["one"]);
  out = await mkdtemp(join(tmpdir(), "afk-conformance-"));
  server = spawn(process.execPath, [BIN, "--http", "0"], { env: world.env, stdio: ["ignore", "pipe", "pipe"] });
  server.stderr!.on("data", (d: Buffer) => void (stderr += d.toString()));
  const { port, token } = await waitFor(
    "the address and the token on stderr",
    () => {
      const at = /MCP over Streamable HTTP at http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(stderr);
      const bearer = /bearer token: (\S+)/.exec(stderr);
      return at && bearer ? { port: Number(at[1]), token: bearer[1]! } : null;
    },
    { deadlineMs: 60_000, explain: () => `stderr so far: ${stderr}` },
  );
  proxy = http.createServer((req, res) => {
    const own = new Set([`127.0.0.1:${proxyPort}`, `localhost:${proxyPort}`]);
    const host = own.has(req.headers.host ?? "") ? `127.0.0.1:${port}` : req.headers.host;
    const up = http.request(
      { host: "127.0.0.1", port, path: req.url, method: req.method, headers: { ...req.headers, host, authorization: `Bearer ${token}` } },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(up);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxyPort = (proxy.address() as AddressInfo).port;
});

after(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server.once("exit", resolve));
    server.kill("SIGTERM");
    await exited;
  }
  if (out) await rm(out, { recursive: true, force: true });
  if (world) await teardown(world);
});

/** Each scenario the suite ran, passed when every one of its checks succeeded. */
async function outcomes(dir: string): Promise<Map<string, { passed: boolean; failures: string[] }>> {
  const result = new Map<string, { passed: boolean; failures: string[] }>();
  for (const name of await readdir(dir)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(name);
    if (!m) continue;
    const checks = JSON.parse(await readFile(join(dir, name, "checks.json"), "utf8")) as { id: string; status: string; errorMessage?: string }[];
    const failures = checks
      .filter((c) => c.status !== "SUCCESS" && c.status !== "INFO")
      .map((c) => `${c.id}: ${c.status}${c.errorMessage ? ` (${c.errorMessage})` : ""}`);
    result.set(m[1]!, { passed: checks.length > 0 && failures.length === 0, failures });
  }
  return result;
}

/** Runs the suite (with `args`) into its own directory and holds its outcome to the two lists. */
async function holdsTo(args: string[], mustPass: Record<string, string>, needsFixture: Record<string, string>): Promise<void> {
  const dir = await mkdtemp(join(out, "run-"));
  const run = await new Promise<{ code: number | null; log: string }>((resolve, reject) => {
    const child = spawn(NODE22, [SUITE, "server", "--url", `http://127.0.0.1:${proxyPort}/mcp`, ...args, "-o", dir], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NO_COLOR: "1" },
    });
    let log = "";
    child.stdout.on("data", (d: Buffer) => (log += d.toString()));
    child.stderr.on("data", (d: Buffer) => (log += d.toString()));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, log }));
  });
  const seen = await outcomes(dir);
  const tail = `\n(suite output tail:\n${run.log.slice(-3000)})`;
  assert.ok(seen.size > 0, `the suite saved no results (exit ${run.code})${tail}`);
  const unknown = [...seen.keys()]
    .filter((s) => !(s in mustPass) && !(s in needsFixture))
    .map((s) => `${s}: ${seen.get(s)!.passed ? "passed" : seen.get(s)!.failures.join("; ")}`);
  assert.deepEqual(unknown, [], `scenarios this test does not know: sort each into MUST_PASS or NEEDS_FIXTURE${tail}`);
  const missing = [...Object.keys(mustPass), ...Object.keys(needsFixture)].filter((s) => !seen.has(s));
  assert.deepEqual(missing, [], `scenarios the suite no longer ran${tail}`);
  const failedMustPass = Object.keys(mustPass)
    .filter((s) => !seen.get(s)!.passed)
    .map((s) => `${s}: ${seen.get(s)!.failures.join("; ")}`);
  assert.deepEqual(failedMustPass, [], `scenarios afk-mcp must pass failed${tail}`);
  const passedFixture = Object.keys(needsFixture).filter((s) => seen.get(s)!.passed);
  assert.deepEqual(passedFixture, [], "scenarios listed as needing a fixture passed: move them to MUST_PASS");
  assert.equal(server.exitCode, null, `the server exited during the suite; its stderr:\n${stderr}`);
}

test(
  "the MCP conformance suite, 2025-11-25 (its default run): every scenario afk-mcp can pass passes, and each failure needs a reference-server fixture",
  { timeout: 10 * 60_000 },
  () => holdsTo([], MUST_PASS, NEEDS_FIXTURE),
);

test("the MCP conformance suite, 2026-07-28 (--requirements): the same holds for the stateless revision's scenarios", { timeout: 10 * 60_000 }, () =>
  holdsTo(["--requirements", "2026-07-28"], MUST_PASS_2026, NEEDS_FIXTURE_2026),
);
