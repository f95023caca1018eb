// One host process per state dir: a lock file naming the holder's pid and its start time, made
// create-only. A lock whose process is gone (or whose pid was recycled) is stale and replaced;
// breaking it takes a second create-only file, so two starters never both replace it.
import { mkdir, open, readFile, rm } from "node:fs/promises";
import { processStartTime } from "../runtimes/local/pid-files.js";
import { version } from "../version.js";
import { setTimeout as sleep } from "node:timers/promises";

export interface LockRecord {
  pid: number;
  start: string;
  version: string;
  started_at: string;
}

export class StateLockHeld extends Error {
  override readonly name = "StateLockHeld";
  constructor(
    readonly holder: LockRecord,
    readonly path: string,
  ) {
    super(`the state dir is in use by afk-mcp pid ${holder.pid} (version ${holder.version}, since ${holder.started_at}); lock ${path}`);
  }
}

export async function readLock(path: string): Promise<LockRecord | null> {
  try {
    const parsed = JSON.parse(await readFile(path, "utf8")) as Partial<LockRecord>;
    if (!Number.isInteger(parsed.pid) || typeof parsed.start !== "string") return null;
    return parsed as LockRecord;
  } catch {
    return null;
  }
}

/** The process holding the lock, or null when the lock is absent or stale. */
export async function lockHolder(path: string): Promise<LockRecord | null> {
  const record = await readLock(path);
  if (!record) return null;
  return (await processStartTime(record.pid)) === record.start ? record : null;
}

async function createExclusive(path: string, text: string): Promise<boolean> {
  try {
    const handle = await open(path, "wx", 0o600);
    await handle.writeFile(text);
    await handle.close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/** Takes the lock for this process or throws StateLockHeld naming the live holder. */
export async function acquireLock(path: string, dir: string): Promise<{ release(): Promise<void> }> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const start = await processStartTime(process.pid);
  if (start === null) throw new Error("cannot read this process's start time (no /proc and no ps)");
  const mine: LockRecord = { pid: process.pid, start, version, started_at: new Date().toISOString() };
  const text = JSON.stringify(mine) + "\n";
  const breaker = `${path}.break`;
  for (let round = 0; round < 50; round += 1) {
    if (await createExclusive(path, text)) {
      return { release: async () => ((await readLock(path))?.pid === process.pid ? rm(path, { force: true }) : undefined) };
    }
    const holder = await lockHolder(path);
    if (holder) throw new StateLockHeld(holder, path);
    // Stale: break it under the breaker file, re-checking inside, so two starters cannot both
    // delete (one of them the other's fresh lock).
    if (await createExclusive(breaker, String(process.pid))) {
      try {
        if (!(await lockHolder(path))) await rm(path, { force: true });
      } finally {
        await rm(breaker, { force: true });
      }
    } else {
      // Another starter is breaking it; a breaker left by a crash goes after a few rounds.
      if (round > 20) await rm(breaker, { force: true });
      await sleep(50 + Math.random() * 100);
    }
  }
  throw new Error(`could not take the lock ${path}: it kept changing; is another afk-mcp daemon starting?`);
}
