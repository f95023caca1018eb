// The shared mechanisms of server/kit: each behaves as the copies it replaced did.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeyedSerial, Serial } from "../server/kit/serial.js";
import { retry, retryWhile } from "../server/kit/retry.js";
import { writeAtomic, writeAtomicSync } from "../server/kit/atomic-file.js";

/** A promise and its resolver, to hold a job open. */
function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("kit: Serial", () => {
  it("runs jobs one at a time in the order given; a failure is its caller's alone", async () => {
    const serial = new Serial();
    const log: string[] = [];
    const hold = gate();
    const first = serial.run(async () => {
      log.push("a start");
      await hold.opened;
      log.push("a end");
      return "a";
    });
    const second = serial.run(async () => {
      log.push("b");
      throw new Error("b failed");
    });
    const third = serial.run(async () => (log.push("c"), "c"));
    await Promise.resolve();
    assert.equal(serial.busy, true);
    hold.open();
    assert.equal(await first, "a");
    await assert.rejects(second, /b failed/);
    assert.equal(await third, "c");
    assert.deepEqual(log, ["a start", "a end", "b", "c"]);
    assert.equal(serial.busy, false);
  });
});

describe("kit: KeyedSerial", () => {
  it("one line per key, keys side by side, a key forgotten once its line is empty", async () => {
    const keyed = new KeyedSerial<number>();
    const log: string[] = [];
    const hold = gate();
    const one = keyed.run(1, async () => {
      await hold.opened;
      log.push("1a");
    });
    const oneAgain = keyed.run(1, async () => void log.push("1b"));
    const two = keyed.run(2, async () => void log.push("2"));
    await two;
    assert.deepEqual(log, ["2"], "key 2 does not wait for key 1");
    assert.equal(keyed.size, 1);
    hold.open();
    await Promise.all([one, oneAgain]);
    assert.deepEqual(log, ["2", "1a", "1b"]);
    assert.equal(keyed.size, 0);
    await assert.rejects(
      keyed.run(3, () => Promise.reject(new Error("no"))),
      /no/,
    );
    assert.equal(keyed.size, 0, "a failed job leaves no line behind");
  });
});

describe("kit: retry", () => {
  const rows: { name: string; fails: number; retries: number; again?: (e: Error) => boolean; calls: number; told: number; ok: boolean }[] = [
    { name: "succeeds at once", fails: 0, retries: 3, calls: 1, told: 0, ok: true },
    { name: "succeeds on the third try", fails: 2, retries: 3, calls: 3, told: 2, ok: true },
    { name: "gives up after the retries", fails: 9, retries: 2, calls: 3, told: 2, ok: false },
    { name: "an error not worth another try ends it", fails: 9, retries: 3, again: () => false, calls: 1, told: 0, ok: false },
  ];
  for (const row of rows) {
    it(row.name, async () => {
      let calls = 0;
      let told = 0;
      const run = retry(
        async () => {
          calls++;
          if (calls <= row.fails) throw new Error(`try ${calls}`);
          return "done";
        },
        { retries: row.retries, minMs: 1, ...(row.again ? { again: row.again } : {}), onRetry: () => void told++ },
      );
      if (row.ok) assert.equal(await run, "done");
      else await assert.rejects(run, new RegExp(`try ${row.calls}$`));
      assert.deepEqual({ calls, told }, { calls: row.calls, told: row.told });
    });
  }

  it("retryWhile returns the last answer once the retries run out, and a wanted one at once", async () => {
    let calls = 0;
    assert.equal(
      await retryWhile(
        async () => ++calls,
        () => true,
        { retries: 2, minMs: 1 },
      ),
      3,
    );
    calls = 0;
    assert.equal(
      await retryWhile(
        async () => ++calls,
        (n) => n < 2,
        { retries: 5, minMs: 1 },
      ),
      2,
    );
  });
});

describe("kit: writeAtomic", () => {
  it("writes a file whole, owner-only, over an older one, and leaves no temporary file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "afk-kit-"));
    try {
      const path = join(dir, "state.json");
      await writeAtomic(path, "one\n");
      writeAtomicSync(path, "two\n", { durable: true });
      await Promise.all([writeAtomic(path, "three\n"), writeAtomic(path, "four\n")]);
      assert.equal(readFileSync(path, "utf8"), "four\n", "writes of one file land in order");
      assert.equal(statSync(path).mode & 0o777, 0o600);
      assert.deepEqual(readdirSync(dir), ["state.json"]);
      await assert.rejects(writeAtomic(join(dir, "no-such-dir", "x"), "x"), /ENOENT/);
      assert.deepEqual(readdirSync(dir), ["state.json"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
