// Lanes on real files in temporary directories: append and query, rotation, redaction (checked
// on the raw bytes on disk), truncation, line splitting, and tolerance of damaged files.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { laneRecord, type LaneEntry } from "../schemas/lanes.js";
import {
  LaneQueryError,
  laneDir,
  laneFile,
  lineSplitter,
  openLanes,
  parseSince,
  queryLane,
  redactText,
  type LaneWriterOptions,
} from "../server/lanes/index.js";

const roots: string[] = [];
after(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function tempDir(): string {
  const root = mkdtempSync(join(tmpdir(), "afk-lanes-"));
  roots.push(root);
  return laneDir(root, "Acme", "Widget");
}

/** A clock that advances one second per reading, from a fixed start. */
function steppingClock(startIso = "2025-03-01T10:00:00.000Z", stepMs = 1000): () => Date {
  let t = Date.parse(startIso);
  return () => {
    const now = new Date(t);
    t += stepMs;
    return now;
  };
}

function writer(dir: string, options: Partial<LaneWriterOptions> = {}) {
  return openLanes({ dir, secrets: () => [], clock: steppingClock(), ...options });
}

/** Every byte under `dir`, as one string, for "appears nowhere on disk" checks. */
function rawBytes(dir: string): string {
  return readdirSync(dir)
    .map((name) => readFileSync(join(dir, name)).toString("latin1"))
    .join("\n");
}

describe("laneDir", () => {
  test("lays lanes out per project, case-folded", () => {
    assert.equal(laneDir("/state", "Acme", "Widget.js"), join("/state", "lanes", "acme", "widget.js"));
  });
  test("refuses names that are not plain path segments", () => {
    assert.throws(() => laneDir("/state", "..", "x"), /owner "\.\." is not a plain name/);
    assert.throws(() => laneDir("/state", "acme", "a/b"), /name "a\/b" is not a plain name/);
  });
});

describe("append and query", () => {
  test("records go to their lane's file and come back in order, with filters", async () => {
    const dir = tempDir();
    const lanes = writer(dir);
    lanes.append("supervisor", { event: "tick_started", msg: "tick 1" });
    lanes.append("worker", { event: "worker_spawned", msg: "spawned", issue: 7, pid: 4242, attempt: 1, instance: "abc123" });
    lanes.append("worker", { event: "worker_output", msg: "hello", issue: 8, level: "debug" });
    lanes.append("worker", { event: "worker_failed", msg: "exit 1", issue: 7, level: "error", data: { code: 1 } });
    lanes.append("monitor", { event: "stall_suspected", msg: "quiet", issue: 7, level: "warn" });
    lanes.close();

    assert.deepEqual(readdirSync(dir).sort(), ["monitor.jsonl", "supervisor.jsonl", "worker.jsonl"]);

    const worker = await queryLane({ dir, lane: "worker" });
    assert.deepEqual(
      worker.records.map((r) => r.event),
      ["worker_spawned", "worker_output", "worker_failed"],
    );
    assert.equal(worker.truncated, false);
    assert.equal(worker.files_read, 1);
    assert.equal(worker.malformed, 0);
    const first = worker.records[0]!;
    assert.deepEqual(first, {
      ts: "2025-03-01T10:00:01.000Z",
      lane: "worker",
      level: "info",
      event: "worker_spawned",
      msg: "spawned",
      issue: 7,
      instance: "abc123",
      attempt: 1,
      pid: 4242,
    });
    for (const record of worker.records) assert.ok(laneRecord.safeParse(record).success);

    const issue7 = await queryLane({ dir, lane: "worker", issue: 7 });
    assert.deepEqual(
      issue7.records.map((r) => r.event),
      ["worker_spawned", "worker_failed"],
    );
    const warnings = await queryLane({ dir, lane: "worker", level: "warn" });
    assert.deepEqual(
      warnings.records.map((r) => r.level),
      ["error"],
    );
    assert.deepEqual(
      (await queryLane({ dir, lane: "supervisor" })).records.map((r) => r.msg),
      ["tick 1"],
    );
    assert.deepEqual((await queryLane({ dir, lane: "liveness" })).records, []);
  });

  test("a missing directory is an empty answer", async () => {
    const result = await queryLane({ dir: join(tempDir(), "nope"), lane: "worker" });
    assert.deepEqual(result, { records: [], truncated: false, files_read: 0, malformed: 0 });
  });

  test("tail returns the newest records, oldest first, and says when it left some out", async () => {
    const dir = tempDir();
    const lanes = writer(dir);
    for (let i = 1; i <= 50; i += 1) lanes.append("worker", { event: "line", msg: `n${i}`, issue: i % 2 === 0 ? 2 : 1 });
    lanes.close();
    const last5 = await queryLane({ dir, lane: "worker", tail: 5 });
    assert.deepEqual(
      last5.records.map((r) => r.msg),
      ["n46", "n47", "n48", "n49", "n50"],
    );
    assert.equal(last5.truncated, true);
    const evens = await queryLane({ dir, lane: "worker", issue: 2, tail: 3 });
    assert.deepEqual(
      evens.records.map((r) => r.msg),
      ["n46", "n48", "n50"],
    );
    const all = await queryLane({ dir, lane: "worker", tail: 50 });
    assert.equal(all.records.length, 50);
    assert.equal(all.truncated, false);
    assert.equal((await queryLane({ dir, lane: "worker", tail: 1_000_000 })).records.length, 50, "tail is clamped, not refused");
    await assert.rejects(queryLane({ dir, lane: "worker", tail: 0 }), LaneQueryError);
  });

  test("since takes an ISO time or a duration before now", async () => {
    const dir = tempDir();
    // One record a minute from 10:00 to 10:59.
    const lanes = writer(dir, { clock: steppingClock("2025-03-01T10:00:00.000Z", 60_000) });
    for (let i = 0; i < 60; i += 1) lanes.append("liveness", { event: "heartbeat", msg: `m${i}` });
    lanes.close();
    const absolute = await queryLane({ dir, lane: "liveness", since: "2025-03-01T10:55:00Z" });
    assert.deepEqual(
      absolute.records.map((r) => r.msg),
      ["m55", "m56", "m57", "m58", "m59"],
    );
    const now = new Date("2025-03-01T11:00:00.000Z");
    const relative = await queryLane({ dir, lane: "liveness", since: "15m", now });
    assert.equal(relative.records.length, 15);
    assert.equal(relative.records[0]!.msg, "m45");
    assert.equal((await queryLane({ dir, lane: "liveness", since: "2h", now })).records.length, 60);
    assert.equal((await queryLane({ dir, lane: "liveness", since: "1d", now })).records.length, 60);
    assert.equal((await queryLane({ dir, lane: "liveness", since: "30s", now })).records.length, 0);
    // Offsets are honoured: 11:58+01:00 is 10:58Z.
    assert.equal((await queryLane({ dir, lane: "liveness", since: "2025-03-01T11:58:00+01:00" })).records.length, 2);
  });

  test("bad queries are refused with the fix in the message", async () => {
    assert.throws(() => parseSince("yesterday"), /since "yesterday" is neither an ISO time .* nor a duration .*"15m"/);
    assert.equal(parseSince("2h", new Date("2025-01-01T02:00:00Z")), Date.parse("2025-01-01T00:00:00Z"));
    const dir = tempDir();
    await assert.rejects(queryLane({ dir, lane: "../etc" as never }), /lane "\.\.\/etc" is not a lane: use one of supervisor, worker/);
    await assert.rejects(queryLane({ dir, lane: "worker", since: "soon" }), LaneQueryError);
    await assert.rejects(queryLane({ dir, lane: "worker", issue: -3 }), /issue -3 must be a positive issue number/);
  });

  test("the writer never throws on odd input, and reports I/O failures instead of raising", async () => {
    const dir = tempDir();
    const errors: string[] = [];
    const lanes = writer(dir, { onError: (error, lane) => errors.push(`${lane}: ${error.message}`) });
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    const odd = {
      event: "Worker Exited!",
      msg: 42,
      issue: Number.NaN,
      pid: -1,
      data: { cyclic, big: 10n, when: new Date("2025-01-01T00:00:00Z"), err: new Error("boom"), nothing: undefined, inf: Infinity },
    } as unknown as LaneEntry;
    lanes.append("monitor", odd);
    lanes.close();
    const [record] = (await queryLane({ dir, lane: "monitor" })).records;
    assert.ok(record);
    assert.equal(record.event, "worker_exited_");
    assert.equal(record.msg, "42");
    assert.equal(record.issue, undefined);
    assert.equal(record.pid, undefined);
    assert.deepEqual(record.data, {
      cyclic: { name: "loop", self: "[circular]" },
      big: "10",
      when: "2025-01-01T00:00:00.000Z",
      err: { name: "Error", message: "boom" },
      inf: "Infinity",
    });

    // A file where the directory should be: every append fails, none throws.
    const blocked = join(dir, "blocked");
    writeFileSync(blocked, "");
    const broken = writer(join(blocked, "lanes"), { onError: (error, lane) => errors.push(`${lane}: ${error.message}`) });
    broken.append("worker", { event: "x", msg: "y" });
    broken.append("worker", { event: "x", msg: "y" });
    assert.equal(broken.stats().failed, 2);
    assert.equal(errors.length, 2);
    assert.match(errors[0]!, /^worker: .*(ENOTDIR|EEXIST)/);
  });
});

describe("rotation", () => {
  test("a lane rotates at maxBytes, keeps `keep` files, and queries span them", async () => {
    const dir = tempDir();
    const maxBytes = 4096;
    const lanes = writer(dir, { maxBytes, keep: 2, maxLineBytes: 1024 });
    const total = 200;
    for (let i = 1; i <= total; i += 1) lanes.append("worker", { event: "worker_output", msg: `line ${i} ${"x".repeat(60)}`, issue: 3 });
    lanes.append("supervisor", { event: "tick_done", msg: "unaffected" });
    assert.ok(lanes.stats().rotations > 2);
    lanes.close();

    assert.deepEqual(
      readdirSync(dir).sort(),
      ["supervisor.jsonl", "worker.1.jsonl", "worker.2.jsonl", "worker.jsonl"],
      "the current file and exactly `keep` rotated ones",
    );
    for (const name of readdirSync(dir)) assert.ok(statSync(join(dir, name)).size <= maxBytes, `${name} stays within maxBytes`);

    const kept = readdirSync(dir)
      .filter((n) => n.startsWith("worker"))
      .reduce((sum, name) => sum + readFileSync(join(dir, name), "utf8").trim().split("\n").length, 0);
    const result = await queryLane({ dir, lane: "worker", tail: 5000 });
    assert.equal(result.files_read, 3);
    assert.equal(result.records.length, kept);
    assert.equal(result.truncated, false);
    const numbers = result.records.map((r) => Number(/line (\d+)/.exec(r.msg)![1]));
    assert.equal(numbers.at(-1), total, "the newest record comes last");
    assert.deepEqual(
      numbers,
      numbers.map((_, i) => total - kept + 1 + i),
      "contiguous and chronological across files",
    );
    // The oldest file (worker.2) holds the oldest records.
    assert.match(readFileSync(join(dir, "worker.2.jsonl"), "utf8"), new RegExp(`"line ${numbers[0]} `));

    // A short tail reads only the current file.
    const short = await queryLane({ dir, lane: "worker", tail: 2 });
    assert.equal(short.files_read, 1);
    assert.equal(short.truncated, true);
  });

  test("a writer with a smaller keep prunes older rotated files; keep 0 keeps none", async () => {
    const dir = tempDir();
    const big = writer(dir, { maxBytes: 2048, keep: 4, maxLineBytes: 1024 });
    for (let i = 0; i < 100; i += 1) big.append("monitor", { event: "x", msg: "y".repeat(100) });
    big.close();
    assert.ok(readdirSync(dir).includes("monitor.4.jsonl"));
    const small = writer(dir, { maxBytes: 2048, keep: 1, maxLineBytes: 1024 });
    small.append("monitor", { event: "x", msg: "after" });
    small.close();
    assert.deepEqual(readdirSync(dir).sort(), ["monitor.1.jsonl", "monitor.jsonl"]);

    const none = writer(dir, { maxBytes: 2048, keep: 0, maxLineBytes: 1024 });
    for (let i = 0; i < 100; i += 1) none.append("liveness", { event: "x", msg: "z".repeat(100) });
    none.close();
    assert.deepEqual(
      readdirSync(dir).filter((n) => n.startsWith("liveness")),
      ["liveness.jsonl"],
    );
  });

  test("a file rotated or removed behind the writer's back is reopened", async () => {
    const dir = tempDir();
    let wall = 0;
    const realNow = Date.now;
    const lanes = writer(dir);
    lanes.append("worker", { event: "a", msg: "before" });
    rmSync(laneFile(dir, "worker"));
    Date.now = () => realNow() + (wall += 5000);
    try {
      lanes.append("worker", { event: "b", msg: "after" });
    } finally {
      Date.now = realNow;
    }
    lanes.close();
    assert.deepEqual(
      (await queryLane({ dir, lane: "worker" })).records.map((r) => r.msg),
      ["after"],
    );
  });
});

describe("redaction", () => {
  const secret = "s3cr3t-Token-value-0123456789";
  const ghp = `ghp_${"A1b2C3d4E5".repeat(3)}abcdef`;
  const skAnt = `sk-ant-api03-${"Zq9".repeat(10)}`;

  test("configured secrets and token shapes never reach the disk", async () => {
    const dir = tempDir();
    const lanes = writer(dir, { secrets: () => [secret, "", "abc"] });
    lanes.append("worker", {
      event: "worker_output",
      msg: `cloning https://x-access-token:${secret}@github.com/acme/widget.git with ${ghp}`,
      data: {
        env: { GITHUB_TOKEN: secret, PATH: "/usr/bin" },
        nested: [{ deeper: { header: `Authorization: token ${secret}`, note: `key=${skAnt}` } }],
        [`key-${secret}`]: "secret in a key",
        url: `https://octocat:hunter2hunter2@example.com/x`,
        encoded: encodeURIComponent(`${secret}/&`),
        extraheader: `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${secret}`).toString("base64")}`,
        b64: Buffer.from(`x-access-token:${secret}`).toString("base64"),
        quoted: `say "${secret}"`,
      },
    });
    lanes.append("supervisor", { event: "curl", msg: `-H "authorization: Bearer ${"q".repeat(30)}" and Bearer ${"r".repeat(20)}` });
    lanes.append("monitor", { event: "headers", msg: "json", data: { headers: { Authorization: "Bearer abc.def.ghi", accept: "json" } } });
    lanes.append("liveness", { event: "beat", msg: `token ${secret} abc`, instance: `inst-${secret}` });
    lanes.close();

    const disk = rawBytes(dir);
    for (const leak of [secret, ghp, skAnt, "hunter2hunter2", "q".repeat(30), "r".repeat(20), "abc.def.ghi"]) {
      assert.ok(!disk.includes(leak), `${leak.slice(0, 12)}… must not be on disk`);
    }
    assert.ok(!disk.includes(Buffer.from(`x-access-token:${secret}`).toString("base64")));
    assert.ok(!disk.includes(encodeURIComponent(secret)));
    assert.ok(!disk.includes("s3cr3t"), "not even a fragment");

    const [record] = (await queryLane({ dir, lane: "worker" })).records;
    assert.ok(record);
    assert.equal(record.msg, "cloning https://x-access-token:[redacted]@github.com/acme/widget.git with [redacted]");
    const data = record.data as Record<string, unknown>;
    assert.deepEqual(data.env, { GITHUB_TOKEN: "[redacted]", PATH: "/usr/bin" });
    assert.deepEqual(data.nested, [{ deeper: { header: "Authorization: token [redacted]", note: "key=[redacted]" } }]);
    assert.equal(data["key-[redacted]"], "secret in a key");
    assert.equal(data.url, "https://octocat:[redacted]@example.com/x");
    assert.equal(data.extraheader, "AUTHORIZATION: basic [redacted]");
    // Short strings are not treated as secrets (they would shred ordinary text).
    assert.ok(disk.includes("[redacted] abc"));
    const [sup] = (await queryLane({ dir, lane: "supervisor" })).records;
    assert.equal(sup!.msg, '-H "authorization: Bearer [redacted]" and Bearer [redacted]');
    const [mon] = (await queryLane({ dir, lane: "monitor" })).records;
    assert.deepEqual(mon!.data, { headers: { Authorization: "[redacted]", accept: "json" } });
  });

  test("the secret list is read on every append (a refreshed token is redacted too)", () => {
    const dir = tempDir();
    let tokens = ["first-token-aaaaaaaa"];
    const lanes = writer(dir, { secrets: () => tokens });
    lanes.append("worker", { event: "a", msg: "first-token-aaaaaaaa" });
    tokens = ["second-token-bbbbbbbb"];
    lanes.append("worker", { event: "b", msg: "second-token-bbbbbbbb" });
    lanes.close();
    const disk = rawBytes(dir);
    assert.ok(!disk.includes("first-token"));
    assert.ok(!disk.includes("second-token"));
  });

  test("a secret that survives string redaction (digits of a number) withholds the record", async () => {
    const dir = tempDir();
    const lanes = writer(dir, { secrets: () => ["98765432"] });
    lanes.append("worker", { event: "worker_spawned", msg: "spawned", pid: 98765432, data: { n: 1987654321 } });
    lanes.close();
    assert.ok(!rawBytes(dir).includes("98765432"));
    const [record] = (await queryLane({ dir, lane: "worker" })).records;
    assert.equal(record!.event, "record_withheld");
    assert.equal(record!.level, "warn");
  });

  test("redactText leaves ordinary text alone", () => {
    const prose = "the bearer of bad news: authorization failed at https://github.com/acme/widget (task-runner sk-1)";
    assert.equal(redactText(prose), prose);
    assert.equal(redactText(`x ${secret} y`, [secret]), "x [redacted] y");
  });
});

describe("truncation", () => {
  test("a huge msg and huge data are cut to the line bound, with a marker, still valid", async () => {
    const dir = tempDir();
    const secret = "tail-secret-0123456789";
    const lanes = writer(dir, { secrets: () => [secret] });
    lanes.append("worker", {
      event: "worker_output",
      msg: "m".repeat(100_000) + secret,
      data: { blob: "d".repeat(50_000), list: Array.from({ length: 500 }, (_, i) => i) },
      issue: 5,
    });
    lanes.append("worker", { event: "after", msg: "small" });
    lanes.close();
    const raw = readFileSync(laneFile(dir, "worker"));
    const lines = raw.toString("utf8").trimEnd().split("\n");
    assert.equal(lines.length, 2);
    assert.ok(Buffer.byteLength(lines[0]!) <= 8 * 1024, `line is ${Buffer.byteLength(lines[0]!)} bytes`);
    assert.ok(!raw.includes(secret) && !raw.includes("tail-secret"));
    const { records } = await queryLane({ dir, lane: "worker" });
    const big = records[0]!;
    assert.equal(big.truncated, true);
    assert.equal(big.issue, 5);
    assert.match(big.msg, /…\[truncated \d+ chars\]$/);
    assert.ok(typeof (big.data as { preview?: unknown }).preview === "string");
    assert.equal(records[1]!.msg, "small");
  });

  test("multi-byte text is cut on character boundaries and within the byte bound", async () => {
    const dir = tempDir();
    const lanes = writer(dir, { maxLineBytes: 1024 });
    lanes.append("worker", { event: "emoji", msg: '😀é"\n'.repeat(5000) });
    lanes.close();
    const line = readFileSync(laneFile(dir, "worker"), "utf8").trimEnd();
    assert.ok(Buffer.byteLength(line) <= 1024);
    const [record] = (await queryLane({ dir, lane: "worker" })).records;
    assert.ok(record!.msg.startsWith('😀é"\n😀'));
    assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])/.test(record!.msg), "no lone high surrogate");
  });
});

describe("damaged files", () => {
  test("malformed lines are skipped and counted; a torn last line too", async () => {
    const dir = tempDir();
    const lanes = writer(dir);
    lanes.append("worker", { event: "one", msg: "1" });
    const path = laneFile(dir, "worker");
    appendFileSync(path, "not json at all\n");
    appendFileSync(path, '{"ts":"2025-03-01T10:00:05.000Z","lane":"worker","level":"loud","event":"x","msg":"bad level"}\n');
    appendFileSync(path, "[1,2,3]\n\n");
    lanes.append("worker", { event: "two", msg: "2" });
    appendFileSync(path, '{"ts":"2025-03-01T10:00:09.000Z","lane":"wor');
    const result = await queryLane({ dir, lane: "worker" });
    assert.deepEqual(
      result.records.map((r) => r.msg),
      ["1", "2"],
    );
    assert.equal(result.malformed, 4);
  });

  test("long files are read backwards across block boundaries", async () => {
    const dir = tempDir();
    const lanes = writer(dir);
    for (let i = 0; i < 2000; i += 1) lanes.append("worker", { event: "out", msg: `r${i} ${"w".repeat(i % 300)}`, issue: i === 3 ? 99 : 1 });
    lanes.close();
    assert.ok(statSync(laneFile(dir, "worker")).size > 3 * 64 * 1024);
    const all = await queryLane({ dir, lane: "worker", tail: 5000 });
    assert.equal(all.records.length, 2000);
    assert.deepEqual(
      all.records.map((r) => Number(/^r(\d+)/.exec(r.msg)![1])),
      Array.from({ length: 2000 }, (_, i) => i),
    );
    const one = await queryLane({ dir, lane: "worker", issue: 99 });
    assert.deepEqual(
      one.records.map((r) => r.msg),
      ["r3 www"],
    );
  });
});

describe("lineSplitter", () => {
  test("partial lines, CRLF and lone CR across chunk boundaries", () => {
    const s = lineSplitter();
    assert.deepEqual(s.push("hel"), []);
    assert.deepEqual(s.push("lo\nwor"), ["hello"]);
    assert.deepEqual(s.push("ld\r"), ["world"]);
    assert.deepEqual(s.push("\nnext\r\nthird\n\n"), ["next", "third", ""]);
    assert.deepEqual(s.push("progress 10%\rprogress 20%\r"), ["progress 10%", "progress 20%"]);
    assert.deepEqual(s.push("\r\n"), [""], "a CR that followed a CR-ended chunk is its own empty line");
    assert.deepEqual(s.push("unterminated"), []);
    assert.deepEqual(s.flush(), ["unterminated"]);
    assert.deepEqual(s.flush(), []);
  });

  test("multi-byte characters split across Buffer chunks", () => {
    const s = lineSplitter();
    const bytes = Buffer.from("héllo 😀\nok\n");
    const out: string[] = [];
    for (let i = 0; i < bytes.length; i += 1) out.push(...s.push(bytes.subarray(i, i + 1)));
    out.push(...s.flush());
    assert.deepEqual(out, ["héllo 😀", "ok"]);
    assert.deepEqual(lineSplitter().push(new Uint8Array([0x61, 0x0a])), ["a"]);
  });

  test("over-long lines keep a bounded prefix and a marker; ANSI is stripped", () => {
    const s = lineSplitter({ maxLineLength: 10 });
    assert.deepEqual(s.push("0123456789ABCDEF"), []);
    assert.deepEqual(s.push("GHIJ\nshort\n"), ["0123456789…[truncated 10 chars]", "short"]);
    assert.deepEqual(s.push("x".repeat(25)), []);
    assert.deepEqual(s.flush(), ["xxxxxxxxxx…[truncated 15 chars]"]);
    assert.deepEqual(lineSplitter().push("\x1b[32mgreen\x1b[0m \x1b]0;title\x07done\n"), ["green done"]);
    assert.deepEqual(lineSplitter({ stripAnsi: false }).push("\x1b[1mbold\n"), ["\x1b[1mbold"]);
  });

  test("worker output flows line by line into the worker lane", async () => {
    const dir = tempDir();
    const lanes = writer(dir, { secrets: () => ["chunked-secret-value"] });
    const s = lineSplitter();
    const log = (line: string) => lanes.append("worker", { event: "worker_output", msg: line, issue: 4, data: { stream: "stdout" } });
    // The secret is split across chunks: joined into one line before redaction, it cannot slip through.
    for (const chunk of ["step 1\nusing chunked-sec", "ret-value now\nstep", " 3"]) s.push(chunk).forEach(log);
    s.flush().forEach(log);
    lanes.close();
    assert.ok(!rawBytes(dir).includes("chunked-sec"));
    const { records } = await queryLane({ dir, lane: "worker", issue: 4 });
    assert.deepEqual(
      records.map((r) => r.msg),
      ["step 1", "using [redacted] now", "step 3"],
    );
  });
});

describe("a worker's tags in lane records (server/worker-port/port.ts, WorkerHandle.tags)", () => {
  test("a local process's pid and a workflow run's id are kept; an invalid one is dropped", async () => {
    const dir = tempDir();
    const lanes = writer(dir);
    lanes.append("supervisor", { event: "worker_adopted", msg: "adopted workflow run 1000013", issue: 3, attempt: 1, run: 1000013 });
    lanes.append("supervisor", { event: "worker_adopted", msg: "adopted pid 4242", issue: 4, attempt: 1, pid: 4242 });
    lanes.append("supervisor", { event: "worker_adopted", msg: "a bad tag", issue: 5, run: -3 });
    lanes.close();
    const { records } = await queryLane({ dir, lane: "supervisor" });
    assert.deepEqual(
      records.map((r) => [r.issue, r.pid, r.run]),
      [
        [3, undefined, 1000013],
        [4, 4242, undefined],
        [5, undefined, undefined],
      ],
    );
  });
});
