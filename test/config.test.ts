// The fleet config: defaults are complete, overrides merge the way a user expects, and every
// bad input is refused with a message that names the key path (and the nearest valid key).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_CONFIG, FleetConfigSchema, fleetConfigJsonSchema, type FleetConfig } from "../schemas/config.js";
import {
  CONFIG_FILE_PATH,
  ConfigError,
  editDistance,
  formatZodIssues,
  loadConfigFile,
  loadRepoConfig,
  mergeConfig,
  overridesFromAssignments,
  parseConfig,
  parseConfigText,
} from "../server/host/config-load.js";
import { UsageError } from "../server/gh/errors.js";

interface SchemaNode {
  type?: string | string[];
  description?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  additionalProperties?: unknown;
}

/** Every key path of the schema outside lists ("gate.ci", ...), in schema order. */
function schemaKeyPaths(node: SchemaNode, prefix: string[] = []): string[][] {
  const out: string[][] = [];
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    if (key === "$schema") continue;
    out.push([...prefix, key]);
    out.push(...schemaKeyPaths(child, [...prefix, key]));
  }
  return out;
}

/** Every object node of the schema, with where it is. */
function objectNodes(node: SchemaNode, at = "(root)"): { at: string; node: SchemaNode }[] {
  const out: { at: string; node: SchemaNode }[] = [];
  if (node.properties) out.push({ at, node });
  for (const [key, child] of Object.entries(node.properties ?? {})) out.push(...objectNodes(child, at === "(root)" ? key : `${at}.${key}`));
  if (node.items) out.push(...objectNodes(node.items, `${at}[]`));
  for (const branch of node.anyOf ?? []) out.push(...objectNodes(branch, at));
  return out;
}

function get(value: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>((v, k) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined), value);
}

function configErrorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    assert.ok(err instanceof UsageError, "a ConfigError is a UsageError, so the CLI exits 2 with one line");
    return err;
  }
  assert.fail("expected a ConfigError, but the config was accepted");
}

const SOURCE = CONFIG_FILE_PATH;

// --- defaults ---------------------------------------------------------------------------

test("defaults: {} yields a complete config with every schema key present", () => {
  const parsed = parseConfig({}, SOURCE);
  assert.deepEqual(parsed, DEFAULT_CONFIG);
  const paths = schemaKeyPaths(fleetConfigJsonSchema() as SchemaNode);
  assert.ok(paths.length > 40, `expected the whole schema, got ${paths.length} keys`);
  for (const path of paths) {
    assert.notEqual(get(DEFAULT_CONFIG, path), undefined, `default config lacks ${path.join(".")}`);
  }
  // ...and nothing beyond the schema.
  const known = new Set(paths.map((p) => p.join(".")));
  const walk = (value: unknown, prefix: string[]) => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return;
    for (const [key, child] of Object.entries(value)) {
      const path = [...prefix, key];
      assert.ok(known.has(path.join(".")), `default config has ${path.join(".")}, which the schema does not`);
      walk(child, path);
    }
  };
  walk(DEFAULT_CONFIG, []);
});

test("defaults: the values users rely on", () => {
  const rows: [string, unknown][] = [
    ["labels.ready", "ready-for-agent"],
    ["labels.escalate", "ready-for-human"],
    ["labels.epic", ["epic", "prd"]],
    ["labels.priority_high", "priority:high"],
    ["labels.attempt_prefix", "afk-attempt/"],
    ["labels.runner_error", "runner-error"],
    ["concurrency", 3],
    ["base", null],
    ["landing.strategy", "auto"],
    ["landing.sync", "merge"],
    ["gate.ci", "required"],
    ["gate.local_command", null],
    ["retry", 2],
    ["lease.ttl_seconds", 4500],
    ["stall.kill_seconds", 1800],
    ["circuit.k", 3],
    ["worktree.root", null],
    ["board.enabled", true],
    ["board.escalate_comment", true],
    ["board.settle_seconds", 30],
    ["namespace", "refs/afk"],
  ];
  for (const [path, expected] of rows) assert.deepEqual(get(DEFAULT_CONFIG, path.split(".")), expected, path);
});

test("defaults: no selectors means one selector on the ready label, written out", () => {
  assert.deepEqual(DEFAULT_CONFIG.selectors, [{ label: "ready-for-agent", issues: null, tags: [], user: null, epic: null, milestone: null, blockers: true }]);
});

