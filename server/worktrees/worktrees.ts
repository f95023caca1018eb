// One git worktree per claimed issue, made from a private bare work repository, and the git
// facts the fleet reads from it (progress, changes against base) and the git moves it makes in
// it (sync by merge, push under a lease). A dead worker's progress is continued, never thrown
// away: `prepare` reuses the worktree (tier 1), recreates it at the branch tip (tier 2), and
// only with nothing to continue starts from the freshly fetched base (tier 3).
import { existsSync } from "node:fs";
import { mkdir, rename, rm, unlink } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { assertSafeBranchName, gitFailure, nulSeparated, overwrittenFiles, pushRejection } from "../gh/git.js";
import { GitError } from "../gh/errors.js";
import { FLEET_BRANCH_PREFIX, parseFleetBranch } from "../state/markers.js";
import { changesAgainst, headProgress } from "./progress.js";
import { assertIssueNumber, issueBranchName } from "./slug.js";
import { canonicalPath, isDirectory, linkedGitDir, rebasing, RepoGit } from "./work-repo.js";
import {
  attemptNote,
  validated,
  WorktreeError,
  PushRejectedError,
  type Tier,
  type WorkRepoOptions,
  type PrepareInput,
  type PreparedWorktree,
  type WorktreeProgress,
  type SyncResult,
  type PushOptions,
  type PushResult,
  type Inspection,
} from "./worktree-types.js";
import { IssueBranches, newest, replaceRef, short, stamp } from "./issue-branches.js";
import { Serial } from "../kit/serial.js";

export {
  WorktreeError,
  PushRejectedError,
  type Tier,
  type WorkRepoOptions,
  type PrepareInput,
  type PreparedWorktree,
  type WorktreeProgress,
  type SyncResult,
  type PushOptions,
  type PushResult,
} from "./worktree-types.js";

export class WorkRepo {
  readonly repoDir: string;
  readonly worktreeRoot: string;
  readonly branchPrefix: string;
  /** The repository's git plumbing, shared with the landing's own moves. */
  readonly git: RepoGit;
  private readonly branches: IssueBranches;
  private readonly now: () => Date;
  // Fetches and ref moves of one repository are serialized: two at once fight over ref locks,
  // and two moves for one issue must not interleave.
  private readonly steps = new Serial();

  constructor(options: WorkRepoOptions) {
    this.branchPrefix = options.branchPrefix ?? FLEET_BRANCH_PREFIX;
    assertSafeBranchName(`${this.branchPrefix}1`);
    this.git = new RepoGit({
      dir: options.repoDir,
      remoteUrl: options.remoteUrl,
      ...(options.auth !== undefined ? { auth: options.auth } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.keepSigning !== undefined ? { keepSigning: options.keepSigning } : {}),
    });
    this.repoDir = this.git.dir;
    this.worktreeRoot = resolve(options.worktreeRoot);
    this.now = options.now ?? (() => new Date());
    this.branches = new IssueBranches(this.git, this.branchPrefix, this.now);
  }

  /** `<root>/issue-<n>`: only the number reaches the file system, never the title. */
  worktreePath(issue: number): string {
    assertIssueNumber(issue);
    return join(this.worktreeRoot, `issue-${issue}`);
  }

  /** The branch a new attempt at this issue would get: `afk/<n>-<slug of title>`. */
  branchName(issue: number, title: string): string {
    return issueBranchName(issue, title, this.branchPrefix);
  }

  /**
   * A worktree for the issue, continuing whatever progress exists (see the module comment).
   * Call it only while no worker runs in the worktree: it clears a stale index.lock.
   * Tier 2 prefers the branch tip that contains the other; when the local and remote tips have
   * diverged, origin's tip wins (it is what a PR shows and what a peer may have built on) and
   * the local tip is kept as `refs/afk-backup/<n>/<time>-<sha>` in the work repository.
   */
  async prepare(input: PrepareInput): Promise<PreparedWorktree> {
    const { issue, base } = validated(input);
    return this.exclusive(async () => {
      await this.fetch(base, issue);
      const baseSha = await this.baseTip(base);
      const path = this.worktreePath(issue);
      const found = await this.inspect(issue);
      const note = attemptNote(issue, input.attempt);
      if (found.state === "valid") {
        // Tier 1: as the worker left it, uncommitted files and all.
        await unlink(join(found.gitDir, "index.lock")).catch(() => undefined);
        await this.setUpstream(found.branch);
        return this.report(1, path, found.branch, baseSha, [], null);
      }
      const displaced = await this.clearPath(issue, found);
      const expected = this.branchName(issue, input.title);
      const continued = await this.branches.continuation(issue, expected, baseSha, note);
      if (continued) {
        await this.git.updateRef(`refs/heads/${continued.branch}`, continued.tip, `${note}: continue at ${continued.tip} (tier 2)`);
        await this.setUpstream(continued.branch);
        await this.addWorktree(path, continued.branch);
        return this.report(2, path, continued.branch, baseSha, continued.backups, displaced);
      }
      await this.createFromBase(issue, expected, baseSha, base, note);
      return this.report(3, path, expected, baseSha, [], displaced);
    });
  }

