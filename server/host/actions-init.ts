// `afk-mcp actions init`: proposes the workflow runtime "actions" dispatches as a pull request
// (never a push to the base): a branch `afk/actions-init` off the default branch with
// `.github/workflows/<actions.workflow>` added, and a PR that says which secret to set. Built in
// a scratch repository with git plumbing (no checkout, no working tree), pushed with the token
// as a scoped header. Idempotent: a workflow already on the base, or an open PR for it, is said
// so instead of proposed twice. Each answer says which afk-mcp the worker step runs and whether
// the npm registry has that version (runtimes/actions/worker-pin.ts); the start's runtime line
// says the same of the workflow on the base.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UsageError } from "../gh/errors.js";
import { git, gitRaw, type GitAuth } from "../gh/git.js";
import type { RepoConnection } from "../gh/repo-connection.js";
import { checkWorkerPin, runtimeOf, workflowFile, type ProgramToRun, type RuntimeRegistry, type WorkflowFileOptions } from "../runtimes/registry.js";
import { version } from "../version.js";

export const INIT_BRANCH = "afk/actions-init";

export interface ActionsInitResult {
  status: "proposed" | "present" | "pending";
  path: string;
  pr: { number: number; url: string } | null;
  /** Which afk-mcp the worker step runs, and whether the npm registry has it (or that it could not be checked). */
  worker: string;
  message: string;
}

/** A file at the connection's base, read through the control repository (null: no such file, or no base). */
export async function fileAtBase(conn: RepoConnection, path: string, branch = conn.base): Promise<string | null> {
  const cwd = conn.refs.controlDir;
  const ref = `refs/remotes/origin/${branch}`;
  const show = async (): Promise<string | null> => {
    const shown = await gitRaw(["cat-file", "-p", `${ref}:${path}`], { cwd });
    return shown.exitCode === 0 ? shown.stdout : null;
  };
  // The connection fetched the config's branch; another branch (or a newer tip) is fetched once.
  const tip = (await gitRaw(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { cwd })).stdout.trim();
  if (branch !== conn.base || !tip || tip !== conn.baseSha) {
    const fetched = await gitRaw(["fetch", "--no-tags", "--quiet", "origin", `+refs/heads/${branch}:${ref}`], {
      cwd,
      auth: { token: conn.token, url: conn.info.cloneUrl },
    });
    if (fetched.exitCode !== 0) return null;
  }
  return show();
}

/** The worker step's command: this version of afk-mcp from the npm registry. */
export function defaultWorkerInvocation(): string {
  return `npx -y afk-mcp@${version} worker`;
}

const IDENTITY = {
  GIT_AUTHOR_NAME: "afk-mcp",
  GIT_AUTHOR_EMAIL: "afk-mcp@users.noreply.github.com",
  GIT_COMMITTER_NAME: "afk-mcp",
  GIT_COMMITTER_EMAIL: "afk-mcp@users.noreply.github.com",
};

/**
 * The start's runtime line (the preflight's, told to `onStep`; throws its refusal when `refuse`),
 * and what of it the start's answer repeats: for runtime "actions", whose workers are not this
 * host's, the whole line (which afk-mcp the step runs, and whether the registry has it).
 */
export async function startRuntimeLine(
  conn: RepoConnection,
  env: Readonly<Record<string, string | undefined>>,
  refuse: boolean,
  onStep: (line: string) => void,
  runtimes: RuntimeRegistry,
  programs: readonly ProgramToRun[] = [],
): Promise<{ line: string; note: string }> {
  const line = await runtimes.preflight(
    conn.config,
    env,
    refuse,
    { repo: conn.repo, api: conn.forge.actions(), fileAtBase: (path) => fileAtBase(conn, path) },
    programs,
  );
  onStep(line);
  return { line, note: runtimeOf(conn.config, env) === "actions" ? `; ${line}` : "" };
}

