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
import { setSecrets } from "./actions-control.js";
import { attachRunner, type ActionsRunner } from "./actions-runner.js";
import { BareGit, initBareRepo } from "./bare-git.js";
import { ForgeEmulator, isValidLogin, type SharedParts } from "./core.js";
import { buildRouter } from "./routes.js";
import { applySeed, readSeed, type Seed } from "./seed.js";
import { createRequestHandler, type ResponseObserver } from "./server.js";
import { ForgeState, emptyState, isoNow } from "./state.js";
import { StatePersister, loadState } from "./store-persist.js";
import { setTimeout as sleep } from "node:timers/promises";

export type { ResponseObserver, ResponseRecord } from "./server.js";
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
  /**
   * More repositories served beside `repo` (each "owner/name", kept under `dir/more/`): the same
   * users and tokens, one accounting, one rate limit, one fault table, as repositories of one
   * GitHub. A seed applies to `repo` only; the others start with a README.
   */
  repos?: string[];
  /** Repository secrets for workflow runs (`${{ secrets.NAME }}`), set on the first repository at start. */
  secrets?: Record<string, string>;
  /** Workflow runs in progress at once, per repository (default 2). */
  actionsConcurrency?: number;
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
  /** The repositories served beside `repo` (ForgeOptions.repos). */
  more: { repo: string; gitUrl: string; bareRepo: string }[];
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

/** One repository of the forge: its state file, its bare repository, its ForgeEmulator. */
interface OpenedRepo {
  forge: ForgeEmulator;
  persister: StatePersister;
  bareRepo: string;
  gitUrl: string;
}

async function openRepo(dir: string, repo: string, apiUrl: string, seed: Seed | null, shared?: SharedParts): Promise<OpenedRepo> {
  await mkdir(dir, { recursive: true });
  const loaded = await loadState(dir);
  if (loaded && loaded.repo !== repo) {
    throw new Error(`local forge: ${dir} holds ${loaded.repo}, not ${repo}; use another --dir or drop --repo`);
  }
  const { owner, name } = parseRepo(repo);
  const bareRepo = join(dir, `${name}.git`);
  if (loaded && !(await exists(bareRepo))) {
    throw new Error(`local forge: ${dir} has a state file but no ${name}.git; remove the directory to start fresh`);
  }
  const gitUrl = `${apiUrl}/${owner}/${name}.git`;
  const data = loaded ?? emptyState(repo, DEFAULT_BRANCH);
  let persister: StatePersister | null = null;
  const state = new ForgeState(data, () => persister?.schedule());
  persister = new StatePersister(dir, () => state.data);
  const forge = new ForgeEmulator(state, new BareGit(bareRepo), { api: apiUrl, web: apiUrl, owner, name, fullName: repo, gitUrl }, dir, persister, shared);
  if (!loaded) {
    const files = seed?.files && Object.keys(seed.files).length > 0 ? seed.files : DEFAULT_FILES;
    await initBareRepo(bareRepo, DEFAULT_BRANCH, files, { ...forge.signature(DEFAULT_USER), date: isoNow() }, forge.tempIndex());
  }
  return { forge, persister, bareRepo, gitUrl };
}

/** The repository a request names (`/repos/{owner}/{repo}/...` or `/{owner}/{repo}.git/...`), lowercased, or null. */
function repoOfPath(rawPath: string): string | null {
  const seg = rawPath.split("/");
  if (seg[1] === "repos" && seg[2] && seg[3]) return `${seg[2]}/${seg[3]}`.toLowerCase();
  if (seg[1] && seg[2]?.endsWith(".git")) return `${seg[1]}/${seg[2].slice(0, -4)}`.toLowerCase();
  return null;
}

export async function startForge(opts: ForgeOptions): Promise<RunningForge> {
  const dir = resolve(opts.dir);
  await mkdir(dir, { recursive: true });
  const loaded = await loadState(dir);
  const repo = opts.repo ?? loaded?.repo ?? DEFAULT_REPO;
  parseRepo(repo);
  const more = [...new Set((opts.repos ?? []).map((r) => (parseRepo(r), r)))].filter((r) => r.toLowerCase() !== repo.toLowerCase());
  for (const u of opts.users ?? []) {
    if (!isValidLogin(u)) throw new Error(`local forge: ${JSON.stringify(u)} is not a valid login`);
  }
  const seed: Seed | null = !loaded && opts.seed ? await readSeed(opts.seed) : null;

  const byRepo = new Map<string, ForgeEmulator>();
  let primary: ForgeEmulator | null = null;
  const router = buildRouter();
  const handlers = new Map<ForgeEmulator, ReturnType<typeof createRequestHandler>>();
  const server: Server = createServer((req, res) => {
    // Requests can only arrive after listen(), by which time the forges exist. Anything that
    // names no other repository (/user, /rate_limit, /_forge/) is the first repository's.
    const named = repoOfPath(new URL(req.url ?? "/", "http://forge.invalid").pathname);
    const forge = (named && byRepo.get(named)) || primary!;
    handlers.get(forge)!(req, res);
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

  const opened: OpenedRepo[] = [];
  const runners: ActionsRunner[] = [];
  try {
    const first = await openRepo(dir, repo, apiUrl, seed);
    opened.push(first);
    primary = first.forge;
    primary.addUser(DEFAULT_USER, true);
    for (const u of opts.users ?? []) primary.addUser(u, false);
    if (!loaded && seed) applySeed(primary, seed, DEFAULT_USER);
    for (const other of more) {
      const { owner, name } = parseRepo(other);
      const next = await openRepo(join(dir, "more", owner.toLowerCase(), name.toLowerCase()), other, apiUrl, null, primary);
      // One set of users and tokens for every repository: the records themselves are shared.
      for (const u of primary.state.users()) next.forge.state.putUser(u);
      primary.siblings.push(next.forge);
      opened.push(next);
    }
    if (opts.secrets) setSecrets(primary, opts.secrets);
    for (const o of opened) {
      runners.push(attachRunner(o.forge, { concurrency: opts.actionsConcurrency }));
      byRepo.set(o.forge.urls.fullName.toLowerCase(), o.forge);
      handlers.set(o.forge, createRequestHandler(o.forge, router, opts.onResponse));
      await o.persister.flush();
    }
  } catch (err) {
    server.close();
    throw err;
  }
  const main = primary;

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const stopped = new Promise<void>((ok) => server.close(() => ok()));
      server.closeIdleConnections();
      // Workflow runs end with the forge: their processes are killed, the runs concluded.
      await Promise.all(runners.map((r) => r.close()));
      // Let in-flight merges and post-push bookkeeping finish before the final write.
      await Promise.all(opened.map((o) => o.forge.writeLock.run(async () => {})));
      await Promise.race([stopped, sleep(2_000, undefined, { ref: false })]);
      server.closeAllConnections();
      await Promise.all(opened.map((o) => o.persister.flush()));
    })();
    return closing;
  };

  const users = Object.fromEntries(main.state.users().map((u) => [u.login, u.token]));
  return {
    apiUrl,
    gitUrl: opened[0]!.gitUrl,
    token: main.state.user(DEFAULT_USER)!.token,
    repo,
    users,
    dir,
    bareRepo: opened[0]!.bareRepo,
    more: opened.slice(1).map((o) => ({ repo: o.forge.urls.fullName, gitUrl: o.gitUrl, bareRepo: o.bareRepo })),
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
