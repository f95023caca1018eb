// The forge's view of its bare repository: every read and write goes through the git CLI
// (never a reimplementation of git), with arguments passed as an array, never a shell string.
// Ref writes are compare-and-swap (`update-ref <ref> <new> <old>`), so they stay atomic even
// while `git http-backend` is receiving a push into the same repository.
import { execFile, spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import { GitError } from "../gh/errors.js";

export const ZERO_SHA = "0000000000000000000000000000000000000000";

/** Who a commit made by the forge itself is attributed to. */
export interface Signature {
  name: string;
  email: string;
  /** ISO time; defaults to now. */
  date?: string;
}

export interface RefRecord {
  ref: string;
  sha: string;
  /** "commit", "tag", "tree" or "blob": the type of the object the ref points at. */
  type: string;
}

export interface MergeTreeResult {
  clean: boolean;
  /** The merged tree (with conflict markers when not clean). */
  tree: string;
}

interface RunOptions {
  input?: string;
  env?: Record<string, string>;
  /** Exit codes that are answers rather than failures (e.g. 1 for "not an ancestor"). */
  okCodes?: number[];
}

interface RunResult {
  stdout: string;
  code: number;
}

export class BareGit {
  constructor(readonly path: string) {}

  /** Runs git against the bare repository; throws GitError on an unexpected exit code. */
  async run(args: string[], opts: RunOptions = {}): Promise<RunResult> {
    const env = { ...process.env, GIT_DIR: this.path, LC_ALL: "C", GIT_TERMINAL_PROMPT: "0", ...opts.env };
    if (opts.input === undefined) {
      return new Promise((resolve, reject) => {
        execFile("git", args, { env, maxBuffer: 256 * 1024 * 1024, encoding: "utf8" }, (err, stdout, stderr) => {
          const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
          if (code === 0 || opts.okCodes?.includes(code)) {
            resolve({ stdout, code });
          } else {
            reject(new GitError(`git ${args[0]} failed: ${stderr.trim() || err?.message}`, `git ${args.join(" ")}`, code, stderr));
          }
        });
      });
    }
    return new Promise((resolve, reject) => {
      const child = spawn("git", args, { env, stdio: ["pipe", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      child.on("error", reject);
      child.on("close", (code) => {
        const c = code ?? -1;
        if (c === 0 || opts.okCodes?.includes(c)) resolve({ stdout, code: c });
        else reject(new GitError(`git ${args[0]} failed: ${stderr.trim()}`, `git ${args.join(" ")}`, c, stderr));
      });
      child.stdin.end(opts.input);
    });
  }

  /** Resolves a revision to a commit sha, or null when it names nothing (or not a commit). */
  async resolveCommit(rev: string): Promise<string | null> {
    if (rev.startsWith("-")) return null;
    const r = await this.run(["rev-parse", "--verify", "--quiet", "--end-of-options", `${rev}^{commit}`], { okCodes: [1, 128] });
    return r.code === 0 ? r.stdout.trim() : null;
  }

  /** Every ref under the directory `prefix` ("refs/" for all, whole path components), in one process. */
  async listRefs(prefix = "refs/"): Promise<RefRecord[]> {
    const r = await this.run(["for-each-ref", "--format=%(refname) %(objectname) %(objecttype)", "--", prefix]);
    const out: RefRecord[] = [];
    for (const line of r.stdout.split("\n")) {
      if (!line) continue;
      const [ref, sha, type] = line.split(" ");
      if (ref && sha && type) out.push({ ref, sha, type });
    }
    return out;
  }

  /** Branch name -> tip sha, read in one process. */
  async branchTips(): Promise<Map<string, string>> {
    const tips = new Map<string, string>();
    for (const r of await this.listRefs("refs/heads/")) tips.set(r.ref.slice("refs/heads/".length), r.sha);
    return tips;
  }

  async readRef(ref: string): Promise<string | null> {
    const r = await this.run(["rev-parse", "--verify", "--quiet", "--end-of-options", ref], { okCodes: [1, 128] });
    return r.code === 0 ? r.stdout.trim() : null;
  }

  /**
   * Moves `ref` to `sha` only if it currently holds `expected` (ZERO_SHA: must not exist).
   * Returns false when the ref did not hold `expected` (someone else won the race).
   */
  async casRef(ref: string, sha: string, expected: string, reason = "afk-forge"): Promise<boolean> {
    const r = await this.run(["update-ref", "-m", reason, "--", ref, sha, expected], { okCodes: [1, 128] });
    return r.code === 0;
  }

  /** Deletes `ref` only if it still holds `expected`. */
  async casDeleteRef(ref: string, expected: string): Promise<boolean> {
    const r = await this.run(["update-ref", "-d", "--", ref, expected], { okCodes: [1, 128] });
    return r.code === 0;
  }

  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    const r = await this.run(["merge-base", "--is-ancestor", ancestor, descendant], { okCodes: [1] });
    return r.code === 0;
  }

  /** Branches (short names) whose tips are reachable from `sha`: one process for many PRs. */
  async branchesMergedInto(sha: string): Promise<Set<string>> {
    const r = await this.run(["for-each-ref", `--merged=${sha}`, "--format=%(refname)", "refs/heads/"]);
    return new Set(
      r.stdout
        .split("\n")
        .filter(Boolean)
        .map((ref) => ref.slice("refs/heads/".length)),
    );
  }

  /** A three-way merge without a worktree (git >= 2.38). */
  async mergeTree(ours: string, theirs: string): Promise<MergeTreeResult> {
    const r = await this.run(["merge-tree", "--write-tree", "--no-messages", ours, theirs], { okCodes: [1] });
    const tree = r.stdout.split("\n")[0]?.trim() ?? "";
    return { clean: r.code === 0, tree };
  }

  async treeOf(commit: string): Promise<string> {
    return (await this.run(["rev-parse", `${commit}^{tree}`])).stdout.trim();
  }

  async commitTree(tree: string, parents: string[], message: string, author: Signature, committer: Signature = author): Promise<string> {
    const args = ["commit-tree", tree];
    for (const p of parents) args.push("-p", p);
    const r = await this.run(args, {
      input: message.endsWith("\n") ? message : `${message}\n`,
      env: signatureEnv(author, committer),
    });
    return r.stdout.trim();
  }

  /** Writes `files` (path -> content) as a tree, using a temporary index. */
  async writeFilesTree(files: Record<string, string>, indexFile: string): Promise<string> {
    const env = { GIT_INDEX_FILE: indexFile };
    try {
      await this.run(["read-tree", "--empty"], { env });
      for (const [path, content] of Object.entries(files)) {
        const blob = (await this.run(["hash-object", "-w", "--stdin"], { input: content })).stdout.trim();
        await this.run(["update-index", "--add", "--cacheinfo", `100644,${blob},${path}`], { env });
      }
      return (await this.run(["write-tree"], { env })).stdout.trim();
    } finally {
      await rm(indexFile, { force: true });
    }
  }

  /** Adds or replaces one file on top of `baseTree`. */
  async treeWithFile(baseTree: string, path: string, content: string, indexFile: string): Promise<string> {
    const env = { GIT_INDEX_FILE: indexFile };
    try {
      await this.run(["read-tree", baseTree], { env });
      const blob = (await this.run(["hash-object", "-w", "--stdin"], { input: content })).stdout.trim();
      await this.run(["update-index", "--add", "--cacheinfo", `100644,${blob},${path}`], { env });
      return (await this.run(["write-tree"], { env })).stdout.trim();
    } finally {
      await rm(indexFile, { force: true });
    }
  }

  /** Commits in `base..head` and the diff size, for a PR's commits/additions/deletions. */
  async compare(base: string, head: string): Promise<{ commits: number; additions: number; deletions: number; changedFiles: number }> {
    // `base...head` diffs from the merge base, as GitHub's PR diff does.
    const [count, diff] = await Promise.all([
      this.run(["rev-list", "--count", `${base}..${head}`]),
      this.run(["diff", "--numstat", `${base}...${head}`], { okCodes: [128] }),
    ]);
    let additions = 0;
    let deletions = 0;
    let changedFiles = 0;
    for (const line of diff.stdout.split("\n")) {
      if (!line) continue;
      const [a, d] = line.split("\t");
      changedFiles++;
      additions += Number(a) || 0;
      deletions += Number(d) || 0;
    }
    return { commits: Number(count.stdout.trim()) || 0, additions, deletions, changedFiles };
  }

  async commitInfo(sha: string): Promise<CommitInfo> {
    const r = await this.run(["show", "-s", "--format=%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B", sha]);
    const [h, t, p, an, ae, ad, cn, ce, cd, ...msg] = r.stdout.split("\0");
    return {
      sha: h ?? sha,
      tree: t ?? "",
      parents: (p ?? "").split(" ").filter(Boolean),
      author: { name: an ?? "", email: ae ?? "", date: toGitHubTime(ad ?? "") },
      committer: { name: cn ?? "", email: ce ?? "", date: toGitHubTime(cd ?? "") },
      message: msg.join("\0").replace(/\n+$/, ""),
    };
  }
}

export interface CommitInfo {
  sha: string;
  tree: string;
  parents: string[];
  author: Required<Signature>;
  committer: Required<Signature>;
  message: string;
}

function signatureEnv(author: Signature, committer: Signature): Record<string, string> {
  const env: Record<string, string> = {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_COMMITTER_NAME: committer.name,
    GIT_COMMITTER_EMAIL: committer.email,
  };
  if (author.date) env.GIT_AUTHOR_DATE = author.date;
  if (committer.date) env.GIT_COMMITTER_DATE = committer.date;
  return env;
}

/** git's strict ISO dates carry an offset; GitHub answers in UTC with a Z. */
function toGitHubTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Creates the bare repository with an initial commit on `branch` holding `files`. */
export async function initBareRepo(path: string, branch: string, files: Record<string, string>, author: Signature, indexFile: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    execFile("git", ["init", "--bare", "--quiet", `--initial-branch=${branch}`, path], (err, _o, stderr) =>
      err ? reject(new GitError(`git init failed: ${stderr}`, "git init --bare", null, stderr)) : resolve(),
    );
  });
  const git = new BareGit(path);
  // http-backend refuses receive-pack unless enabled (or REMOTE_USER is set); say so explicitly.
  await git.run(["config", "http.receivepack", "true"]);
  await git.run(["config", "uploadpack.allowAnySHA1InWant", "true"]);
  // GitHub owns refs/pull/*: pushes there fail with "deny updating a hidden ref".
  await git.run(["config", "receive.hideRefs", "refs/pull/"]);
  // Keep reflogs so that a ref's history can be inspected when a test fails.
  await git.run(["config", "core.logAllRefUpdates", "always"]);
  const tree = await git.writeFilesTree(files, indexFile);
  const commit = await git.commitTree(tree, [], "Initial commit", author);
  if (!(await git.casRef(`refs/heads/${branch}`, commit, ZERO_SHA))) {
    throw new GitError(`could not create refs/heads/${branch}`, "git update-ref", 1, "");
  }
  return commit;
}