  /**
   * Starts the issue over from the freshly fetched base (the retry ladder): the worktree is
   * removed, the local branches of the issue are deleted (tips not in base kept as backup refs),
   * and the branch is recreated at origin/<base>. The existing branch name is kept so an open
   * PR follows; origin's old tip is recorded as replaceable, so the next `push` may overwrite it.
   */
  async fresh(input: PrepareInput): Promise<PreparedWorktree> {
    const { issue, base } = validated(input);
    return this.exclusive(async () => {
      await this.fetch(base, issue);
      const baseSha = await this.baseTip(base);
      const path = this.worktreePath(issue);
      const found = await this.inspect(issue);
      const name = found.state === "valid" ? found.branch : await this.branches.preferredName(issue, this.branchName(issue, input.title));
      await this.tearDown(path, found);
      const backups: string[] = [];
      for (const tip of await this.branches.issueTips("refs/heads/", issue)) {
        if (!(await this.git.isAncestor(tip.sha, baseSha))) backups.push(await this.branches.backup(issue, tip.sha, "set aside by fresh"));
      }
      const remote = await this.git.revParse(`refs/remotes/origin/${name}`);
      if (remote && !(await this.git.isAncestor(remote, baseSha))) {
        await this.git.updateRef(replaceRef(issue), remote, `afk: issue ${issue}: origin's ${name} may be replaced`);
      }
      await this.createFromBase(issue, name, baseSha, base, attemptNote(issue, input.attempt));
      return this.report(3, path, name, baseSha, backups, null);
    });
  }

  /**
   * Removes the issue's worktree (uncommitted work in it is lost) and prunes its registration;
   * with `deleteBranch`, the local branches of the issue go too. For tier 3 and landed issues.
   */
  async remove(issue: number, options: { deleteBranch?: boolean } = {}): Promise<{ removed: boolean }> {
    const path = this.worktreePath(issue);
    return this.exclusive(async () => {
      const removed = await this.tearDown(path, await this.inspect(issue));
      if (options.deleteBranch) {
        for (const tip of await this.branches.issueTips("refs/heads/", issue)) {
          await this.git.runRaw(["branch", "-D", short(tip.ref, "refs/heads/")]);
        }
        await this.git.deleteRef(replaceRef(issue));
      }
      return { removed };
    });
  }

  /**
   * Git facts for liveness and outcome classification. Local only (no fetch): counts are against
   * origin/<base> as last fetched. Takes no lock a running worker could trip over.
   */
  async progress(issue: number, base: string): Promise<WorktreeProgress> {
    assertSafeBranchName(base);
    const path = this.worktreePath(issue);
    await this.git.ensure();
    const found = await this.inspect(issue);
    let branch: string | null = null;
    let head: string | null = null;
    if (found.state === "valid") {
      branch = found.branch;
      head = await this.git.revParse("HEAD", path);
    } else {
      const tip = newest(await this.branches.issueTips("refs/heads/", issue));
      if (tip) {
        branch = short(tip.ref, "refs/heads/");
        head = tip.sha;
      }
    }
    const facts: WorktreeProgress = {
      worktree: found.state === "valid",
      path,
      branch,
      head,
      commitsAhead: 0,
      dirty: false,
      lastCommitAt: null,
      worktreeMtime: null,
    };
    return head === null ? facts : headProgress(this.git, facts, head, base, found.state === "valid");
  }

