// The MCP inspector's command line (@modelcontextprotocol/inspector 2.12.0, a devDependency:
// `mcp-inspector --cli`) against the built binary over stdio: tools/list and tools/call status,
// on a local forge. Left to itself it speaks 2025-11-25 (initialize); with --protocol-era modern
// (or auto) it speaks 2026-07-28 (server/discover, each request's `_meta`). Which one it spoke is
// read from the server's side of the pipe (test/support/wire-log.ts).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { api, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { ROOT } from "./support/paths.js";
import { answerTo, envelopeRevisions, wireLoggedServer, type Wire } from "./support/wire-log.js";

const pexec = promisify(execFile);
const INSPECTOR = join(ROOT, "node_modules", ".bin", "mcp-inspector");
const REPO = "afk/demo";
const TOOLS = ["logs", "project_reset", "project_resize", "project_start", "project_stop", "status", "takeover"];

let forge: TestForge;
let serverEnv: Record<string, string>;
before(async () => {
  forge = await startTestForge();
  await api(forge, "POST", `/repos/${REPO}/labels`, { name: "ready-for-agent", color: "0e8a16" });
  await api(forge, "POST", `/repos/${REPO}/issues`, { title: "one", labels: ["ready-for-agent"] });
  serverEnv = {
    GITHUB_API_URL: forge.apiUrl,
    GITHUB_TOKEN: forge.token,
    AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
    AFK_STATE_DIR: await tempDir("afk-insp-state-"),
  };
});
after(() => forge?.dispose());

interface Inspected {
  /** The inspector's answer (--format json): the method's result. */
  result: { tools?: { name: string }[]; content?: { type: string; text?: string }[]; structuredContent?: { plan?: { repo?: string } }; isError?: boolean };
  wire: Wire;
}

/** One `mcp-inspector --cli` run against afk-mcp (behind the wire log), its own HOME a temp dir. */
async function inspect(args: string[]): Promise<Inspected> {
  const dir = await tempDir("afk-insp-");
  const home = join(dir, "home");
  await mkdir(home, { recursive: true });
  const server = await wireLoggedServer(dir);
  const env = Object.entries(serverEnv).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
  const { stdout } = await pexec(INSPECTOR, ["--cli", "--format", "json", ...env, server.command, ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home },
    cwd: dir,
    timeout: 120_000,
  });
  return { result: (JSON.parse(stdout) as { result: Inspected["result"] }).result, wire: await server.read() };
}

const STATUS = ["--tool-name", "status", "--tool-args-json", JSON.stringify({ repo: REPO }), "--method", "tools/call"];

describe("the MCP inspector's --cli against afk-mcp on stdio", () => {
  it("by default speaks 2025-11-25: initialize, then tools/list (the seven tools) and tools/call status (the plan)", async () => {
    const listed = await inspect(["--method", "tools/list"]);
    assert.deepEqual(listed.result.tools!.map((t) => t.name).sort(), TOOLS);
    assert.equal(listed.wire.sent[0]?.method, "initialize");
    assert.equal(listed.wire.sent[0]?.params?.protocolVersion, "2025-11-25");
    assert.equal(listed.wire.answered[0]?.result?.protocolVersion, "2025-11-25", "afk-mcp agreed to 2025-11-25");

    const called = await inspect(STATUS);
    assert.notEqual(called.result.isError, true, JSON.stringify(called.result).slice(0, 600));
    assert.match(called.result.content![0]!.text!, /plan for afk\/demo/);
    assert.equal(called.result.structuredContent?.plan?.repo, REPO);
    assert.equal(called.wire.sent[0]?.method, "initialize");
    assert.deepEqual(answerTo(called.wire, "status").result!.structuredContent, called.result.structuredContent);
  });

  for (const era of ["modern", "auto"]) {
    it(`with --protocol-era ${era} speaks 2026-07-28: server/discover, every request in its _meta, no initialize`, async () => {
      const listed = await inspect(["--protocol-era", era, "--method", "tools/list"]);
      assert.deepEqual(listed.result.tools!.map((t) => t.name).sort(), TOOLS);
      const called = await inspect(["--protocol-era", era, ...STATUS]);
      assert.match(called.result.content![0]!.text!, /plan for afk\/demo/);
      for (const wire of [listed.wire, called.wire]) {
        assert.equal(wire.sent[0]?.method, "server/discover", wire.sent.map((m) => m.method).join(", "));
        assert.ok(!wire.sent.some((m) => m.method === "initialize"));
        assert.deepEqual([...new Set(envelopeRevisions(wire))], ["2026-07-28"]);
      }
      assert.equal(answerTo(called.wire, "status").result!.resultType, "complete");
    });
  }
});