test("defaults: the canonical config is a fixed point (parsing it again changes nothing)", () => {
  const custom = parseConfig({ selectors: [{ tags: ["api"] }, { label: null, issues: [7] }], gate: { ci: "local", local_command: "make test" } });
  assert.deepEqual(parseConfig(structuredClone(custom)), custom);
  assert.deepEqual(parseConfig(structuredClone(DEFAULT_CONFIG)), DEFAULT_CONFIG);
});

test("defaults: DEFAULT_CONFIG is frozen and parses never share its lists", () => {
  assert.ok(Object.isFrozen(DEFAULT_CONFIG) && Object.isFrozen(DEFAULT_CONFIG.labels.epic));
  const a = parseConfig({});
  a.labels.epic.push("mutated");
  assert.deepEqual(parseConfig({}).labels.epic, ["epic", "prd"]);
});

test("defaults: $schema is accepted for editors and dropped from the canonical config", () => {
  const parsed = parseConfig({ $schema: "../node_modules/afk-mcp/schemas/config.schema.json" });
  assert.deepEqual(parsed, DEFAULT_CONFIG);
  assert.ok(!("$schema" in parsed));
});

// --- merging ----------------------------------------------------------------------------

const mergeRows: { name: string; file: unknown; overrides: unknown; expect: (c: FleetConfig) => void }[] = [
  {
    name: "a scalar override wins over the file",
    file: { concurrency: 4 },
    overrides: { concurrency: 8 },
    expect: (c) => assert.equal(c.concurrency, 8),
  },
  {
    name: "objects merge key by key: the file's siblings survive",
    file: { gate: { ci: "local", local_command: "npm test" } },
    overrides: { gate: { timeout_seconds: 60 } },
    expect: (c) => assert.deepEqual(c.gate, { ci: "local", local_command: "npm test", timeout_seconds: 60, excerpt_bytes: 4096, rerun_failed: 1 }),
  },
  {
    name: "lists replace instead of concatenating",
    file: { labels: { epic: ["epic", "prd", "initiative"] } },
    overrides: { labels: { epic: ["saga"] } },
    expect: (c) => assert.deepEqual(c.labels.epic, ["saga"]),
  },
  {
    name: "selectors replace as a whole",
    file: { selectors: [{ tags: ["api"] }, {}] },
    overrides: { selectors: [{ issues: [3, 4] }] },
    expect: (c) =>
      assert.deepEqual(c.selectors, [{ label: "ready-for-agent", issues: [3, 4], tags: [], user: null, epic: null, milestone: null, blockers: true }]),
  },
  {
    name: "null overrides a nullable key",
    file: { base: "develop" },
    overrides: { base: null },
    expect: (c) => assert.equal(c.base, null),
  },
  {
    name: "undefined in overrides changes nothing",
    file: { retry: 5 },
    overrides: { retry: undefined },
    expect: (c) => assert.equal(c.retry, 5),
  },
  {
    name: "no overrides: the file alone",
    file: { board: { enabled: false } },
    overrides: undefined,
    expect: (c) => assert.deepEqual(c.board, { enabled: false, escalate_comment: true, settle_seconds: 30 }),
  },
  {
    name: "no file: the overrides alone",
    file: undefined,
    overrides: { pacing: { busy_seconds: 30 } },
    expect: (c) => assert.equal(c.pacing.busy_seconds, 30),
  },
  {
    name: "an implicit selector label follows an overridden ready label",
    file: { selectors: [{ tags: ["ui"] }] },
    overrides: { labels: { ready: "agent-ok" } },
    expect: (c) => assert.equal(c.selectors[0]?.label, "agent-ok"),
  },
  {
    name: "overrides may complete a cross-key rule the file leaves open",
    file: { gate: { ci: "local" } },
    overrides: { gate: { local_command: "make check" } },
    expect: (c) => assert.equal(c.gate.local_command, "make check"),
  },
  {
    name: "the merge does not mutate its inputs",
    file: { gate: { ci: "required" } },
    overrides: { gate: { ci: "local", local_command: "x" } },
    expect: (c) => assert.equal(c.gate.ci, "local"),
  },
];

