// `afk-mcp config`: prints the canonical config from ./.github/afk.json, --file and --set,
// and refuses bad input with a UsageError (which the CLI turns into one line and exit 2).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_CONFIG, fleetConfigJsonSchema } from "../schemas/config.js";
import type { ParsedValues } from "../server/cli/command.js";
import { configCommand } from "../server/cli/config.js";
import { ConfigError } from "../server/host/config-load.js";
import { UsageError } from "../server/gh/errors.js";

/** Runs the command as server/cli.ts would (same parseArgs call), capturing stdout. */
async function runConfig(args: string[], cwd: string): Promise<{ code: number; stdout: string }> {
  const { values, positionals } = parseArgs({ args, options: configCommand.options, allowPositionals: false, strict: true });
  const previousCwd = process.cwd();
  const write = process.stdout.write.bind(process.stdout);
  let stdout = "";
  process.stdout.write = ((chunk: string | Uint8Array) => {
    stdout += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    return true;
  }) as typeof process.stdout.write;
  process.chdir(cwd);
  try {
    // parseArgs types mixed lists loosely; the CLI entry passes these values the same way.
    const code = await configCommand.run(values as ParsedValues, positionals);
    return { code, stdout };
  } finally {
    process.stdout.write = write;
    process.chdir(previousCwd);
  }
}

async function tempRepo(t: { after: (fn: () => Promise<void>) => void }, config?: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "afk-cli-config-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  if (config !== undefined) {
    await mkdir(join(dir, ".github"));
    await writeFile(join(dir, ".github", "afk.json"), config);
  }
  return dir;
}

test("config: with no file in the directory, prints the defaults", async (t) => {
  const dir = await tempRepo(t);
  const { code, stdout } = await runConfig([], dir);
  assert.equal(code, 0);
  assert.deepEqual(JSON.parse(stdout), DEFAULT_CONFIG);
});

test("config: reads ./.github/afk.json and applies --set on top", async (t) => {
  const dir = await tempRepo(t, JSON.stringify({ concurrency: 5, labels: { epic: ["saga"] } }));
  const { code, stdout } = await runConfig(["--set", "gate.ci=local", "--set", "gate.local_command=npm test", "-s", "retry=0"], dir);
  assert.equal(code, 0);
  const config = JSON.parse(stdout);
  assert.equal(config.concurrency, 5);
  assert.deepEqual(config.labels.epic, ["saga"]);
  assert.deepEqual(config.gate, { ...DEFAULT_CONFIG.gate, ci: "local", local_command: "npm test" });
  assert.equal(config.retry, 0);
});

test("config: --file reads that file instead", async (t) => {
  const dir = await tempRepo(t, JSON.stringify({ concurrency: 5 }));
  await writeFile(join(dir, "other.json"), JSON.stringify({ concurrency: 9 }));
  const { stdout } = await runConfig(["--file", "other.json"], dir);
  assert.equal(JSON.parse(stdout).concurrency, 9);
});

test("config: --defaults ignores the repository's file", async (t) => {
  const dir = await tempRepo(t, "{ not json");
  const { stdout } = await runConfig(["--defaults", "--set", "concurrency=2"], dir);
  assert.deepEqual(JSON.parse(stdout), { ...structuredClone(DEFAULT_CONFIG), concurrency: 2 });
});

test("config: --schema prints the JSON Schema", async (t) => {
  const dir = await tempRepo(t);
  const { stdout } = await runConfig(["--schema"], dir);
  assert.deepEqual(JSON.parse(stdout), fleetConfigJsonSchema());
});

const refusals: { name: string; args: string[]; file?: string; message: RegExp }[] = [
  {
    name: "a typo in the file",
    args: [],
    file: '{ "gate": { "cii": "local" } }',
    message: /^config \(\.github\/afk\.json\): unknown key "gate\.cii" \(did you mean "gate\.ci"\?\)$/,
  },
  {
    name: "malformed JSON in the file",
    args: [],
    file: '{\n  "retry": 2,\n}',
    message: /^config \(\.github\/afk\.json\): invalid JSON at line 2, column 13: trailing comma/,
  },
  {
    name: "a bad --set value",
    args: ["--set", "gate.ci=requird"],
    message: /^config \(--set\): gate\.ci: expected one of "required" \| "local", got "requird" \(did you mean "required"\?\)$/,
  },
  {
    name: "a --set typo",
    args: ["--set", "stall.kil_seconds=10"],
    message: /^config \(--set\): unknown key "stall\.kil_seconds" \(did you mean "stall\.kill_seconds"\?\)$/,
  },
  { name: "a --set without =", args: ["--set", "concurrency"], message: /^config \(--set\): expected key\.path=value/ },
  { name: "a --file that does not exist", args: ["--file", "missing.json"], message: /^config \(missing\.json\): file not found$/ },
  { name: "--file with --defaults", args: ["--file", "x.json", "--defaults"], message: /contradict/ },
  { name: "--schema with --set", args: ["--schema", "--set", "retry=1"], message: /--schema .* takes no/ },
];

for (const row of refusals) {
  test(`config: refuses ${row.name} with a UsageError`, async (t) => {
    const dir = await tempRepo(t, row.file);
    await assert.rejects(runConfig(row.args, dir), (err: unknown) => {
      assert.ok(err instanceof UsageError, `expected a UsageError, got ${String(err)}`);
      assert.ok(!(err as Error).message.includes("\n"), "one line");
      assert.match((err as Error).message, row.message);
      return true;
    });
  });
}

test("config: errors about the config are ConfigErrors that carry their problems", async (t) => {
  const dir = await tempRepo(t, JSON.stringify({ concurrency: 0, stall: { kill_seconds: 60 } }));
  await assert.rejects(runConfig([], dir), (err: unknown) => {
    assert.ok(err instanceof ConfigError);
    assert.equal(err.name, "ConfigError");
    assert.deepEqual(err.problems, ["concurrency: must be at least 1, got 0", "stall.kill_seconds: must be greater than stall.quiet_seconds (900), got 60"]);
    return true;
  });
});

test("config: --help text documents every option and the file it reads", () => {
  for (const needle of ["--file", "--set", "--defaults", "--schema", ".github/afk.json", "Exit status", "Examples"]) {
    assert.ok(configCommand.usage.includes(needle), needle);
  }
  for (const option of Object.keys(configCommand.options)) assert.ok(configCommand.usage.includes(`--${option}`), option);
});
