// The few git moves the landing makes itself in the fleet's bare work repository: fetching the
// tips into private refs, pushes guarded by a lease, and checking what a merge landed. They are
// built on the work repository's git plumbing (RepoGit), which runs git through server/gh/git.ts.
import { pushRejection, type GitAuth, type GitResult } from "../gh/git.js";
import { GitError } from "../gh/errors.js";
import type { RepoGit } from "../worktrees/work-repo.js";
import type { WorkRepo } from "../worktrees/worktrees.js";

/**
 * Every fetch of the landing writes only the refs it names, all private to the landing
 * (`refs/afk-landing/`, `refs/afk-train/<scope>/`). `--refmap=` turns off git's opportunistic
 * update of the configured remote-tracking refs: without it each of these fetches also moved
 * `refs/remotes/origin/<base>`, which the tick's own fetch (a worker's birth, a sync) and a
 * worker's `git fetch` write too, and two writers of one ref fail on its lock ("cannot lock ref
 * ... but expected"): a landing in the background lost its fetch, or a birth its worktree
 * (test/landing-git-contention.test.ts).
 */
const PRIVATE_FETCH: readonly string[] = ["fetch", "--refmap=", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--quiet", "origin"];

/** The few git moves the landing makes itself, in the fleet's bare work repository. */
export class LandingGit {
  private readonly git: RepoGit;
  private ready = false;

  constructor(
    private readonly workRepo: WorkRepo,
    private readonly auth: GitAuth | null,
  ) {
    this.git = workRepo.git;
  }

  /** Fetches the base and the PR's branch into private refs; their tips now (null: gone). */
  async fetchTips(base: string, headRef: string, issue: number): Promise<{ base: string; head: string | null }> {
    if (!this.ready) {
      await this.git.ensure(); // creates the work repository on first use
      this.ready = true;
    }
    const baseRef = `refs/afk-landing/${issue}/base`;
    const headLocal = `refs/afk-landing/${issue}/head`;
    const args = [...PRIVATE_FETCH, `+refs/heads/${base}:${baseRef}`];
    const withHead = [...args, `+refs/heads/${headRef}:${headLocal}`];
    const result = await this.networkRaw(withHead);
    if (result.exitCode !== 0) {
      if (!/couldn't find remote ref/i.test(result.stderr))
        throw new GitError(`fetch of ${base} and ${headRef} failed: ${result.stderr.trim()}`, "git fetch", result.exitCode, result.stderr);
      // Which one is missing? The base must exist; the head may be gone.
      await this.network(args);
      await this.deleteRef(headLocal);
      return { base: (await this.revParse(baseRef))!, head: null };
    }
    const baseSha = await this.revParse(baseRef);
    if (baseSha === null) throw new GitError(`cannot resolve the fetched ${base}`, "git rev-parse", 1, "");
    return { base: baseSha, head: await this.revParse(headLocal) };
  }

  /** Deletes the refs fetchTips wrote (they would keep the objects alive for nothing). */
  async dropPrivateRefs(issue: number): Promise<void> {
    const refs = [`refs/afk-landing/${issue}/base`, `refs/afk-landing/${issue}/head`];
    // One git run for both (deleting an absent ref is no error here).
    await this.alone(() => this.git.run(["update-ref", "--stdin"], this.git.dir, refs.map((r) => `delete ${r}\n`).join("")));
  }

  /**
   * Whether `head` (a commit here) certainly lacks the base tip `tip`, so a landing can only sync
   * it: no REST request and no fetch. A tip unknown here is no ancestor of a head that is here (a
   * commit comes with its ancestors); a head unknown here says nothing (false).
   */
  async lacksTip(tip: string, head: string): Promise<boolean> {
    try {
      if ((await this.git.revParse(head)) === null) return false;
      return (await this.git.revParse(tip)) === null || !(await this.git.isAncestor(tip, head));
    } catch {
      return false;
    }
  }

  isAncestor(a: string, b: string): Promise<boolean> {
    return this.git.isAncestor(a, b);
  }

  revParse(ref: string): Promise<string | null> {
    return this.git.revParse(ref);
  }

  async tree(sha: string): Promise<string | null> {
    const result = await this.git.runRaw(["rev-parse", "--verify", "--quiet", `${sha}^{tree}`]);
    return result.exitCode === 0 ? result.stdout.trim() : null;
  }

  /**
   * The commit a push landing puts on the base: H's tree (H contains B, so merging it into B
   * changes nothing) with parents B then H. The base's first-parent line then holds one gated
   * tree per landing, never a worker's intermediate commit, and H is in the base (the PR is merged).
   */
  async landingCommit(baseTip: string, head: string, message: string): Promise<string> {
    const tree = await this.tree(head);
    if (tree === null) throw new GitError(`cannot read the tree of ${short(head)}`, "git rev-parse", 1, "");
    const result = await this.git.run(["-c", "commit.gpgSign=false", "commit-tree", tree, "-p", baseTip, "-p", head, "-m", message]);
    return result.stdout.trim();
  }

  /**
   * Fetches the base and `branches` into private refs under `refs/afk-train/<scope>/`; their tips
   * now (null: the branch is gone). One fetch when every branch exists, else one per branch.
   */
  async fetchBranches(base: string, branches: readonly string[], scope: string): Promise<{ base: string; heads: Map<string, string | null> }> {
    if (!this.ready) {
      await this.git.ensure();
      this.ready = true;
    }
    const local = (i: number): string => `refs/afk-train/${scope}/${i}`;
    const baseRef = `refs/afk-train/${scope}/base`;
    const fetch = PRIVATE_FETCH;
    const all = await this.networkRaw([...fetch, `+refs/heads/${base}:${baseRef}`, ...branches.map((b, i) => `+refs/heads/${b}:${local(i)}`)]);
    if (all.exitCode !== 0) {
      if (!/couldn't find remote ref/i.test(all.stderr))
        throw new GitError(`fetch of ${base} and the train's branches failed: ${all.stderr.trim()}`, "git fetch", all.exitCode, all.stderr);
      await this.network([...fetch, `+refs/heads/${base}:${baseRef}`]);
      for (const [i, b] of branches.entries()) {
        const one = await this.networkRaw([...fetch, `+refs/heads/${b}:${local(i)}`]);
        if (one.exitCode !== 0) await this.deleteRef(local(i));
      }
    }
    const baseSha = await this.revParse(baseRef);
    if (baseSha === null) throw new GitError(`cannot resolve the fetched ${base}`, "git rev-parse", 1, "");
    const heads = new Map<string, string | null>();
    for (const [i, b] of branches.entries()) heads.set(b, await this.revParse(local(i)));
    return { base: baseSha, heads };
  }

  /** The branches on origin under `prefix` (e.g. "afk/train/"), with their tips: one ls-remote, no ref written. */
  async remoteBranches(prefix: string): Promise<Map<string, string>> {
    // ls-remote writes nothing here: it need not wait its turn among the landing's git moves. It
    // runs in the work repository, which a fresh host's first landing may be creating right now.
    await this.git.ensure();
    const { stdout } = await this.git.network(["ls-remote", "--heads", "origin", `refs/heads/${prefix}*`], this.auth);
    const branches = new Map<string, string>();
    for (const line of stdout.split("\n")) {
      const [sha, ref] = line.split("\t");
      if (sha && ref?.startsWith(`refs/heads/${prefix}`)) branches.set(ref.slice("refs/heads/".length), sha);
    }
    return branches;
  }

  /** Re-reads the base tip into the train's private refs. */
  async fetchBase(base: string, scope: string): Promise<string> {
    const baseRef = `refs/afk-train/${scope}/base`;
    await this.network([...PRIVATE_FETCH, `+refs/heads/${base}:${baseRef}`]);
    const sha = await this.revParse(baseRef);
    if (sha === null) throw new GitError(`cannot resolve the fetched ${base}`, "git rev-parse", 1, "");
    return sha;
  }

  /** Deletes every private ref fetchBranches wrote for `scope`. */
  async dropScope(scope: string): Promise<void> {
    const refs = await this.git.refs(`refs/afk-train/${scope}/`);
    for (const r of refs) await this.deleteRef(r.ref);
  }

  /**
   * A train's candidate: `heads` merged in order onto `baseTip` (git merge-tree, no checkout), as
   * ONE commit whose first parent is the base tip and whose other parents are the heads that
   * merged. The base's first-parent line then gains one gated tree per train, and every head is
   * in the base once it lands (each PR is merged). A head that conflicts with the ones before it
   * is left out with its files.
   */
  async trainCommit(
    baseTip: string,
    heads: ReadonlyArray<{ key: number; sha: string }>,
    message: string,
  ): Promise<{ sha: string | null; merged: number[]; conflicts: Map<number, string[]> }> {
    let current = baseTip;
    let tree: string | null = await this.tree(baseTip);
    const merged: number[] = [];
    const parents: string[] = [];
    const conflicts = new Map<number, string[]>();
    for (const head of heads) {
      const r = await this.git.runRaw(["merge-tree", "--write-tree", "--name-only", "--no-messages", current, head.sha]);
      const lines = r.stdout.split("\n");
      if (r.exitCode !== 0) {
        conflicts.set(
          head.key,
          [
            ...new Set(
              lines
                .slice(1)
                .map((l) => l.trim())
                .filter(Boolean),
            ),
          ].sort(),
        );
        continue;
      }
      tree = lines[0]!.trim();
      // An unreferenced step commit, only so the next merge has the right merge base.
      current = (await this.git.run(["-c", "commit.gpgSign=false", "commit-tree", tree, "-p", current, "-p", head.sha, "-m", "train step"])).stdout.trim();
      merged.push(head.key);
      parents.push(head.sha);
    }
    if (merged.length === 0 || tree === null) return { sha: null, merged, conflicts };
    const args = ["-c", "commit.gpgSign=false", "commit-tree", tree, "-p", baseTip, ...parents.flatMap((p) => ["-p", p]), "-m", message];
    return { sha: (await this.git.run(args)).stdout.trim(), merged, conflicts };
  }

  /** `git merge --ff-only <sha>` in a worktree; false when it could not. */
  async fastForward(worktree: string, sha: string): Promise<boolean> {
    const result = await this.alone(() => this.git.runRaw(["merge", "--ff-only", "--quiet", sha], worktree));
    return result.exitCode === 0;
  }

  /**
   * Pushes `sha` (null: deletes) to `ref` on origin only if it still holds `expected`. Not forced:
   * a non-fast-forward is refused too. `lostRace`: the ref was not at `expected`.
   */
  async pushRef(sha: string | null, ref: string, expected: string): Promise<{ ok: true } | { ok: false; lostRace: boolean; why: string }> {
    const args = ["-c", "push.gpgSign=false", "push", "--porcelain", "--no-verify", `--force-with-lease=${ref}:${expected}`, "origin", `${sha ?? ""}:${ref}`];
    const result = await this.networkRaw(args);
    if (result.exitCode === 0) return { ok: true };
    const verdict = pushRejection(result.stdout, ref);
    const why = verdict ?? (result.stderr.trim().split("\n").pop() || `exit code ${result.exitCode}`);
    return {
      ok: false,
      lostRace: verdict !== null && /stale info|fetch first|non-fast-forward|already exists|incorrect old value|but expected|cannot lock ref/i.test(verdict),
      why,
    };
  }

  /**
   * After a merge: does the base now hold a commit whose tree is H's? `mergeSha` is what GitHub
   * says it created; it must be on the base, and its tree must equal H's.
   */
  async verifyLanded(base: string, mergeSha: string, head: string, baseTip: string): Promise<{ verified: boolean; note: string | null }> {
    const baseRef = `refs/afk-landing/verify/${base}`;
    await this.network([...PRIVATE_FETCH, `+refs/heads/${base}:${baseRef}`]);
    let present = (await this.git.runRaw(["cat-file", "-e", `${mergeSha}^{commit}`])).exitCode === 0;
    if (!present) {
      await this.networkRaw([...PRIVATE_FETCH, mergeSha]);
      present = (await this.git.runRaw(["cat-file", "-e", `${mergeSha}^{commit}`])).exitCode === 0;
    }
    await this.deleteRef(baseRef);
    if (!present) return { verified: false, note: `the merge commit ${short(mergeSha)} could not be fetched from ${base}` };
    const [mergedTree, headTree] = await Promise.all([this.tree(mergeSha), this.tree(head)]);
    const parent = await this.revParse(`${mergeSha}^1`);
    if (mergedTree !== null && mergedTree === headTree) {
      return {
        verified: true,
        note: parent === baseTip ? null : `the merge commit's parent is ${short(parent ?? "?")}, not ${short(baseTip)}, but its tree is the gated one`,
      };
    }
    return {
      verified: false,
      note:
        `the base moved inside the merge call: ${base} went from ${short(baseTip)} to ${short(parent ?? "?")} before GitHub merged, ` +
        `so ${short(mergeSha)} has a tree that was never gated. Require branches to be up to date (strict status checks) or use landing.strategy "push"`,
    };
  }

  // Fetches, pushes (which move the remote-tracking ref of what they pushed) and ref deletions
  // wait for the tick's own moves in this repository: a fetch that overlaps a `worktree add`
  // fails on the half-made worktree's HEAD ("bad object worktrees/issue-N/HEAD"), and two
  // writers of one ref fail on its lock. Objects (commit-tree, merge-tree) need no turn.
  private alone<T>(job: () => Promise<T>): Promise<T> {
    return this.workRepo.exclusive(job);
  }

  private network(args: string[]): Promise<GitResult> {
    return this.alone(() => this.git.network(args, this.auth));
  }

  private networkRaw(args: string[]): Promise<GitResult> {
    return this.alone(() => this.git.networkRaw(args, this.auth));
  }

  private deleteRef(ref: string): Promise<void> {
    return this.alone(() => this.git.deleteRef(ref));
  }
}

function short(sha: string): string {
  return sha.slice(0, 12);
}