for (const row of mergeRows) {
  test(`merge: ${row.name}`, () => {
    const file = structuredClone(row.file);
    const overrides = structuredClone(row.overrides);
    const merged = mergeConfig(file, overrides);
    row.expect(merged);
    assert.deepEqual(file, row.file);
    assert.deepEqual(overrides, row.overrides);
    // Every key is present after any merge.
    for (const path of schemaKeyPaths(fleetConfigJsonSchema() as SchemaNode)) {
      assert.notEqual(get(merged, path), undefined, path.join("."));
    }
  });
}

test("merge: a file that is null or a list is refused, null overrides mean none", () => {
  assert.equal(configErrorOf(() => mergeConfig(null, {})).message, `config (${CONFIG_FILE_PATH}): expected the config to be an object, got null`);
  assert.equal(configErrorOf(() => mergeConfig({}, [1], { overrides: "config" })).message, "config (config): expected the config to be an object, got a list");
  assert.deepEqual(mergeConfig({}, null), DEFAULT_CONFIG);
});

test("merge: a broken file is blamed on the file, a broken override on the overrides", () => {
  const fileErr = configErrorOf(() => mergeConfig({ gate: { cii: "local" } }, { concurrency: 2 }, { file: ".github/afk.json", overrides: "--set" }));
  assert.equal(fileErr.message, 'config (.github/afk.json): unknown key "gate.cii" (did you mean "gate.ci"?)');
  assert.equal(fileErr.source, ".github/afk.json");
  const overErr = configErrorOf(() => mergeConfig({ stall: { quiet_seconds: 900 } }, { stall: { kill_seconds: 600 } }, { overrides: "--set" }));
  assert.equal(overErr.message, "config (--set): stall.kill_seconds: must be greater than stall.quiet_seconds (900), got 600");
  assert.equal(overErr.source, "--set");
});

// --- validation -------------------------------------------------------------------------