/** `env`: where the npm registry's URL is read (`npm_config_registry`). */
export async function actionsInit(
  conn: RepoConnection,
  options: Partial<WorkflowFileOptions> = {},
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<ActionsInitResult> {
  const file = conn.config.actions.workflow;
  const path = `.github/workflows/${file}`;
  const base = conn.info.defaultBranch;
  // One conditional request: is the workflow there already?
  const present = await conn.forge.actions().workflow(file);
  if (present) {
    const worker = await checkWorkerPin(await fileAtBase(conn, present.path, base).catch(() => null), env);
    return {
      status: "present",
      path,
      pr: null,
      worker,
      message: `${path} is already on ${base} (workflow "${present.name}", ${present.state}): runtime "actions" can dispatch it; ${worker}`,
    };
  }
  // One conditional request: a PR proposing it already?
  const open = (await conn.forge.listOpenPulls()).find((p) => p.head.ref === INIT_BRANCH && p.author === conn.login);
  if (open) {
    const worker = await checkWorkerPin(await fileAtBase(conn, path, INIT_BRANCH).catch(() => null), env);
    return {
      status: "pending",
      path,
      pr: { number: open.number, url: open.htmlUrl },
      worker,
      message: `PR #${open.number} already proposes ${path}: merge it (${open.htmlUrl}); ${worker}`,
    };
  }

  const text = workflowFile({ worker: options.worker ?? defaultWorkerInvocation(), ...(options.setup ? { setup: options.setup } : {}) });
  const worker = await checkWorkerPin(text, env);
  const dir = await mkdtemp(join(tmpdir(), "afk-actions-init-"));
  const auth: GitAuth = { token: conn.token, url: conn.info.cloneUrl };
  try {
    await git(["init", "--quiet", "--bare", dir], { cwd: dir });
    await git(["remote", "add", "origin", conn.info.cloneUrl], { cwd: dir });
    await git(["fetch", "--quiet", "--no-tags", "--depth=1", "origin", `+refs/heads/${base}:refs/heads/${base}`], { cwd: dir, auth });
    const blob = (await git(["hash-object", "-w", "--stdin"], { cwd: dir, input: text })).stdout.trim();
    const index = { GIT_INDEX_FILE: join(dir, "afk-index") };
    await git(["read-tree", `refs/heads/${base}`], { cwd: dir, env: index });
    await git(["update-index", "--add", "--cacheinfo", `100644,${blob},${path}`], { cwd: dir, env: index });
    const tree = (await git(["write-tree"], { cwd: dir, env: index })).stdout.trim();
    const message = `Add the afk-mcp worker workflow (${path})\n\nRuntime "actions" dispatches it once per worker attempt.\n`;
    const commit = (await git(["commit-tree", tree, "-p", `refs/heads/${base}`, "-F", "-"], { cwd: dir, input: message, env: IDENTITY })).stdout.trim();
    const pushed = await gitRaw(["push", "--quiet", "--force", "origin", `${commit}:refs/heads/${INIT_BRANCH}`], { cwd: dir, auth });
    if (pushed.exitCode !== 0) {
      const scope = /workflow/i.test(pushed.stderr)
        ? ": the token needs the `workflow` scope to add files under .github/workflows/ (gh auth refresh -s workflow)"
        : "";
      throw new UsageError(`could not push ${INIT_BRANCH}: ${pushed.stderr.trim()}${scope}`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  // One request: the PR.
  const pr = await conn.forge.createPull({
    title: `Add the afk-mcp worker workflow (${path})`,
    head: INIT_BRANCH,
    base,
    body: [
      `This adds \`${path}\`, the workflow an afk-mcp fleet with \`"runtime": "actions"\` dispatches once per worker attempt.`,
      "",
      "- Each run checks out the issue's branch, runs the engine with the issue's brief, and pushes to that branch and to the fleet's run ref only; the host decides everything else.",
      "- Inputs reach the worker through `env:`, never inside `run:`; a concurrency group per issue keeps two runs of one issue from running at once.",
      `- ${worker.charAt(0).toUpperCase()}${worker.slice(1)}.`,
      "- The engine's API key is a repository secret the workflow names: set `ANTHROPIC_API_KEY` (claude) or `OPENAI_API_KEY` (codex) under Settings → Secrets and variables → Actions.",
      "",
      'Merge it, then start the fleet with `"runtime": "actions"` in `.github/afk.json`.',
    ].join("\n"),
  });
  return {
    status: "proposed",
    path,
    pr: { number: pr.number, url: pr.htmlUrl },
    worker,
    message: `PR #${pr.number} proposes ${path}: set the engine's secret, merge it, then start with runtime "actions" (${pr.htmlUrl}); ${worker}`,
  };
}
