// What a finished worker left behind (precedence table) and the strict verdict-file reader.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Verdict } from "../server/state/markers.js";
import {
  readVerdictFile,
  VerdictFileError,
  VERDICT_FILE_MAX_BYTES,
  workerOutcome,
  type VerdictFileProblem,
  type WorkerOutcomeInput,
  type WorkerOutcomeKind,
} from "../server/agent/outcome.js";

const satisfied: Verdict = { kind: "already-satisfied", reason: "exists already" };
const blocked: Verdict = { kind: "blocked", reason: "needs #4", blockedBy: [4] };
const givingUp: Verdict = { kind: "giving-up", reason: "cannot" };

interface Row {
  name: string;
  input: Partial<WorkerOutcomeInput>;
  kind: WorkerOutcomeKind;
  verdict?: Verdict | null;
  note?: RegExp;
}

const none: WorkerOutcomeInput = { commitsAhead: 0, dirty: false, verdict: null, prOpened: false };

const rows: Row[] = [
  { name: "commits, no verdict → commits", input: { commitsAhead: 2 }, kind: "commits", verdict: null },
  { name: "nothing at all → nothing (idle_failed)", input: {}, kind: "nothing" },
  { name: "only uncommitted changes → nothing, noted", input: { dirty: true }, kind: "nothing", note: /uncommitted/ },
  { name: "already-satisfied, no changes → verdict", input: { verdict: satisfied }, kind: "verdict", verdict: satisfied },
  {
    name: "already-satisfied refuted by commits → commits win",
    input: { verdict: satisfied, commitsAhead: 1 },
    kind: "commits",
    verdict: null,
    note: /refuted/,
  },
  {
    name: "already-satisfied with only dirty files → verdict (the fleet verifies the empty diff)",
    input: { verdict: satisfied, dirty: true },
    kind: "verdict",
    note: /uncommitted/,
  },
  { name: "blocked → verdict", input: { verdict: blocked }, kind: "verdict", verdict: blocked },
  {
    name: "blocked wins over commits (not done: not landed)",
    input: { verdict: blocked, commitsAhead: 3 },
    kind: "verdict",
    verdict: blocked,
    note: /wins over 3 commit/,
  },
  { name: "giving-up wins over commits", input: { verdict: givingUp, commitsAhead: 1 }, kind: "verdict", verdict: givingUp, note: /kept for the next attempt/ },
  {
    name: "giving-up with a PR the worker opened → verdict, noted",
    input: { verdict: givingUp, prOpened: true, commitsAhead: 1 },
    kind: "verdict",
    note: /opened a PR/,
  },
  { name: "PR opened by the worker, no verdict → commits", input: { prOpened: true, commitsAhead: 1 }, kind: "commits" },
  { name: "PR opened but no commits ahead → commits, noted", input: { prOpened: true }, kind: "commits", note: /no commits ahead/ },
];

describe("workerOutcome", () => {
  for (const row of rows) {
    it(row.name, () => {
      const outcome = workerOutcome({ ...none, ...row.input });
      assert.equal(outcome.kind, row.kind);
      if (row.verdict !== undefined) assert.deepEqual(outcome.verdict, row.verdict);
      if (row.note)
        assert.ok(
          outcome.notes.some((n) => row.note!.test(n)),
          outcome.notes.join(" | "),
        );
      if (outcome.kind !== "verdict") assert.equal(outcome.verdict, null);
    });
  }
});