const invalidRows: { name: string; raw: unknown; message: string }[] = [
  { name: "unknown key in a group, with a suggestion", raw: { gate: { cii: "local" } }, message: 'unknown key "gate.cii" (did you mean "gate.ci"?)' },
  { name: "unknown top-level key", raw: { concurency: 3 }, message: 'unknown key "concurency" (did you mean "concurrency"?)' },
  {
    name: "unknown key with swapped letters",
    raw: { lease: { ttl_sceonds: 4000 } },
    message: 'unknown key "lease.ttl_sceonds" (did you mean "lease.ttl_seconds"?)',
  },
  {
    name: "unknown key in camelCase",
    raw: { gate: { localCommand: "npm test" } },
    message: 'unknown key "gate.localCommand" (did you mean "gate.local_command"?)',
  },
  { name: "unknown key missing its unit", raw: { stall: { kill: 1800 } }, message: 'unknown key "stall.kill" (did you mean "stall.kill_seconds"?)' },
  {
    name: "unknown key inside a list item",
    raw: { selectors: [{}, { lable: "bug" }] },
    message: 'unknown key "selectors[1].lable" (did you mean "selectors[1].label"?)',
  },
  { name: "a key in the wrong group", raw: { heartbeat_seconds: 60 }, message: 'unknown key "heartbeat_seconds" (did you mean "lease.heartbeat_seconds"?)' },
  {
    name: "unknown key with nothing close lists the valid ones",
    raw: { board: { banana: true } },
    message: 'unknown key "board.banana" (valid keys in board: enabled, escalate_comment, settle_seconds)',
  },
  { name: "wrong type", raw: { concurrency: "3" }, message: 'concurrency: expected a number, got "3"' },
  { name: "wrong type in a group", raw: { board: { enabled: "yes" } }, message: 'board.enabled: expected true or false, got "yes"' },
  { name: "a fraction where a whole number goes", raw: { retry: 1.5 }, message: "retry: expected a whole number, got 1.5" },
  { name: "wrong type of a nullable key", raw: { base: 5 }, message: "base: expected a string or null, got 5" },
  { name: "a group that is not an object", raw: { gate: "local" }, message: 'gate: expected an object, got "local"' },
  { name: "a list that is not a list", raw: { labels: { epic: "epic" } }, message: 'labels.epic: expected a list, got "epic"' },
  {
    name: "wrong enum value",
    raw: { gate: { ci: "requird" } },
    message: 'gate.ci: expected one of "required" | "local", got "requird" (did you mean "required"?)',
  },
  {
    name: "wrong enum value, nothing close",
    raw: { landing: { strategy: "yolo" } },
    message: 'landing.strategy: expected one of "auto" | "squash" | "merge" | "push", got "yolo"',
  },
  { name: "rebase is not offered", raw: { landing: { sync: "rebase" } }, message: 'landing.sync: expected "merge", got "rebase"' },
  {
    name: "kill equal to stall",
    raw: { stall: { quiet_seconds: 900, kill_seconds: 900 } },
    message: "stall.kill_seconds: must be greater than stall.quiet_seconds (900), got 900",
  },
  {
    name: "kill below the default stall",
    raw: { stall: { kill_seconds: 600 } },
    message: "stall.kill_seconds: must be greater than stall.quiet_seconds (900), got 600",
  },
  {
    name: "heartbeat at half the ttl",
    raw: { lease: { ttl_seconds: 600, heartbeat_seconds: 300 } },
    message: "lease.heartbeat_seconds: must be less than half of lease.ttl_seconds (600 / 2 = 300), got 300",
  },
  {
    name: "heartbeat beyond the default ttl",
    raw: { lease: { heartbeat_seconds: 3000 } },
    message: "lease.heartbeat_seconds: must be less than half of lease.ttl_seconds (4500 / 2 = 2250), got 3000",
  },
  {
    name: "local gate without a command",
    raw: { gate: { ci: "local" } },
    message: 'gate.local_command: required when gate.ci is "local": set it to the command that must pass before a PR lands, e.g. "npm test"',
  },
  { name: "concurrency zero", raw: { concurrency: 0 }, message: "concurrency: must be at least 1, got 0" },
  { name: "concurrency too high", raw: { concurrency: 65 }, message: "concurrency: must be at most 64, got 65" },
  { name: "retry too high", raw: { retry: 11 }, message: "retry: must be at most 10, got 11" },
  { name: "re-runs of a red gate too many", raw: { gate: { rerun_failed: 6 } }, message: "gate.rerun_failed: must be at most 5, got 6" },
  { name: "negative retry", raw: { retry: -1 }, message: "retry: must be at least 0, got -1" },
  { name: "empty label", raw: { labels: { ready: "" } }, message: 'labels.ready: must not be empty, got ""' },
  {
    name: "one label for two roles",
    raw: { labels: { escalate: "Ready-For-Agent" } },
    message: 'labels.escalate: must differ from labels.ready (both are "Ready-For-Agent")',
  },
  {
    name: "the ready label as an epic label",
    raw: { labels: { epic: ["epic", "ready-for-agent"] } },
    message: 'labels.epic[1]: must not be labels.ready ("ready-for-agent"): every ready issue would count as an epic and nothing would be dispatched',
  },
  { name: "a branch that reads as an option", raw: { base: "-f" }, message: 'base: not a usable branch name: must not start with "-"' },
  {
    name: "a branch with a space",
    raw: { base: "my branch" },
    message: "base: not a usable branch name: must not contain whitespace, control characters or any of ~ ^ : ? * [ \\",
  },
  { name: "a namespace outside refs/", raw: { namespace: "afk" }, message: 'namespace: expected a ref prefix such as "refs/afk" (no trailing "/"), got "afk"' },
  { name: "a selector with an empty issue list", raw: { selectors: [{ issues: [] }] }, message: "selectors[0].issues: must not be an empty list" },
  {
    name: "a selector with a bad login",
    raw: { selectors: [{ user: "not a login" }] },
    message: 'selectors[0].user: expected a GitHub login or "@me", got "not a login"',
  },
  {
    name: "a selector that would pick every open issue",
    raw: { selectors: [{ label: null }] },
    message:
      "selectors[0].label: a selector with no label filter needs another facet (issues, tags, user, epic or milestone): as written it would pick every open issue",
  },
  {
    name: "a quota pattern that is not a regular expression",
    raw: { worker: { quota_patterns: ["limit (reached"] } },
    message: "worker.quota_patterns[0]: not a valid regular expression: Invalid regular expression: /limit (reached/i: Unterminated group",
  },
  {
    name: "passing every variable to workers",
    raw: { worker: { env_passthrough: ["*"] } },
    message:
      'worker.env_passthrough[0]: expected a variable name or a prefix ending in "*" such as "AFK_USER_*" (a bare "*" is refused: it would hand every token to every worker), got "*"',
  },
  {
    name: "passing through a denied variable",
    raw: { worker: { env_passthrough: ["AFK_BRIEF"] } },
    message: 'worker.env_passthrough[0]: "AFK_BRIEF" is always blocked by worker.env_deny entry "AFK_BRIEF"; remove one of them',
  },
  // Blank text that would mean nothing: a gate or review command that runs nothing, a worktree
  // root of spaces, a milestone no issue has, a runtime pattern matching nearly every line.
  { name: "a blank local gate command", raw: { gate: { ci: "local", local_command: "   " } }, message: 'gate.local_command: must not be blank, got "   "' },
  { name: "a blank review command", raw: { review: { command: " " } }, message: 'review.command: must not be blank, got " "' },
  { name: "a blank worktree root", raw: { worktree: { root: "\t" } }, message: 'worktree.root: must not be blank, got "\\t"' },
  { name: "a blank milestone", raw: { selectors: [{ milestone: "  " }] }, message: 'selectors[0].milestone: must not be blank, got "  "' },
  { name: "a blank auth pattern", raw: { worker: { auth_patterns: [" "] } }, message: 'worker.auth_patterns[0]: must not be blank, got " "' },
  {
    name: "idle pacing faster than busy",
    raw: { pacing: { idle_seconds: 30 } },
    message: "pacing.idle_seconds: must be at least pacing.busy_seconds (90), got 30",
  },
  { name: "a config that is not an object", raw: ["concurrency", 3], message: "expected the config to be an object, got a list" },
  { name: "null for the whole config", raw: null, message: "expected the config to be an object, got null" },
  { name: "a __proto__ key is just an unknown key", raw: JSON.parse('{"__proto__": {"concurrency": 9}}'), message: 'unknown key "__proto__"' },
];

