// The local forge: a GitHub-REST-compatible HTTP server over a real bare git repository.
// It is the test substrate for the fleet and the embedded default of `afk-mcp demo`.
//
//   const forge = await startForge({ dir: "/tmp/forge" });
//   // forge.apiUrl -> GITHUB_API_URL, forge.token -> GITHUB_TOKEN, forge.gitUrl -> clone URL
//   await forge.close();
import { mkdir, stat } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { BareGit, initBareRepo } from "./bare-git.js";
import { LocalForge, isValidLogin } from "./core.js";
import { buildRouter } from "./routes.js";
import { applySeed, readSeed, type Seed } from "./seed.js";
import { createRequestHandler, type ResponseObserver } from "./server.js";
import { ForgeState, emptyState, isoNow } from "./state.js";
import { StatePersister, loadState } from "./store-persist.js";

export type { ResponseRecord } from "./server.js";
export type { Seed, SeedIssue } from "./seed.js";

export interface ForgeOptions {
  dir: string;
  /** 0 (default) picks an ephemeral port. */
  port?: number;
  /** "owner/name"; default "afk/demo". */
  repo?: string;
  /** Extra logins (push access); the default user "afk-bot" is an admin. */
  users?: string[];
  /** Path to a seed JSON file, applied only when the forge is created fresh. */
  seed?: string;
  /** Sees every REST response (not git or /_forge/ traffic): the OpenAPI conformance hook. */
  onResponse?: ResponseObserver;
}

export interface RunningForge {
  /** http://127.0.0.1:PORT */
  apiUrl: string;
  /** http://127.0.0.1:PORT/owner/name.git */
  gitUrl: string;
  /** The default user's token. */
  token: string;
  repo: string;
  /** login -> token */
  users: Record<string, string>;
  dir: string;
  bareRepo: string;
  close(): Promise<void>;
}

export const DEFAULT_USER = "afk-bot";
export const DEFAULT_REPO = "afk/demo";
export const DEFAULT_BRANCH = "main";

const DEFAULT_FILES: Record<string, string> = {
  "README.md": "# demo\n\nA repository served by the afk-mcp local forge.\n",
};

function parseRepo(repo: string): { owner: string; name: string } {
  const m = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))\/([A-Za-z0-9._-]+)$/.exec(repo);
  if (!m || m[2] === "." || m[2] === ".." || m[2]!.endsWith(".git")) {
    throw new Error(`local forge: repo must look like "owner/name", got ${JSON.stringify(repo)}`);
  }
  return { owner: m[1]!, name: m[2]! };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

export async function startForge(opts: ForgeOptions): Promise<RunningForge> {
  const dir = resolve(opts.dir);
  await mkdir(dir, { recursive: true });
  const loaded = await loadState(dir);
  const repo = opts.repo ?? loaded?.repo ?? DEFAULT_REPO;
  if (loaded && loaded.repo !== repo) {
    throw new Error(`local forge: ${dir} holds ${loaded.repo}, not ${repo}; use another --dir or drop --repo`);
  }
  const { owner, name } = parseRepo(repo);
  for (const u of opts.users ?? []) {
    if (!isValidLogin(u)) throw new Error(`local forge: ${JSON.stringify(u)} is not a valid login`);
  }
  const seed: Seed | null = !loaded && opts.seed ? await readSeed(opts.seed) : null;
  const bareRepo = join(dir, `${name}.git`);
  if (loaded && !(await exists(bareRepo))) {
    throw new Error(`local forge: ${dir} has a state file but no ${name}.git; remove the directory to start fresh`);
  }

  let forge: LocalForge | null = null;
  const router = buildRouter();
  const server: Server = createServer((req, res) => {
    // Requests can only arrive after listen(), by which time the forge exists.
    createRequestHandler(forge!, router, opts.onResponse)(req, res);
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((ok, fail) => {
    server.once("error", fail);
    server.listen(opts.port ?? 0, "127.0.0.1", () => {
      server.off("error", fail);
      ok();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const apiUrl = `http://127.0.0.1:${port}`;
  const gitUrl = `${apiUrl}/${owner}/${name}.git`;

  const data = loaded ?? emptyState(repo, DEFAULT_BRANCH);
  let persister: StatePersister | null = null;
  const state = new ForgeState(data, () => persister?.schedule());
  persister = new StatePersister(dir, () => state.data);
  forge = new LocalForge(state, new BareGit(bareRepo), { api: apiUrl, web: apiUrl, owner, name, fullName: repo, gitUrl }, dir, persister);

  try {
    forge.addUser(DEFAULT_USER, true);
    for (const u of opts.users ?? []) forge.addUser(u, false);
    if (!loaded) {
      const files = seed?.files && Object.keys(seed.files).length > 0 ? seed.files : DEFAULT_FILES;
      await initBareRepo(bareRepo, DEFAULT_BRANCH, files, { ...forge.signature(DEFAULT_USER), date: isoNow() }, forge.tempIndex());
      if (seed) applySeed(forge, seed, DEFAULT_USER);
    }
    await persister.flush();
  } catch (err) {
    server.close();
    throw err;
  }

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const stopped = new Promise<void>((ok) => server.close(() => ok()));
      server.closeIdleConnections();
      // Let in-flight merges and post-push bookkeeping finish before the final write.
      await forge!.writeLock.run(async () => {});
      await Promise.race([stopped, new Promise((ok) => setTimeout(ok, 2_000).unref())]);
      server.closeAllConnections();
      await persister!.flush();
    })();
    return closing;
  };

  const users = Object.fromEntries(state.users().map((u) => [u.login, u.token]));
  return {
    apiUrl,
    gitUrl,
    token: state.user(DEFAULT_USER)!.token,
    repo,
    users,
    dir,
    bareRepo,
    close,
  };
}

/**
 * `afk-forge` as a long-running process: prints one JSON line with the URLs and tokens, then
 * serves until SIGINT or SIGTERM and closes cleanly (state flushed to disk).
 */
export async function forgeMain(opts: ForgeOptions, print: (line: string) => void): Promise<void> {
  const forge = await startForge(opts);
  print(JSON.stringify({ api_url: forge.apiUrl, git_url: forge.gitUrl, token: forge.token, repo: forge.repo, users: forge.users }));
  await new Promise<void>((ok) => {
    const stop = (): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      ok();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  await forge.close();
}
