// When a worker last touched its worktree: the newest mtime under it, for liveness. The scan is
// bounded (entries and depth) so a huge checkout costs a few milliseconds, not a tick.
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";

export interface ScanLimits {
  /** Entries (files and directories) looked at before the scan stops; default 20,000. */
  maxEntries?: number;
  /** Directory depth below the root; default 12. */
  maxDepth?: number;
  /** Directory names never entered; default `.git` and `node_modules`. */
  skip?: readonly string[];
}

const DEFAULT_SKIP = [".git", "node_modules"];

/**
 * The newest modification time of any file or directory under `root` (directories count: a
 * deleted file shows only as its directory's mtime), or null when `root` is missing or empty.
 * Symlinks are not followed. Breadth-first, so a truncated scan has seen the shallow files.
 */
export async function newestMtime(root: string, limits: ScanLimits = {}): Promise<Date | null> {
  const maxEntries = limits.maxEntries ?? 20_000;
  const maxDepth = limits.maxDepth ?? 12;
  const skip = new Set(limits.skip ?? DEFAULT_SKIP);
  let newest = -Infinity;
  let seen = 0;
  let level: string[] = [root];
  for (let depth = 0; level.length > 0 && depth <= maxDepth && seen < maxEntries; depth += 1) {
    const next: string[] = [];
    for (const dir of level) {
      if (seen >= maxEntries) break;
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        continue; // vanished or unreadable while we looked: not our concern
      }
      for (const entry of entries) {
        if (seen >= maxEntries) break;
        if (skip.has(entry.name)) continue;
        seen += 1;
        const path = join(dir, entry.name);
        try {
          const info = await lstat(path);
          if (info.mtimeMs > newest) newest = info.mtimeMs;
        } catch {
          continue;
        }
        if (entry.isDirectory()) next.push(path);
      }
    }
    level = next;
  }
  return Number.isFinite(newest) ? new Date(newest) : null;
}
