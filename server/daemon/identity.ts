// The fleet's instance id per repository, persisted in the state dir: a daemon restarted after
// a crash is the same instance, so it recognises its claims and heartbeat at once and continues
// them from its worktrees instead of waiting out a lease TTL as a stranger.
import { mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { newInstanceId } from "../host/connection.js";
import { repoKey } from "../gh/slug.js";
import { assertInstanceId } from "../state/snapshot.js";
import { writeAtomicSync } from "../kit/atomic-file.js";

function identityFile(root: string, repo: string): string {
  const [owner, name] = repoKey(repo).split("/");
  return join(root, "identity", owner!, `${name!}.instance`);
}

/** The persisted instance id of a repository, or null when none was made yet (or it is unreadable). */
export function readInstance(root: string, repo: string): string | null {
  try {
    const id = readFileSync(identityFile(root, repo), "utf8").trim();
    assertInstanceId(id);
    return id;
  } catch {
    return null;
  }
}

/** The persisted instance id of a repository, made and written on first use. */
export function persistentInstance(root: string, repo: string): string {
  const existing = readInstance(root, repo);
  if (existing) return existing;
  const file = identityFile(root, repo);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const id = newInstanceId();
  writeAtomicSync(file, id + "\n");
  return id;
}