  /**
   * Puts the issue's worktree at exactly `sha` (a reviewer reviews the PR head, wherever it was
   * pushed from): the branch is reset there and a tip it does not contain is kept as a backup
   * ref. Returns HEAD afterwards (unchanged when `sha` is not in the work repository).
   */
  async checkoutAt(issue: number, sha: string): Promise<string> {
    await this.requireWorktree(issue);
    const path = this.worktreePath(issue);
    return this.exclusive(async () => {
      const head = await this.mustRev("HEAD", path);
      if (head === sha || (await this.git.runRaw(["cat-file", "-e", `${sha}^{commit}`])).exitCode !== 0) return head;
      if (!(await this.contains(sha, head))) await this.branches.backup(issue, head, "set aside for a review of the PR head");
      await this.git.run(["reset", "--quiet", "--hard", sha], path);
      return this.mustRev("HEAD", path);
    });
  }

  /**
   * Merges the freshly fetched origin/<base> into the issue's branch, never rebasing (a rebase
   * would drop the merge commits in which earlier conflicts were resolved). A conflict aborts the
   * merge, leaving the worktree as it was, and names the conflicting paths.
   */
  async syncWithBase(issue: number, base: string): Promise<SyncResult> {
    assertSafeBranchName(base);
    const path = this.worktreePath(issue);
    return this.exclusive(async () => {
      await this.fetch(base);
      const baseSha = await this.baseTip(base);
      await this.requireWorktree(issue);
      const dirty = await this.git.trackedChanges(path);
      if (dirty.length > 0) return { ok: false, reason: "dirty", conflicts: [], dirty };
      const before = await this.mustRev("HEAD", path);
      // The ref rather than the sha for a readable message; it holds baseSha (fetched under the lock).
      const args = ["-c", "commit.gpgSign=false", "merge", "--ff", "--no-edit", "--no-verify", "--no-gpg-sign", "--no-stat", `refs/remotes/origin/${base}`];
      const result = await this.git.runRaw(args, path);
      if (result.exitCode !== 0) {
        const merging = (await this.git.revParse("MERGE_HEAD", path)) !== null;
        const conflicts = nulSeparated((await this.git.run(["diff", "--name-only", "-z", "--diff-filter=U"], path)).stdout);
        if (merging) await this.git.run(["merge", "--abort"], path);
        if (conflicts.length > 0) return { ok: false, reason: "conflict", conflicts, dirty: [] };
        const blocking = overwrittenFiles(result.stderr);
        if (blocking.length > 0) return { ok: false, reason: "dirty", conflicts: [], dirty: blocking };
        throw gitFailure(args, result);
      }
      const head = await this.mustRev("HEAD", path);
      if (!(await this.git.isAncestor(baseSha, head, path))) {
        throw new WorktreeError(
          "base_not_contained",
          `issue ${issue}: after the merge, HEAD ${head} does not contain origin/${base} ${baseSha}`,
          "inspect the worktree's git configuration (merge settings)",
        );
      }
      return { ok: true, head, merged: head !== before };
    });
  }

  /**
   * Pushes the issue's branch to origin. Origin's tip is read first and becomes the lease
   * (`--force-with-lease=refs/heads/<branch>:<tip>`, empty when the branch is new), so anything
   * pushed after that read is never overwritten. The push goes ahead only when the local branch
   * contains origin's tip, or that tip is one the caller (expectedRemoteSha) or `fresh` declared
   * replaceable; otherwise it is somebody else's work and a PushRejectedError says so.
   */
  async push(issue: number, options: PushOptions = {}): Promise<PushResult> {
    assertIssueNumber(issue);
    return this.exclusive(async () => {
      const branch = await this.currentBranch(issue);
      const ref = `refs/heads/${branch}`;
      const local = await this.mustRev(ref);
      const remote = await this.git.remoteTip(ref, options.auth);
      if (remote === local) return { branch, sha: local, previous: remote, pushed: false };
      if (remote !== null && !(await this.contains(local, remote))) {
        const replaceable = await this.git.revParse(replaceRef(issue));
        if (remote !== options.expectedRemoteSha && remote !== replaceable) {
          throw new PushRejectedError(
            `push of ${branch} refused: origin holds ${remote}, which the local branch does not contain`,
            `git push origin ${ref}`,
            "",
            "somebody else pushed to the branch: merge their commits first, or pass expectedRemoteSha to replace them on purpose",
            branch,
            options.expectedRemoteSha ?? null,
            remote,
          );
        }
      }
      const args = ["-c", "push.gpgSign=false", "push", "--porcelain", "--no-verify", `--force-with-lease=${ref}:${remote ?? ""}`, "origin", `${ref}:${ref}`];
      const result = await this.git.networkRaw(args, options.auth);
      if (result.exitCode !== 0) {
        const failure = gitFailure(args, result, this.git.authFor(options.auth));
        const verdict = pushRejection(result.stdout, ref);
        if (verdict === null) throw failure; // auth, network, a missing remote: not a refusal
        throw new PushRejectedError(
          `push of ${branch} refused: ${verdict}`,
          failure.command,
          failure.stderr,
          /stale info|fetch first|non-fast-forward/i.test(verdict)
            ? "origin's branch moved after it was read: somebody else pushed; prepare or sync again"
            : failure.hint || "the remote refused the update: check branch protection and the token's permissions",
          branch,
          remote,
          await this.git.remoteTip(ref, options.auth).catch(() => null),
        );
      }
      await this.git.updateRef(`refs/remotes/origin/${branch}`, local, `afk: pushed ${branch}`);
      await this.git.deleteRef(replaceRef(issue));
      return { branch, sha: local, previous: remote, pushed: true };
    });
  }