describe("readVerdictFile", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "afk-verdict-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function file(name: string, content: string | Buffer): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, content);
    return path;
  }

  const valid: Array<[string, string, Verdict]> = [
    ["already-satisfied", '{"verdict":"already-satisfied","reason":"Done in #3."}', { kind: "already-satisfied", reason: "Done in #3." }],
    [
      "blocked with blocked_by (deduplicated, sorted)",
      '{"verdict":"blocked","reason":"waits","blocked_by":[9,4,9]}',
      { kind: "blocked", reason: "waits", blockedBy: [4, 9] },
    ],
    [
      "giving-up, reason trimmed, controls stripped",
      '{"verdict":"giving-up","reason":"  tried\\u0000 A\\r\\nthen B  "}',
      { kind: "giving-up", reason: "tried A\nthen B" },
    ],
    [
      "the marker's own key `kind`, a BOM, and unknown keys ignored",
      '\uFEFF{"kind":"blocked","reason":"x","confidence":0.9}',
      { kind: "blocked", reason: "x" },
    ],
    ["unicode reason", '{"verdict":"giving-up","reason":"naïve 🚀"}', { kind: "giving-up", reason: "naïve 🚀" }],
  ];
  for (const [name, content, want] of valid) {
    it(`valid: ${name}`, async () => {
      assert.deepEqual(await readVerdictFile(await file(`${name.slice(0, 10)}.json`, content)), want);
    });
  }

  it("absent → null", async () => {
    assert.equal(await readVerdictFile(join(dir, "none.json")), null);
    assert.equal(await readVerdictFile(join(dir, "none", "deeper.json")), null);
  });

  const invalid: Array<[string, string | Buffer, VerdictFileProblem]> = [
    ["not JSON", "verdict: blocked", "not_json"],
    ["truncated JSON", '{"verdict":"blocked",', "not_json"],
    ["not UTF-8", Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), "not_json"],
    ["an array", '["blocked"]', "bad_shape"],
    ["no verdict key", '{"reason":"x"}', "bad_shape"],
    ["unknown kind", '{"verdict":"done","reason":"x"}', "unknown_kind"],
    ["kind in the wrong case", '{"verdict":"Blocked","reason":"x"}', "unknown_kind"],
    ["no reason", '{"verdict":"blocked"}', "bad_reason"],
    ["empty reason", '{"verdict":"blocked","reason":"   "}', "bad_reason"],
    ["reason not a string", '{"verdict":"blocked","reason":42}', "bad_reason"],
    ["reason too long", JSON.stringify({ verdict: "giving-up", reason: "x".repeat(4_001) }), "bad_reason"],
    ["bad blocked_by", '{"verdict":"blocked","reason":"x","blocked_by":["#4"]}', "bad_blocked_by"],
    ["oversized file", JSON.stringify({ verdict: "blocked", reason: "x", pad: "y".repeat(VERDICT_FILE_MAX_BYTES) }), "too_large"],
  ];
  for (const [name, content, problem] of invalid) {
    it(`malformed: ${name} → ${problem}`, async () => {
      const result = await readVerdictFile(await file(`bad-${name.replace(/\W+/g, "-")}.json`, content));
      assert.ok(result instanceof VerdictFileError, `got ${JSON.stringify(result)}`);
      assert.equal(result.problem, problem);
    });
  }

  it("refuses a symlink (to a secret) without quoting its content", async () => {
    const secret = await file("secret.txt", "hunter2-super-secret");
    const link = join(dir, "link.json");
    await symlink(secret, link);
    const result = await readVerdictFile(link);
    assert.ok(result instanceof VerdictFileError);
    assert.equal(result.problem, "not_a_file");
    assert.ok(!result.message.includes("hunter2"));
  });

  it("refuses a directory and a FIFO without blocking", async () => {
    const asDir = await readVerdictFile(dir);
    assert.ok(asDir instanceof VerdictFileError && asDir.problem === "not_a_file");
    const fifo = join(dir, "fifo.json");
    try {
      execFileSync("mkfifo", [fifo]);
    } catch {
      return; // no mkfifo here
    }
    const result = await readVerdictFile(fifo);
    assert.ok(result instanceof VerdictFileError && result.problem === "not_a_file");
  });

  it("error messages never echo file content", async () => {
    const result = await readVerdictFile(await file("leak.json", '{"verdict":"ghp_secretsecretsecret","reason":"x"}'));
    assert.ok(result instanceof VerdictFileError);
    assert.ok(!result.message.includes("ghp_"));
  });
});
