// The shared mechanisms of server/kit: each behaves as the copies it replaced did.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { KeyedSerial, Serial } from "../server/kit/serial.js";

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