  /**
   * Whether the issue's branch would change the base: true when merging HEAD into the freshly
   * fetched origin/<base> gives a tree other than the base's (or conflicts). Work that already
   * landed some other way (a squash) counts as no change. Committed work only.
   */
  async hasChangesAgainstBase(issue: number, base: string): Promise<boolean> {
    assertSafeBranchName(base);
    assertIssueNumber(issue);
    return this.exclusive(async () => {
      await this.fetch(base);
      const baseSha = await this.baseTip(base);
      const found = await this.inspect(issue);
      const head =
        found.state === "valid"
          ? await this.mustRev("HEAD", this.worktreePath(issue))
          : (newest(await this.branches.issueTips("refs/heads/", issue))?.sha ?? null);
      return head !== null && changesAgainst(this.git, baseSha, head);
    });
  }

  // ---- steps -------------------------------------------------------------------------------

  /** Runs `job` alone among this repository's fetches, ref moves and worktree changes (the landing's too). */
  exclusive<T>(job: () => Promise<T>): Promise<T> {
    return this.steps.run(async () => {
      await this.git.ensure();
      return job();
    });
  }

  // A forced refspec into refs/remotes: a stale local copy of the base is never what a branch
  // starts from. The issue's branches come along (and are pruned when gone from origin).
  private async fetch(base: string, issue?: number): Promise<void> {
    const refspecs = [`+refs/heads/${base}:refs/remotes/origin/${base}`];
    if (issue !== undefined) refspecs.push(`+refs/heads/${this.branchPrefix}${issue}*:refs/remotes/origin/${this.branchPrefix}${issue}*`);
    const args = ["fetch", "--no-tags", "--prune", "--no-write-fetch-head", "--no-recurse-submodules", "--quiet", "origin", ...refspecs];
    const result = await this.git.fetchRaw(args);
    if (result.exitCode === 0) return;
    const failure = gitFailure(args, result, this.git.authFor(undefined));
    if (/couldn't find remote ref/i.test(result.stderr)) {
      throw new GitError(
        `base branch "${base}" does not exist on origin`,
        failure.command,
        failure.exitCode,
        failure.stderr,
        `check the project's base branch (it is "${base}")`,
      );
    }
    throw failure;
  }

  private async baseTip(base: string): Promise<string> {
    return this.mustRev(`refs/remotes/origin/${base}`);
  }

  private async inspect(issue: number): Promise<Inspection> {
    const path = this.worktreePath(issue);
    const wanted = await canonicalPath(path);
    let entry = null;
    for (const candidate of await this.git.worktrees()) {
      if (!candidate.bare && (await canonicalPath(candidate.path)) === wanted) entry = candidate;
    }
    const present = await isDirectory(path);
    if (!entry) return present ? { state: "foreign", registered: false } : { state: "absent" };
    if (!present) return { state: "stale" };
    const dir = entry.prunable ? null : await linkedGitDir(path);
    if (dir === null) return { state: "foreign", registered: false };
    const branch = entry.branch ? short(entry.branch, "refs/heads/") : await rebasing(dir);
    if (branch !== null && parseFleetBranch(branch, this.branchPrefix) === issue) return { state: "valid", branch, gitDir: dir };
    return { state: "foreign", registered: true };
  }

