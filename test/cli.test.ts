// The built binary's command line: --help for every command, and bad usage answered with one
// line naming the problem and exit status 2.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { BIN } from "./support/paths.js";
import { commands } from "../server/cli/commands.js";
import { writeFile } from "node:fs/promises";
import { tempDir } from "./support/forge-fixtures.js";
import { join } from "node:path";

const run = promisify(execFile);

async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...env },
      timeout: 30_000,
    });
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
    {
      name: "forge with a bad actions concurrency",
      args: ["forge", "--dir", "/tmp/x", "--actions-concurrency", "0"],
      message: /--actions-concurrency must be an integer from 1 to 256/,
    },
    { name: "run without a worker", args: ["run", "--repo", "a/b"], message: /--worker/ },
    { name: "plan with an invalid slug", args: ["plan", "--repo", "a/b/c"], message: /owner\/name|repo/i },
    {
      name: "plan without a token",
      args: ["plan", "--repo", "afk/demo"],
      env: { GITHUB_TOKEN: "", GH_TOKEN: "", PATH: "/nonexistent" },
      message: /GITHUB_TOKEN.*GH_TOKEN|gh auth login/,
    },
    { name: "config with a malformed file", args: ["config", "--file", "/nonexistent/afk.json"], message: /afk\.json/ },
    { name: "demo with a bad concurrency", args: ["demo", "--concurrency", "0"], message: /--concurrency/ },
    { name: "demo with an unknown runtime", args: ["demo", "--runtime", "k8s"], message: /--runtime must be one of sandbox, local, actions/ },
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

  // The seed file's format (docs/operations.md, "The local forge"): each problem named at its path, exit 2.
  const seeds: { name: string; seed: unknown; message: RegExp }[] = [
    {
      name: "not an object",
      seed: [1],
      message:
        /is not a valid seed \(the format: docs\/operations\.md, "The local forge"\): expected a JSON object with "files", "labels" and\/or "issues", got a list$/,
    },
    { name: "a misspelt key", seed: { isues: [] }, message: /: isues: unknown key \(did you mean "issues"\?\)$/ },
    {
      name: "a label without a name, a bad colour",
      seed: { labels: [{ color: "green" }] },
      message: /labels\[0\]\.name: required, a non-empty string; labels\[0\]\.color: expected six hex digits \("0e8a16"\), got string "green"$/,
    },
    {
      name: "an issue without a title, a bad state",
      seed: { issues: [{ state: "done" }] },
      message: /issues\[0\]\.title: required, a non-empty string; issues\[0\]\.state: expected "open" or "closed", got string "done"$/,
    },
    {
      name: "a reference to no issue of the seed",
      seed: { issues: [{ title: "a", blocked_by: [2] }] },
      message: /issues\[0\]\.blocked_by\[0\]: number 2 is not another issue of this seed: a position from 1 to 1, not its own \(1\)$/,
    },
    {
      name: "a file whose content is not text",
      seed: { files: { "README.md": 1 } },
      message: /files\.README\.md: expected the file's content as a string, got number 1$/,
    },
    {
      name: "twelve problems: ten named, two counted",
      seed: { issues: Array.from({ length: 12 }, () => ({ body: 1 })) },
      message: /issues\[4\]\.title[^]*; … and 14 more problem\(s\)$/,
    },
  ];
  for (const b of seeds) {
    it(`forge --seed refuses ${b.name} with one line and exit 2`, async () => {
      const dir = await tempDir("afk-seed-");
      await writeFile(join(dir, "seed.json"), JSON.stringify(b.seed));
      const r = await cli(["forge", "--dir", join(dir, "forge"), "--seed", join(dir, "seed.json")]);
      assert.equal(r.code, 2, `exit code (stderr: ${r.stderr})`);
      const lines = r.stderr.trim().split("\n");
      assert.equal(lines.length, 1, `one line: ${r.stderr}`);
      assert.match(lines[0]!, /^afk-mcp forge: local forge: seed \S+ is not a valid seed/);
      assert.match(lines[0]!, b.message);
    });
  }
});
