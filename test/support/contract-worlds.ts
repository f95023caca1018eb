// The worlds the contract suite runs its cases in: a Forge (with the RefStore and the repository
// behind it) plus the test's hands, the things a test does that the port has no call for (open an
// issue, push a branch, post a check, protect a branch). One world is the fakes; the other is the
// local forge over HTTP, its Forge the GitHubForge client and its hands REST calls and real git.
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Forge } from "../../server/gh/forge.js";
import { createGitHubForge } from "../../server/gh/github-forge.js";
import { silentLogger } from "../../server/gh/octokit.js";
import { FakeForge, type FakeForgeOptions } from "./fake-forge.js";
import { api, branchTip, cloneRepo, git, protectBranch, repoPath, type TestForge } from "./forge-fixtures.js";

export interface ForgeWorld {
  forge: Forge;
  /** Opens an issue as the token's login; returns its number. */
  openIssue(input: { title: string; body?: string; labels?: string[] }): Promise<number>;
  /** `issue` is blocked by `blocker`. */
  block(issue: number, blocker: number): Promise<void>;
  /** `child` becomes a sub-issue of `parent`. */
  nest(parent: number, child: number): Promise<void>;
  /** One commit writing `files` on `from` (default: the branch itself if it exists, else main), pushed as `branch`; returns its sha. */
  push(branch: string, files: Record<string, string>, from?: string): Promise<string>;
  /** The branch's tip, as the repository holds it (null: no such branch). */
  tip(branch: string): Promise<string | null>;
  /** A check run on `sha`: completed with `conclusion`, or in progress with null. */
  postCheck(sha: string, name: string, conclusion: string | null): Promise<void>;
  postStatus(sha: string, context: string, state: "pending" | "success" | "failure" | "error"): Promise<void>;
  /** Classic protection on `branch` requiring `contexts`. */
  protect(branch: string, contexts: string[]): Promise<void>;
  /** A PR from `branch` whose GitHub Actions job `flaky` failed on its head (on the local forge: a pull_request workflow failing on its first attempt only); its head. */
  failedActionsJob(branch: string): Promise<string>;
}

/** A pull_request workflow whose one job fails on the run's first attempt only. */
export const FLAKY_WORKFLOW = `on: pull_request
jobs:
  flaky:
    steps:
      - run: test "$GITHUB_RUN_ATTEMPT" -gt 1
`;

/** The fakes: a FakeForge, its hands the fake's own state. */
export function fakeWorld(options: FakeForgeOptions = {}): ForgeWorld & { forge: FakeForge } {
  const forge = new FakeForge(options);
  const s = forge.state;
  return {
    forge,
    openIssue: async (input) => s.openIssue(input),
    block: async (issue, blocker) => s.block(issue, blocker),
    nest: async (parent, child) => s.nest(parent, child),
    push: async (branch, files, from) => s.push(branch, files, from),
    tip: async (branch) => s.tip(branch),
    postCheck: async (sha, name, conclusion) => s.postCheck(sha, name, conclusion),
    postStatus: async (sha, context, state) => s.postStatus(sha, context, state),
    protect: async (branch, contexts) => s.protect(branch, { contexts }),
    failedActionsJob: async (branch) => {
      const sha = s.push(branch, { ".github/workflows/flaky.yml": FLAKY_WORKFLOW });
      await forge.createPull({ title: branch, body: "", head: branch, base: "main" });
      s.postActionsJob(sha, "flaky", "failure");
      return sha;
    },
  };
}

/** The local forge over HTTP: GitHubForge pointed at it, a clone to push from, REST for the rest. */
export async function localWorld(forge: TestForge): Promise<ForgeWorld> {
  const work = await cloneRepo(forge);
  const ok = async (method: string, path: string, body: unknown, status = 201): Promise<{ number: number; id: number }> => {
    const r = await api(forge, method, repoPath(forge, path), body);
    assert.equal(r.status, status, `${method} ${path}: ${JSON.stringify(r.body)}`);
    return r.body as { number: number; id: number };
  };
  const idOf = async (n: number): Promise<number> => (await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body.id as number;
  const world: ForgeWorld = {
    forge: createGitHubForge({ repo: forge.repo, token: forge.token, baseUrl: forge.apiUrl, fast: true, logger: silentLogger }),
    openIssue: async (input) => (await ok("POST", "/issues", { title: input.title, body: input.body ?? "", labels: input.labels ?? [] })).number,
    block: async (issue, blocker) => void (await ok("POST", `/issues/${issue}/dependencies/blocked_by`, { issue_id: await idOf(blocker) })),
    nest: async (parent, child) => void (await ok("POST", `/issues/${parent}/sub_issues`, { sub_issue_id: await idOf(child) })),
    push: async (branch, files, from) => {
      await git(work, "fetch", "--quiet", "--prune", "origin");
      const exists = (await git(work, "branch", "-r", "--list", `origin/${branch}`)).stdout !== "";
      await git(work, "checkout", "--quiet", "-B", branch, `origin/${from ?? (exists ? branch : "main")}`);
      for (const [path, content] of Object.entries(files)) {
        await mkdir(dirname(join(work, path)), { recursive: true });
        await writeFile(join(work, path), content);
        await git(work, "add", "--", path);
      }
      await git(work, "commit", "--quiet", "-m", `${branch}: ${Object.keys(files).join(", ")}`);
      await git(work, "push", "--quiet", "--force", "origin", `HEAD:refs/heads/${branch}`);
      return (await git(work, "rev-parse", "HEAD")).stdout;
    },
    tip: async (branch) => branchTip(forge, branch).catch(() => null),
    postCheck: async (sha, name, conclusion) =>
      void (await ok(
        "POST",
        "/check-runs",
        conclusion === null
          ? { name, head_sha: sha, status: "in_progress" }
          : { name, head_sha: sha, status: "completed", conclusion, output: { title: conclusion, summary: `${name} ${conclusion}` } },
      )),
    postStatus: async (sha, context, state) => void (await ok("POST", `/statuses/${sha}`, { context, state })),
    protect: async (branch, contexts) => void (await protectBranch(forge, { branch, contexts })),
    failedActionsJob: async (branch) => {
      const sha = await world.push(branch, { ".github/workflows/flaky.yml": FLAKY_WORKFLOW });
      await ok("POST", "/pulls", { title: branch, body: "", head: branch, base: "main" });
      for (let i = 0; i < 1200; i += 1) {
        const runs = (await api(forge, "GET", repoPath(forge, `/commits/${sha}/check-runs`))).body.check_runs as Array<{
          name: string;
          conclusion: string | null;
        }>;
        if (runs.some((r) => r.name === "flaky" && r.conclusion === "failure")) return sha;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error("the flaky job never failed");
    },
  };
  return world;
}