for (const row of invalidRows) {
  test(`invalid: ${row.name}`, () => {
    const err = configErrorOf(() => parseConfig(row.raw, SOURCE));
    assert.ok(err.message.startsWith(`config (${SOURCE}): ${row.message}`), `got: ${err.message}`);
    assert.equal(err.source, SOURCE);
    assert.ok(err.problems.length >= 1);
  });
}

test("invalid: several problems are all reported, each with its path, on one line", () => {
  const err = configErrorOf(() => parseConfig({ gate: { cii: 1 }, concurrency: 99, landing: { strategy: "rebase" } }));
  assert.equal(err.problems.length, 3);
  assert.ok(!err.message.includes("\n"));
  assert.match(err.message, /^config: /);
  for (const part of ['"gate.cii"', "concurrency: must be at most 64", "landing.strategy:"]) assert.ok(err.message.includes(part), part);
});

test("invalid: a cross-key rule is not checked on values that are already wrong", () => {
  const err = configErrorOf(() => parseConfig({ stall: { quiet_seconds: "soon", kill_seconds: 10 } }));
  assert.deepEqual(err.problems, ['stall.quiet_seconds: expected a number, got "soon"', "stall.kill_seconds: must be at least 60, got 10"]);
});

test("formatZodIssues: usable on a raw zod result", () => {
  const result = FleetConfigSchema.safeParse({ namespace: 3 }, { reportInput: true });
  assert.ok(!result.success);
  assert.deepEqual(formatZodIssues(result.error.issues), ["namespace: expected a string, got 3"]);
});

test("suggestions: edit distance counts a swap of neighbours as one edit", () => {
  const rows: [string, string, number][] = [
    ["ci", "ci", 0],
    ["cii", "ci", 1],
    ["retyr", "retry", 1],
    ["", "abc", 3],
    ["kitten", "sitting", 3],
  ];
  for (const [a, b, d] of rows) assert.equal(editDistance(a, b), d, `${a} → ${b}`);
});

// --- JSON text and files ----------------------------------------------------------------

const jsonRows: { name: string; text: string; line: number; column: number; reason: RegExp }[] = [
  { name: "missing colon", text: '{\n  "retry": 1,\n  "base" "main"\n}\n', line: 3, column: 10, reason: /expected ":" after the property name/ },
  {
    name: "an unquoted string",
    text: '{\n  "base": main\n}\n',
    line: 2,
    column: 11,
    reason: /unexpected word "main", expected a value \(strings need double quotes\)/,
  },
  { name: "a line break inside a string", text: '{"base": "ma\nin"}', line: 1, column: 13, reason: /line break/ },
  { name: "trailing comma", text: '{\n  "retry": 1,\n}\n', line: 2, column: 13, reason: /trailing comma before "}"/ },
  { name: "a comment", text: '{\n  // fleet\n  "retry": 1\n}\n', line: 2, column: 3, reason: /comments are not allowed/ },
  { name: "single quotes", text: "{\n  'retry': 1\n}\n", line: 2, column: 3, reason: /double quotes/ },
  { name: "cut short", text: '{\n  "retry": 1', line: 2, column: 13, reason: /unexpected end of file/ },
  { name: "two documents", text: "{}\n{}\n", line: 2, column: 1, reason: /after the end of the JSON value/ },
];