  // Makes the issue's path free without destroying anything: a stale registration is pruned; a
  // worktree on another branch or a stray directory is moved to <root>/.displaced/.
  private async clearPath(issue: number, found: Inspection): Promise<string | null> {
    if (found.state === "stale") await this.git.run(["worktree", "prune"]);
    if (found.state !== "foreign") return null;
    const path = this.worktreePath(issue);
    // Unique even for two displacements within one second: moving onto an existing directory
    // would nest the worktree inside the earlier one.
    const base = join(this.worktreeRoot, ".displaced", `issue-${issue}-${stamp(this.now())}`);
    let target = base;
    for (let n = 2; existsSync(target); n += 1) target = `${base}-${n}`;
    await mkdir(dirname(target), { recursive: true });
    if (found.registered) {
      await this.git.run(["worktree", "move", path, target]);
    } else {
      await rename(path, target);
      await this.git.run(["worktree", "prune"]);
    }
    return target;
  }

  private async tearDown(path: string, found: Inspection): Promise<boolean> {
    let removed = false;
    if (found.state === "valid" || (found.state === "foreign" && found.registered)) {
      await this.git.run(["worktree", "remove", "--force", path]);
      removed = true;
    }
    if (await isDirectory(path)) {
      await rm(path, { recursive: true, force: true });
      removed = true;
    }
    await this.git.run(["worktree", "prune"]);
    return removed;
  }

  private async createFromBase(issue: number, branch: string, baseSha: string, base: string, note: string): Promise<void> {
    // Other local branches of the issue hold nothing base lacks here (or were backed up by fresh).
    for (const tip of await this.branches.issueTips("refs/heads/", issue)) {
      const name = short(tip.ref, "refs/heads/");
      if (name !== branch) await this.git.runRaw(["branch", "-D", name]);
    }
    await this.git.updateRef(`refs/heads/${branch}`, baseSha, `${note}: start from origin/${base} ${baseSha} (tier 3)`);
    await this.setUpstream(branch);
    const path = this.worktreePath(issue);
    await this.addWorktree(path, branch);
    const head = await this.mustRev("HEAD", path);
    if (!(await this.git.isAncestor(baseSha, head, path))) {
      throw new WorktreeError(
        "base_not_contained",
        `issue ${issue}: the new worktree's HEAD ${head} does not contain origin/${base} ${baseSha}`,
        "remove the worktree and prepare again",
      );
    }
  }

  private async addWorktree(path: string, branch: string): Promise<void> {
    await mkdir(this.worktreeRoot, { recursive: true });
    await this.git.run(["worktree", "add", "--quiet", path, branch]);
  }

  // The worker's `git push` / `git pull` then talk to its own branch on origin, not the base.
  private async setUpstream(branch: string): Promise<void> {
    await this.git.run(["config", `branch.${branch}.remote`, "origin"]);
    await this.git.run(["config", `branch.${branch}.merge`, `refs/heads/${branch}`]);
  }

  private async report(tier: Tier, path: string, branch: string, baseSha: string, backupRefs: string[], displaced: string | null): Promise<PreparedWorktree> {
    const head = await this.mustRev("HEAD", path);
    const remoteSha = await this.git.revParse(`refs/remotes/origin/${branch}`);
    return {
      path,
      branch,
      tier,
      head,
      baseSha,
      baseContained: await this.git.isAncestor(baseSha, head, path),
      remoteSha,
      remoteContained: remoteSha === null ? null : await this.git.isAncestor(remoteSha, head, path),
      backupRefs,
      displaced,
    };
  }

  private async requireWorktree(issue: number): Promise<string> {
    const found = await this.inspect(issue);
    if (found.state !== "valid") {
      throw new WorktreeError("no_worktree", `issue ${issue} has no worktree at ${this.worktreePath(issue)}`, "prepare the issue's worktree first");
    }
    return found.branch;
  }

  private async currentBranch(issue: number): Promise<string> {
    const found = await this.inspect(issue);
    if (found.state === "valid") return found.branch;
    const tip = newest(await this.branches.issueTips("refs/heads/", issue));
    if (tip) return short(tip.ref, "refs/heads/");
    throw new WorktreeError("no_branch", `issue ${issue} has no local branch`, "prepare the issue's worktree first");
  }

  // Whether `tip` contains `commit`; a commit we do not even have is not contained.
  private async contains(tip: string, commit: string): Promise<boolean> {
    const present = await this.git.runRaw(["cat-file", "-e", `${commit}^{commit}`]);
    if (present.exitCode !== 0) return false;
    return this.git.isAncestor(commit, tip);
  }

  private async mustRev(ref: string, cwd?: string): Promise<string> {
    const sha = await this.git.revParse(ref, cwd);
    if (sha === null) throw new GitError(`cannot resolve ${ref}`, `git rev-parse ${ref}`, 1, "", "");
    return sha;
  }
}
