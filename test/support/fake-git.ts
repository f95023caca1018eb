// The repository behind the fakes, in memory: commits (each a whole tree of path → content, its
// parents and message), and refs with compare-and-swap. The fake forge keeps its branches here
// (refs/heads/*) and the fake ref store its claims (refs/afk/*), so a fleet on both sees one
// repository, as it does on GitHub: the Waiter reads the base's tip through the RefStore.
//
// Shas are the SHA-1 of the commit's content and a counter (unique, 40 hex, not git's).
import { createHash } from "node:crypto";

export interface FakeCommit {
  sha: string;
  parents: string[];
  /** The whole tree: path → content. */
  tree: ReadonlyMap<string, string>;
  message: string;
}

export class FakeRepo {
  private readonly commits = new Map<string, FakeCommit>();
  private readonly refs = new Map<string, string>();
  private made = 0;

  /** A repository whose `base` branch holds one commit with `files` (as a fresh local forge: a README). */
  constructor(base = "main", files: Record<string, string> = { "README.md": "# demo\n" }) {
    const root = this.commit([], new Map(Object.entries(files)), "Initial commit");
    this.refs.set(`refs/heads/${base}`, root);
  }

  /** Stores a commit; returns its sha. */
  commit(parents: string[], tree: ReadonlyMap<string, string>, message: string): string {
    this.made += 1;
    const hash = createHash("sha1");
    hash.update(`${this.made}\0${parents.join(",")}\0${message}\0`);
    for (const [path, content] of [...tree].sort(([a], [b]) => (a < b ? -1 : 1))) hash.update(`${path}\0${content}\0`);
    const sha = hash.digest("hex");
    this.commits.set(sha, { sha, parents, tree: new Map(tree), message });
    return sha;
  }

  get(sha: string): FakeCommit | undefined {
    return this.commits.get(sha);
  }

  read(ref: string): string | null {
    return this.refs.get(ref) ?? null;
  }

  /** Sets `ref` to `next` (null: deletes it) only if it holds `expected` (null: absent). */
  cas(ref: string, expected: string | null, next: string | null): boolean {
    if ((this.refs.get(ref) ?? null) !== expected) return false;
    if (next === null) this.refs.delete(ref);
    else this.refs.set(ref, next);
    return true;
  }

  /** Refs under `prefix`, by name. */
  list(prefix: string): Array<{ ref: string; sha: string }> {
    return [...this.refs]
      .filter(([ref]) => ref.startsWith(prefix))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([ref, sha]) => ({ ref, sha }));
  }

  /** A commit on `parent` that writes `files` over its tree (a push's new tip). */
  commitOn(parent: string, files: Record<string, string>, message: string): string {
    const tree = new Map(this.tree(parent));
    for (const [path, content] of Object.entries(files)) tree.set(path, content);
    return this.commit([parent], tree, message);
  }

  tree(sha: string): ReadonlyMap<string, string> {
    const commit = this.commits.get(sha);
    if (!commit) throw new Error(`fake git: no commit ${sha}`);
    return commit.tree;
  }

  isAncestor(ancestor: string, of: string): boolean {
    return this.ancestors(of).has(ancestor);
  }

  /** The nearest common ancestor of two commits (breadth first from `b`), or null. */
  mergeBase(a: string, b: string): string | null {
    const ofA = this.ancestors(a);
    const queue = [b];
    const seen = new Set<string>();
    while (queue.length > 0) {
      const sha = queue.shift() as string;
      if (ofA.has(sha)) return sha;
      if (seen.has(sha)) continue;
      seen.add(sha);
      queue.push(...(this.commits.get(sha)?.parents ?? []));
    }
    return null;
  }

  /** Three-way merge of `theirs` into `ours`, file by file: null when a file changed on both sides differently. */
  mergeTrees(ours: string, theirs: string): Map<string, string> | null {
    const baseSha = this.mergeBase(ours, theirs);
    const base = baseSha ? this.tree(baseSha) : new Map<string, string>();
    const o = this.tree(ours);
    const t = this.tree(theirs);
    const out = new Map<string, string>();
    for (const path of new Set([...base.keys(), ...o.keys(), ...t.keys()])) {
      const [b, x, y] = [base.get(path), o.get(path), t.get(path)];
      let pick: string | undefined;
      if (x === y) pick = x;
      else if (x === b) pick = y;
      else if (y === b) pick = x;
      else return null;
      if (pick !== undefined) out.set(path, pick);
    }
    return out;
  }

  /** Files that differ between two commits. */
  changedFiles(from: string, to: string): string[] {
    const a = this.tree(from);
    const b = this.tree(to);
    return [...new Set([...a.keys(), ...b.keys()])].filter((p) => a.get(p) !== b.get(p)).sort();
  }

  private ancestors(sha: string): Set<string> {
    const seen = new Set<string>();
    const stack = [sha];
    while (stack.length > 0) {
      const next = stack.pop() as string;
      if (seen.has(next)) continue;
      seen.add(next);
      stack.push(...(this.commits.get(next)?.parents ?? []));
    }
    return seen;
  }
}