for (const row of jsonRows) {
  test(`malformed JSON: ${row.name} is reported with line and column`, () => {
    const err = configErrorOf(() => parseConfigText(row.text, SOURCE));
    assert.deepEqual(err.position, { line: row.line, column: row.column });
    assert.ok(err.message.startsWith(`config (${SOURCE}): invalid JSON at line ${row.line}, column ${row.column}: `), err.message);
    assert.match(err.message, row.reason);
  });
}

test("malformed JSON: an empty file says how to ask for the defaults", () => {
  assert.equal(configErrorOf(() => parseConfigText(" \n", SOURCE)).message, `config (${SOURCE}): the file is empty; write {} to use every default`);
});

test("files: a byte-order mark is tolerated", () => {
  assert.deepEqual(parseConfigText('\ufeff{"retry": 0}', SOURCE), { retry: 0 });
});

test("files: loadConfigFile, loadRepoConfig, and their errors name the file", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "afk-config-"));
  t.after(() => rm(dir, { recursive: true, force: true }));

  // No .github/afk.json: every default (plus overrides).
  assert.deepEqual(await loadRepoConfig(dir), DEFAULT_CONFIG);
  assert.equal((await loadRepoConfig(dir, { concurrency: 7 })).concurrency, 7);

  await mkdir(join(dir, ".github"));
  const file = join(dir, CONFIG_FILE_PATH);
  await writeFile(file, JSON.stringify({ concurrency: 5, gate: { ci: "local", local_command: "npm test" } }));
  const loaded = await loadRepoConfig(dir, { retry: 0 });
  assert.equal(loaded.concurrency, 5);
  assert.equal(loaded.gate.local_command, "npm test");
  assert.equal(loaded.retry, 0);
  assert.deepEqual(await loadConfigFile(file), await loadRepoConfig(dir));

  await writeFile(file, '{\n  "gate": { "cii": "local" }\n}\n');
  await assert.rejects(loadRepoConfig(dir), (err: unknown) => {
    assert.ok(err instanceof ConfigError);
    assert.match(err.message, /^config \(.*\.github\/afk\.json\): unknown key "gate\.cii" \(did you mean "gate\.ci"\?\)$/);
    return true;
  });

  await writeFile(file, '{\n  "retry": 1,\n  "base": main\n}\n');
  await assert.rejects(loadConfigFile(file), (err: unknown) => {
    assert.ok(err instanceof ConfigError);
    assert.deepEqual(err.position, { line: 3, column: 11 });
    assert.match(err.message, /afk\.json\): invalid JSON at line 3, column 11: /);
    return true;
  });

  await assert.rejects(loadConfigFile(join(dir, "nope.json")), /^ConfigError: config \(.*nope\.json\): file not found$/);
  await assert.rejects(loadConfigFile(dir), /is a directory, not a file/);
});

// --- --set assignments ------------------------------------------------------------------

test("assignments: values are JSON when they parse and the key takes that type, else strings; paths nest", () => {
  const rows: [string, unknown][] = [
    ["concurrency=5", { concurrency: 5 }],
    ["gate.ci=local", { gate: { ci: "local" } }],
    ["gate.local_command=npm run test -- --ci", { gate: { local_command: "npm run test -- --ci" } }],
    ["base=null", { base: null }],
    ["board.enabled=false", { board: { enabled: false } }],
    ['labels.epic=["saga"]', { labels: { epic: ["saga"] } }],
    ['labels.ready="123"', { labels: { ready: "123" } }],
    ["labels.ready=a=b", { labels: { ready: "a=b" } }],
    // Coerced by the schema's type at the key: a string key keeps the text JSON would misread.
    ["gate.local_command=true", { gate: { local_command: "true" } }],
    ["labels.ready=123", { labels: { ready: "123" } }],
    ["namespace=null", { namespace: "null" }],
    ["concurrency=abc", { concurrency: "abc" }],
  ];
  for (const [assignment, expected] of rows) assert.deepEqual(overridesFromAssignments([assignment]), expected, assignment);
  assert.deepEqual(overridesFromAssignments(["gate.ci=local", "gate.local_command=make", "gate.ci=required"]), {
    gate: { ci: "required", local_command: "make" },
  });
});

