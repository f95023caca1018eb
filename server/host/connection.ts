// Everything the host needs to act on one repository: the GitHub client, the ref store, the
// fleet's own login, the repository's facts, and the canonical config read from the base
// branch (never from a worker's branch, which could otherwise rewrite its own gate).
import { hostname } from "node:os";
import { customAlphabet } from "nanoid";
import type { FleetConfig } from "../../schemas/config.js";
import { apiBaseUrl, resolveToken } from "../gh/auth.js";
import { UsageError } from "../gh/errors.js";
import { git, type GitAuth } from "../gh/git.js";
import { createGitHubForge } from "../gh/github-forge.js";
import { GitRefStore } from "../gh/gitrefs.js";
import type { RepoConnection } from "../gh/repo-connection.js";
import { stderrLogger, type Logger } from "../gh/octokit.js";
import { formatSlug, parseSlug } from "../gh/slug.js";
import { CONFIG_FILE_PATH, mergeConfig, parseConfigText } from "./config-load.js";
import { controlRepoDir, stateDir } from "../paths.js";
import { GatherMemory } from "../gh/gather.js";

/** A fresh instance id: lowercase letters and digits, valid under the instance grammar. */
export const newInstanceId = customAlphabet("0123456789abcdefghijklmnopqrstuvwxyz", 12);

export interface ConnectOptions {
  repo?: string | undefined;
  /** Tool or CLI config overrides, merged over the committed file. */
  overrides?: unknown;
  base?: string | undefined;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  logger?: Logger;
}

export async function connect(options: ConnectOptions): Promise<RepoConnection> {
  const env = options.env ?? process.env;
  const logger = options.logger ?? stderrLogger;
  const slug = parseSlug(options.repo ?? (await originSlug(options.cwd ?? process.cwd())));
  const repo = formatSlug(slug);
  const { token } = await resolveToken({ env });
  const apiUrl = apiBaseUrl(env);
  const forge = createGitHubForge({ repo: slug, token, baseUrl: apiUrl, fast: isLoopback(apiUrl), logger });
  // Two requests per connection, once: the login decides which PRs and markers are the fleet's,
  // the repository its clone URL, default branch and permissions.
  const [login, info] = await Promise.all([forge.whoami(), forge.repoInfo()]);
  const refs = new GitRefStore({
    controlDir: controlRepoDir(stateDir(env), slug.owner, slug.name),
    remoteUrl: info.cloneUrl,
    token,
  });
  // The config is read from the default branch unless a base is named: the base it names
  // may itself come from that config.
  const configBranch = options.base ?? info.defaultBranch;
  const configSha = await refs.read(`refs/heads/${configBranch}`);
  const auth = { token, url: info.cloneUrl };
  const { config, source } = await readRepoConfig(refs, auth, configBranch, configSha, options.overrides);
  const base = options.base ?? config.base ?? info.defaultBranch;
  const baseSha = base === configBranch ? configSha : await refs.read(`refs/heads/${base}`);
  return {
    repo,
    forge,
    refs,
    login,
    info,
    config,
    configSource: source,
    base,
    baseSha,
    token,
    apiUrl,
    hostName: hostname(),
    gatherMemory: new GatherMemory(),
  };
}

/** The repository named by the `origin` remote of a working directory. */
export async function originSlug(cwd: string): Promise<string> {
  try {
    const { stdout } = await git(["remote", "get-url", "origin"], { cwd });
    return formatSlug(parseSlug(stdout.trim()));
  } catch {
    throw new UsageError(`no repository given and ${cwd} has no GitHub "origin" remote: pass repo as "owner/name"`);
  }
}

/**
 * Every repository a working directory's remotes name (origin first, then the others in git's
 * order, e.g. `upstream` of a fork), for completions; remotes that name no repository are left out.
 */
export async function remoteSlugs(cwd: string): Promise<string[]> {
  const { stdout } = await git(["config", "--get-regexp", "^remote\\..*\\.url$"], { cwd }).catch(() => ({ stdout: "" }));
  const named = stdout
    .split("\n")
    .map((line) => /^remote\.(.+)\.url (.+)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ remote: m[1]!, url: m[2]! }));
  const slugs: string[] = [];
  for (const { url } of [...named.filter((r) => r.remote === "origin"), ...named.filter((r) => r.remote !== "origin")]) {
    try {
      const slug = formatSlug(parseSlug(url));
      if (!slugs.includes(slug)) slugs.push(slug);
    } catch {
      // not a repository URL afk-mcp can name
    }
  }
  return slugs;
}

/** Reads `.github/afk.json` at the base tip through the control repository. */
async function readRepoConfig(
  refs: GitRefStore,
  auth: GitAuth,
  base: string,
  baseSha: string | null,
  overrides: unknown,
): Promise<{ config: FleetConfig; source: string }> {
  if (baseSha === null) return { config: mergeConfig({}, overrides, { overrides: "config overrides" }), source: "defaults" };
  const cwd = refs.controlDir;
  await git(["fetch", "--no-tags", "--quiet", "origin", `+refs/heads/${base}:refs/remotes/origin/${base}`], {
    cwd,
    auth,
  });
  const shown = await git(["cat-file", "-p", `refs/remotes/origin/${base}:${CONFIG_FILE_PATH}`], { cwd }).catch(() => null);
  if (shown === null) return { config: mergeConfig({}, overrides, { overrides: "config overrides" }), source: "defaults" };
  const source = `${CONFIG_FILE_PATH} at ${base}`;
  const fileConfig = parseConfigText(shown.stdout, source);
  return { config: mergeConfig(fileConfig, overrides, { file: source, overrides: "config overrides" }), source };
}

export function isLoopback(url: string): boolean {
  try {
    const host = new URL(url).hostname;
    return host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
  } catch {
    return false;
  }
}

/**
 * Under a time scale (tests, the chaos harness) the lease runs at the loop's pace: a 5-minute
 * lease lapses in 15 s at 0.05. Left at full length, a host restarted under a new identity would
 * wait real minutes for claims its dead predecessor held, while everything else ran scaled.
 */
export function withScaledLease(conn: RepoConnection, scale: number): RepoConnection {
  if (scale === 1) return conn;
  const lease = conn.config.lease;
  return {
    ...conn,
    config: { ...conn.config, lease: { ...lease, ttl_seconds: lease.ttl_seconds * scale, heartbeat_seconds: lease.heartbeat_seconds * scale } },
  };
}
