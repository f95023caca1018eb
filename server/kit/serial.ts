// One way to run async work one job at a time, on async-mutex (a kept library: FIFO, a failed
// job releases the lock and rejects only its own caller). `Serial` is one line of jobs;
// `KeyedSerial` one line per key, a key's lock dropped once its line is empty.
import { Mutex } from "async-mutex";

/** Jobs run one at a time, in the order they were given; a failure is its caller's alone. */
export class Serial {
  private readonly mutex = new Mutex();

  run<T>(job: () => Promise<T>): Promise<T> {
    return this.mutex.runExclusive(job);
  }

  /** Whether a job runs now. */
  get busy(): boolean {
    return this.mutex.isLocked();
  }
}

/** One `Serial` per key: jobs of one key run one at a time, different keys side by side. */
export class KeyedSerial<K> {
  private readonly lines = new Map<K, { mutex: Mutex; waiting: number }>();

  run<T>(key: K, job: () => Promise<T>): Promise<T> {
    let line = this.lines.get(key);
    if (!line) {
      line = { mutex: new Mutex(), waiting: 0 };
      this.lines.set(key, line);
    }
    const held = line;
    held.waiting++;
    return held.mutex.runExclusive(job).finally(() => {
      if (--held.waiting === 0 && this.lines.get(key) === held) this.lines.delete(key);
    });
  }

  /** The keys with a job running or waiting. */
  get size(): number {
    return this.lines.size;
  }
}
