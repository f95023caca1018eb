// A commit a ref or a worktree's HEAD names, answered again without running git while nothing git
// resolved it from changed: a quiet tick asks it of every in-flight worktree, and a git process
// per worker per tick was most of what a wide fleet of quiet workers cost the host.
//
// What the answer rests on, read each time (a few small files, no process): the worktree's `.git`
// file and its git dir's HEAD and `commondir` (by content), and the branch's loose ref file and
// packed-refs (by inode, size and times: git replaces a ref file by renaming a new one over it,
// so a moved ref is a new file). Anything this cannot see through (a ref with neither a loose
// file nor packed-refs: a reftable repository, an unborn branch; a symbolic ref outside
// refs/heads and refs/remotes) is asked of git every time. Git's answer is the only answer: the
// cache only says when asking again would tell the same.
import { readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

/** Cache entries kept at most; past it the cache starts over. */
const ENTRIES = 1024;

function text(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

function stamp(path: string): string | null {
  const s = statSync(path, { throwIfNoEntry: false });
  return s ? `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}` : null;
}

/** The files a ref's value is read from in `common` (loose, then packed), as one stamp; null when neither is there. */
function refStamp(common: string, ref: string): string | null {
  if (!/^refs\/(heads|remotes)\/[^\0]+$/.test(ref) || ref.includes("..")) return null;
  let loose: string | null;
  try {
    loose = stamp(join(common, ref));
  } catch {
    loose = null; // ENOTDIR: a reftable repository's stub, or a ref under a file's name
  }
  const packed = stamp(join(common, "packed-refs"));
  return loose === null && packed === null ? null : `${loose}|${packed}`;
}

/** A git dir's common dir (a linked worktree's git dir names it in `commondir`). */
function commonDir(gitDir: string): string {
  const named = text(join(gitDir, "commondir"));
  return named === null ? gitDir : resolve(gitDir, named.trim());
}

/** The git dir of a worktree or repository `dir` (its `.git` file or directory), else `dir` itself (a bare repository); null when a `.git` file names none. */
function gitDirOf(dir: string): string | null {
  const dotGit = join(dir, ".git");
  const file = text(dotGit);
  if (file !== null) {
    const m = /^gitdir: (.+)$/m.exec(file);
    return m ? resolve(dir, m[1]!.trim()) : null;
  }
  return statSync(dotGit, { throwIfNoEntry: false })?.isDirectory() ? dotGit : dir;
}

/** What a worktree's HEAD rests on, or null when git must be asked. */
function headStamp(worktree: string): string | null {
  const gitDir = gitDirOf(worktree);
  if (gitDir === null) return null;
  const head = text(join(gitDir, "HEAD"));
  if (head === null) return null;
  const symbolic = /^ref: (\S+)\s*$/.exec(head);
  if (!symbolic) return /^[0-9a-f]{40,64}\s*$/.test(head) ? `${gitDir}\0${head}` : null;
  const common = commonDir(gitDir);
  const ref = refStamp(common, symbolic[1]!);
  return ref === null ? null : `${gitDir}\0${common}\0${head}\0${ref}`;
}

/** What `ref` rests on in the repository `dir`, or null when git must be asked. */
function refStampIn(dir: string, ref: string): string | null {
  const gitDir = gitDirOf(dir);
  return gitDir === null ? null : refStamp(commonDir(gitDir), ref);
}

export class RevCache {
  private readonly seen = new Map<string, { stamp: string; sha: string }>();
  /** Git runs this cache let through (a miss, or nothing to stamp). */
  readonly stats = { asked: 0 };

  /** The commit `worktree`'s HEAD names, as `ask` (git) tells it; asked again only when what it rests on changed. */
  head(worktree: string, ask: () => Promise<string | null>): Promise<string | null> {
    return this.answer(
      `head\0${worktree}`,
      safe(() => headStamp(worktree)),
      ask,
    );
  }

  /** The commit `ref` (under refs/heads or refs/remotes) names in the repository `dir` (bare, or a worktree), likewise. */
  ref(dir: string, ref: string, ask: () => Promise<string | null>): Promise<string | null> {
    return this.answer(
      `ref\0${dir}\0${ref}`,
      safe(() => refStampIn(dir, ref)),
      ask,
    );
  }

  private async answer(key: string, now: string | null, ask: () => Promise<string | null>): Promise<string | null> {
    const kept = this.seen.get(key);
    if (now !== null && kept?.stamp === now) return kept.sha;
    this.stats.asked += 1;
    const sha = await ask();
    // Stamped before git ran: a change while it ran makes the next stamp differ, and git is asked
    // again. No answer (no such commit, or git failed) is not kept: it is asked again next time.
    if (now === null || sha === null) this.seen.delete(key);
    else {
      if (this.seen.size >= ENTRIES) this.seen.clear();
      this.seen.set(key, { stamp: now, sha });
    }
    return sha;
  }
}

function safe(fn: () => string | null): string | null {
  try {
    return fn();
  } catch {
    return null;
  }
}
