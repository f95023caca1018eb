// Durable state for the forge: one JSON file, replaced atomically (write a temp file, then
// rename over the old one) so a crash leaves either the old or the new state, never half.
// Writes are coalesced: a burst of changes schedules one write a few milliseconds later,
// and a change during a write schedules exactly one more.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeAtomic } from "../kit/atomic-file.js";
import { STATE_VERSION, type PersistedState } from "./state.js";

export const STATE_FILE = "forge-state.json";

export async function loadState(dir: string): Promise<PersistedState | null> {
  let text: string;
  try {
    text = await readFile(join(dir, STATE_FILE), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  const data = JSON.parse(text) as PersistedState;
  if (data.version !== STATE_VERSION) {
    throw new Error(`local forge: ${join(dir, STATE_FILE)} has state version ${data.version}, expected ${STATE_VERSION}; use a fresh --dir`);
  }
  return data;
}

export class StatePersister {
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private dirty = false;
  /** How many times the file was actually written (tests check the coalescing). */
  writes = 0;

  constructor(
    private readonly dir: string,
    private readonly snapshot: () => PersistedState,
    private readonly delayMs = 25,
  ) {}

  /** Something changed: write soon, once for a whole burst. */
  schedule(): void {
    this.dirty = true;
    if (this.timer || this.writing) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.writeNow();
    }, this.delayMs);
    // A pending write must not keep a test process alive; close() flushes it anyway.
    this.timer.unref();
  }

  /** Writes any pending change now and waits for it to be on disk (a few tries on error). */
  async flush(): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      if (this.timer) {
        clearTimeout(this.timer);
        this.timer = null;
      }
      if (this.writing) {
        await this.writing;
        continue;
      }
      if (!this.dirty) return;
      await this.writeNow();
    }
  }

  private async writeNow(): Promise<void> {
    if (this.writing) return this.writing;
    this.dirty = false;
    const text = JSON.stringify(this.snapshot());
    const final = join(this.dir, STATE_FILE);
    this.writing = (async () => {
      try {
        await writeAtomic(final, text);
        this.writes++;
      } catch (err) {
        // Leave the state dirty so the next change or close() retries the write.
        this.dirty = true;
        console.error(`local forge: could not write ${final}: ${(err as Error).message}`);
      }
    })();
    try {
      await this.writing;
    } finally {
      this.writing = null;
    }
    if (this.dirty && !this.timer) this.schedule();
  }
}