test("assignments: malformed ones are refused with the flag named", () => {
  for (const bad of ["concurrency", "=5", "gate..ci=local", ".gate=1", "gate.ci.=x"]) {
    const err = configErrorOf(() => overridesFromAssignments([bad]));
    assert.ok(err.message.startsWith("config (--set): expected key.path=value"), err.message);
  }
});

// --- the schema documents itself ---------------------------------------------------------

test("schema: every key has a description", () => {
  const root = fleetConfigJsonSchema() as SchemaNode;
  const missing: string[] = [];
  let count = 0;
  for (const { at, node } of objectNodes(root)) {
    for (const [key, child] of Object.entries(node.properties ?? {})) {
      count++;
      if (!child.description || child.description.length < 15) missing.push(at === "(root)" ? key : `${at}.${key}`);
    }
  }
  assert.ok(count > 40, `walked ${count} keys`);
  assert.deepEqual(missing, [], `keys without a description: ${missing.join(", ")}`);
});

test("schema: every object refuses unknown keys", () => {
  for (const { at, node } of objectNodes(fleetConfigJsonSchema() as SchemaNode)) {
    assert.equal(node.additionalProperties, false, at);
  }
});

// --- worker output patterns ---------------------------------------------------------------

const matchesAny = (patterns: readonly string[], line: string) => patterns.some((p) => new RegExp(p, "i").test(line));

test("quota patterns: recognise every usage-limit message the agent runtimes print, and not ordinary output", () => {
  const quota = [
    "Claude AI usage limit reached|1755615600",
    "Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).",
    "5-hour limit reached \u2219 resets 12pm",
    "Opus weekly limit reached \u2219 resets Oct 31, 9am",
    "You've hit your limit \u00b7 resets 1pm (Europe/Lisbon)",
    "You\u2019ve hit your weekly limit \u00b7 resets Jun 7, 4pm (Europe/Rome)",
    '{"type":"rate_limit_event","rate_limit_info":{"resetsAt":1774447200}}',
    "You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro) or try again at 7:10 AM.",
    "You've hit your usage limit. Try again later.",
    "Quota exceeded. Check your plan and billing details.",
    "Model o3 is at capacity. Please try a different model. Try again in 5m.",
    "You have exhausted your capacity on this model. Your quota will reset after 8h44m7s.",
    "Usage limit reached for gemini-2.5-flash-lite. Access resets at 2:55 PM PST.",
    "You have exhausted your daily quota on this model.",
    "[API Error: RESOURCE_EXHAUSTED]",
    "Your usage limits will reset when your monthly cycle ends on 11/17/2025.",
    "litellm.RateLimitError: VertexAIException - RESOURCE_EXHAUSTED",
    "You exceeded your current quota, please check your plan",
  ];
  const ordinary = [
    "All 42 tests passed",
    "Editing src/limits.ts: raise the usage limit for free accounts",
    '{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","resetsAt":1774447200}}',
    '{"type":"assistant","message":{"content":"done"}}',
  ];
  for (const line of quota) assert.ok(matchesAny(DEFAULT_CONFIG.worker.quota_patterns, line), `not recognised: ${line}`);
  for (const line of ordinary) assert.ok(!matchesAny(DEFAULT_CONFIG.worker.quota_patterns, line), `false alarm: ${line}`);
  for (const line of quota) assert.ok(!matchesAny(DEFAULT_CONFIG.worker.auth_patterns, line), `quota read as auth: ${line}`);
});

test("auth patterns: recognise an expired or missing login", () => {
  for (const line of [
    "OAuth token has expired. Please obtain a new token.",
    "Not logged in \u00b7 Please run /login",
    "Invalid API key \u00b7 Please run /login",
  ]) {
    assert.ok(matchesAny(DEFAULT_CONFIG.worker.auth_patterns, line), line);
  }
  assert.ok(!matchesAny(DEFAULT_CONFIG.worker.auth_patterns, "Add a not-logged-in banner"));
});
