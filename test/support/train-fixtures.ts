// Fixtures for the landing-train tests: a fleet host (claim lease, work repository, landing
// context) on a local forge, PRs opened the way a worker's are, and a gate script that both the
// demo's CI runner and the local gate run: red when the tree holds BAD, held while a hold file
// exists (so a test can move the base while a train is gated), and recording each tree it passed.
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DEFAULT_CONFIG, type FleetConfig } from "../../schemas/config.js";
import { createGitHubForge, type GitHubForge } from "../../server/gh/github-forge.js";
import { GitRefStore } from "../../server/gh/gitrefs.js";
import { Lease } from "../../server/gh/lease.js";
import type { LandingContext } from "../../server/landing/land.js";
import type { TrainMember } from "../../server/landing/train.js";
import { GateCache } from "../../server/runtimes/local/gate-command.js";
import { HostLandings } from "../../server/landing/held-locks.js";
import { WorkRepo } from "../../server/worktrees/worktrees.js";
import { api, git, repoPath, tempDir, type TestForge } from "./forge-fixtures.js";

export const NS = "refs/afk";
export const BASE = "main";

export interface TrainHost {
  forge: TestForge;
  gh: GitHubForge;
  refs: GitRefStore;
  lease: Lease;
  workRepo: WorkRepo;
  instance: string;
  host: string;
  /** The host's landings (their line and held locks), as a FleetHost keeps them. */
  landings: HostLandings;
}

/** A fleet host's landing parts on `forge`: GitHub client, ref store, claim lease, work repository. */
export async function trainHost(forge: TestForge, instance: string, host = `host-${instance}`): Promise<TrainHost> {
  const state = await tempDir(`afk-train-${instance}-`);
  const gh = createGitHubForge({ repo: forge.repo, token: forge.token, baseUrl: forge.apiUrl, fast: true });
  const refs = new GitRefStore({ controlDir: join(state, "control.git"), remoteUrl: forge.gitUrl, token: forge.token });
  const lease = new Lease(refs, { namespace: NS, ttlSeconds: 4500, heartbeatSeconds: 60 }, instance, host);
  const workRepo = new WorkRepo({
    repoDir: join(state, "work.git"),
    worktreeRoot: join(state, "worktrees"),
    remoteUrl: forge.gitUrl,
    auth: { token: forge.token, url: forge.gitUrl },
  });
  return { forge, gh, refs, lease, workRepo, instance, host, landings: new HostLandings() };
}

export function trainConfig(gate: "required" | "local", localCommand: string | null = null, max = 8): FleetConfig {
  const c = structuredClone(DEFAULT_CONFIG) as FleetConfig;
  c.landing.strategy = "push";
  c.landing.train.max = max;
  c.gate.ci = gate;
  c.gate.local_command = localCommand;
  return c;
}

export function trainContext(h: TrainHost, cfg: FleetConfig, extra: Partial<LandingContext> = {}): LandingContext {
  return {
    forge: h.gh,
    login: "afk-bot",
    base: BASE,
    config: cfg,
    lease: h.lease,
    refs: h.refs,
    workRepo: h.workRepo,
    auth: { token: h.forge.token, url: h.forge.gitUrl },
    instance: h.instance,
    host: h.host,
    gateCache: new GateCache(),
    landings: h.landings,
    ...extra,
  };
}

/** Claims a new issue, commits `files` in its worktree, pushes, opens the fleet's PR. */
export async function fleetPr(
  h: Pick<TrainHost, "forge" | "gh" | "lease" | "workRepo">,
  title: string,
  files: Record<string, string>,
): Promise<TrainMember & { branch: string }> {
  const r = await api(h.forge, "POST", repoPath(h.forge, "/issues"), { title, body: "do the thing" });
  assert.equal(r.status, 201);
  const issue = r.body.number as number;
  const claim = await h.lease.claim(issue);
  assert.ok(claim.won);
  const wt = await h.workRepo.prepare({ issue, title, base: BASE });
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(wt.path, path, ".."), { recursive: true });
    await writeFile(join(wt.path, path), content);
    await git(wt.path, "add", "--", path);
  }
  await git(wt.path, "commit", "--quiet", "-m", `#${issue}: ${title}`);
  const pushed = await h.workRepo.push(issue);
  const pull = await h.gh.createPull({ title, body: `Closes #${issue}`, head: pushed.branch, base: BASE });
  return { issue, title, claimSha: claim.sha, pr: pull.number, head: pushed.sha, branch: pushed.branch };
}

export interface GateScript {
  /** argv for the CI runner. */
  argv: string[];
  /** The same as a shell command, for `gate.local_command`. */
  command: string;
  /** While this file exists the gate waits (after writing `${hold}.seen`). */
  hold: string;
  /** One tree per line, each a tree the gate passed. */
  trees: string;
}

/**
 * `delayMs`: how long each run takes before it judges (a simulated CI's duration). `trainsOnly`:
 * the hold holds only a train's candidate (a commit with three parents or more), so single PR
 * heads still pass while a train is held.
 */
export async function gateScript(delayMs = 0, options: { trainsOnly?: boolean } = {}): Promise<GateScript> {
  const dir = await tempDir("afk-train-gate-");
  const script = join(dir, "gate.mjs");
  const hold = join(dir, "hold");
  const trees = join(dir, "trees");
  await writeFile(
    script,
    [
      'import { existsSync, appendFileSync, writeFileSync } from "node:fs";',
      'import { execFileSync } from "node:child_process";',
      "const [hold, trees, delay] = process.argv.slice(2);",
      "await new Promise((ok) => setTimeout(ok, Number(delay)));",
      options.trainsOnly
        ? 'const held = () => { try { execFileSync("git", ["rev-parse", "--verify", "--quiet", "HEAD^3"], { stdio: "ignore" }); return existsSync(hold); } catch { return false; } };'
        : "const held = () => existsSync(hold);",
      'if (held()) { writeFileSync(hold + ".seen", "1"); while (existsSync(hold)) await new Promise((ok) => setTimeout(ok, 50)); }',
      'if (existsSync("BAD")) { console.log("not ok 1 - the tree holds BAD"); process.exit(1); }',
      'appendFileSync(trees, execFileSync("git", ["rev-parse", "HEAD^{tree}"], { encoding: "utf8" }));',
      'console.log("ok 1 - good tree");',
    ].join("\n"),
  );
  await writeFile(trees, "");
  return {
    argv: [process.execPath, script, hold, trees, String(delayMs)],
    command: `'${process.execPath}' '${script}' '${hold}' '${trees}' ${delayMs}`,
    hold,
    trees,
  };
}
