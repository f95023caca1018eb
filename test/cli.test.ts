// The built binary's command line: --help for every command, and bad usage answered with one
// line naming the problem and exit status 2.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { BIN } from "./support/paths.js";
import { commands } from "../server/cli/commands.js";

const run = promisify(execFile);

async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...env }, timeout: 30_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

describe("afk-mcp command line", () => {
  it("lists every command in --help", async () => {
    const r = await cli(["--help"]);
    assert.equal(r.code, 0);
    for (const c of commands) assert.match(r.stdout, new RegExp(`\\n  ${c.name} `), `--help lists ${c.name}`);
  });

  for (const c of commands) {
    it(`${c.name} --help prints its usage`, async () => {
      const r = await cli([c.name, "--help"]);
      assert.equal(r.code, 0);
      assert.match(r.stdout, /^Usage: afk-mcp/);
    });
  }

  const bad: { name: string; args: string[]; env?: NodeJS.ProcessEnv; message: RegExp }[] = [
    { name: "an unknown command", args: ["frobnicate"], message: /unknown command "frobnicate"/ },
    { name: "an unknown flag", args: ["plan", "--bogus"], message: /afk-mcp plan: .*bogus/ },
    { name: "forge without --dir", args: ["forge"], message: /--dir DIR is required/ },
    { name: "forge with a bad port", args: ["forge", "--dir", "/tmp/x", "--port", "99999"], message: /--port must be an integer/ },
    { name: "forge with a bad repo slug", args: ["forge", "--dir", "/tmp/x", "--repo", "not a slug"], message: /owner\/name/ },
    { name: "run without a worker", args: ["run", "--repo", "a/b"], message: /--worker/ },
    { name: "plan with an invalid slug", args: ["plan", "--repo", "a/b/c"], message: /owner\/name|repo/i },
    { name: "plan without a token", args: ["plan", "--repo", "afk/demo"], env: { GITHUB_TOKEN: "", GH_TOKEN: "", PATH: "/nonexistent" }, message: /GITHUB_TOKEN.*GH_TOKEN|gh auth login/ },
    { name: "config with a malformed file", args: ["config", "--file", "/nonexistent/afk.json"], message: /afk\.json/ },
    { name: "demo with a bad concurrency", args: ["demo", "--concurrency", "0"], message: /--concurrency/ },
    { name: "dashboard with a bad port", args: ["dashboard", "--port", "http"], message: /--port: expected a port number/ },
  ];
  for (const b of bad) {
    it(`refuses ${b.name} with one line and exit 2`, async () => {
      const r = await cli(b.args, b.env);
      assert.equal(r.code, 2, `exit code (stderr: ${r.stderr})`);
      const lines = r.stderr.trim().split("\n");
      assert.equal(lines.length, 1, `one line: ${r.stderr}`);
      assert.match(lines[0]!, b.message);
      assert.equal(r.stdout, "", "nothing on stdout");
    });
  }
});
