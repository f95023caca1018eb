// The sandbox runtime (server/runtimes/sandbox/) with real bubblewrap, real processes, the local
// forge over HTTP and real git: two workers run at once under the sandbox and each tries what a
// prompt-injected agent would — read a credential planted in the host's HOME, write outside its
// worktree, list the fleet's state dir and the other worktrees, move the other issue's branch,
// reach a loopback port nobody allowed (directly and through the sandbox's proxy) and a host by
// name — and writes down what it got; then it does its work with a plain `git add -A`. Both
// issues land as usual, every probe got nothing, and nothing changed outside. Also: the
// allowlist's rules, the runtime's choice, and a start refused with the install command where
// bubblewrap cannot be found.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type AddressInfo } from "node:net";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DEFAULT_CONFIG } from "../schemas/config.js";
import { sandboxAvailability } from "../server/runtimes/sandbox/available.js";
import { allowlistFor, baseUrlHosts, hostAllowed, parseHostRule, type HostRule } from "../server/runtimes/sandbox/hosts.js";
import { outermost } from "../server/runtimes/sandbox/plan.js";
import { runtimeOf } from "../server/runtimes/sandbox/index.js";
import { makePrivateGitDir, takeBack } from "../server/runtimes/sandbox/private-git.js";
import { shellQuote } from "../server/runtimes/local/spawn.js";
import { defaultWorkRepoDir } from "../server/worktrees/work-repo.js";
import { api, git, repoPath, startTestForge, tempDir } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, issueWorld } from "./support/fleet-fixtures.js";
import { ROOT } from "./support/paths.js";
import { waitFor } from "./support/wait.js";

const cleanups = cleanupsAfterFile();
const WORKER = join(ROOT, "test", "support", "workers", "sandboxed.sh");

describe("the sandbox's allowlist and runtime choice", () => {
  const rules = (...texts: string[]): HostRule[] => texts.map((t) => parseHostRule(t)!);
  it("a bare host means 443 and 80; host:port that port; *.domain the subdomains; loopback names alike", () => {
    assert.ok(hostAllowed(rules("api.anthropic.com"), "API.anthropic.com", 443));
    assert.ok(!hostAllowed(rules("api.anthropic.com"), "api.anthropic.com", 22));
    assert.ok(!hostAllowed(rules("api.anthropic.com"), "evil.anthropic.com", 443));
    assert.ok(hostAllowed(rules("*.npmjs.org"), "registry.npmjs.org", 443));
    assert.ok(!hostAllowed(rules("*.npmjs.org"), "npmjs.org.evil.com", 443));
    assert.ok(hostAllowed(rules("127.0.0.1:8080"), "localhost", 8080));
    assert.ok(!hostAllowed(rules("127.0.0.1:8080"), "127.0.0.1", 8081));
    assert.equal(parseHostRule("http://x"), null);
    assert.equal(parseHostRule("x:99999"), null);
  });
  it("engine hosts, a custom base URL's host:port, the user's hosts", () => {
    assert.deepEqual(baseUrlHosts({ ANTHROPIC_BASE_URL: "http://127.0.0.1:4010/v1", OPENAI_BASE_URL: "https://gw.example.com", OTHER: "http://x" }), [
      "127.0.0.1:4010",
      "gw.example.com:443",
    ]);
    assert.deepEqual(allowlistFor("claude", { ANTHROPIC_BASE_URL: "http://127.0.0.1:4010" }, ["registry.npmjs.org"]), [
      "api.anthropic.com",
      "127.0.0.1:4010",
      "registry.npmjs.org",
    ]);
    assert.ok(allowlistFor(null, {}, []).includes("api.openai.com"), "an opaque command gets every engine's API host");
    assert.deepEqual(outermost(["/root/.local/state/afk-mcp", "/root", "/srv/wt", "/srv/wt/a", "/"]), ["/root", "/srv/wt"]);
  });
  it("AFK_RUNTIME in the host's environment wins over config; a bad value is refused by name", () => {
    assert.equal(runtimeOf(DEFAULT_CONFIG, { AFK_RUNTIME: "sandbox" }), "sandbox");
    assert.equal(runtimeOf({ ...DEFAULT_CONFIG, runtime: "local" }, { AFK_RUNTIME: "sandbox" }), "sandbox");
    assert.equal(runtimeOf({ ...DEFAULT_CONFIG, runtime: "local" }, { AFK_RUNTIME: "local" }), "local");
    assert.throws(() => runtimeOf(DEFAULT_CONFIG, { AFK_RUNTIME: "docker" }), /AFK_RUNTIME="docker" is not a runtime: expected one of sandbox, local, actions/);
  });
});

describe("the sandbox's private git dir (real git)", () => {
  it("borrows the work repository's objects; only the issue's branch comes back, by compare-and-swap; a commondir file gives nothing back", async () => {
    const dir = await tempDir("afk-sbx-git-");
    const repo = join(dir, "work.git");
    await git(dir, "init", "-q", "--bare", repo);
    const seed = join(dir, "seed");
    await git(dir, "init", "-q", "-b", "main", seed);
    await writeFile(join(seed, "README"), "base\n");
    await git(seed, "add", "-A");
    await git(seed, "-c", "user.name=s", "-c", "user.email=s@example.com", "commit", "-qm", "base");
    await git(seed, "push", "-q", repo, "main");
    const mine = join(dir, "wt", "issue-1");
    const other = join(dir, "wt", "issue-2");
    await git(repo, "worktree", "add", "-q", mine, "-b", "afk/1-mine", "main");
    await git(repo, "worktree", "add", "-q", other, "-b", "afk/2-other", "main");
    await git(repo, "config", "user.name", "fleet");
    await git(repo, "config", "user.email", "fleet@example.com");
    const gitDir = join(dir, "box", "git");
    const dotGit = join(dir, "box", "dotgit");
    await mkdir(join(dir, "box"));
    await makePrivateGitDir(mine, "afk/1-mine", gitDir, dotGit);
    assert.equal(await readFile(dotGit, "utf8"), `gitdir: ${gitDir}\n`);
    assert.equal((await readFile(join(gitDir, "objects", "info", "alternates"), "utf8")).trim(), join(repo, "objects"));
    // The worker, as git sees it inside: its own git dir over the worktree's files.
    const inside = (...args: string[]) => git(mine, "--git-dir", gitDir, "--work-tree", mine, ...args);
    await writeFile(join(mine, "work.txt"), "work\n");
    await inside("add", "-A");
    await inside("commit", "-qm", "work for #1");
    const tip = (await inside("rev-parse", "HEAD")).stdout.trim();
    await inside("update-ref", "refs/heads/afk/2-other", tip);
    const otherBefore = (await git(repo, "rev-parse", "afk/2-other")).stdout.trim();
    const verdict = join(dir, "verdict.json");
    await writeFile(join(dir, "box", "verdict.json"), '{"verdict":"blocked","reason":"x"}');
    const tb = { gitDir, worktree: mine, branch: "afk/1-mine", boxVerdict: join(dir, "box", "verdict.json"), verdict };
    await writeFile(join(gitDir, "commondir"), "../elsewhere\n");
    assert.equal(await takeBack(tb), null, "a private repository with a commondir file gives nothing back");
    await rm(join(gitDir, "commondir"));
    assert.equal(await takeBack(tb), tip);
    assert.equal((await git(repo, "rev-parse", "afk/1-mine")).stdout.trim(), tip, "the issue's branch moved to the worker's commit");
    assert.equal((await git(repo, "rev-parse", "afk/2-other")).stdout.trim(), otherBefore, "the other issue's branch did not");
    assert.equal((await git(mine, "status", "--porcelain")).stdout.trim(), "", "the worktree's index follows its branch");
    assert.equal(await readFile(verdict, "utf8"), '{"verdict":"blocked","reason":"x"}');
    assert.equal(await takeBack(tb), null, "nothing new: nothing moves");
    assert.equal((await git(repo, "for-each-ref", "refs/sandbox/")).stdout.trim(), "", "no temporary ref left");
  });
});

describe("workers under the sandbox runtime (real bubblewrap)", () => {
  it("a start where bubblewrap cannot be found is refused with the install command; runtime local is the explicit way out", async () => {
    const forge = await startTestForge();
    cleanups.push(() => forge.dispose());
    const dir = await tempDir("afk-sbx-refuse-");
    const host = fleetHost(forge, dir, cleanups, { AFK_RUNTIME: "sandbox", PATH: join(dir, "no-programs-here") });
    await assert.rejects(
      host.start({ repo: forge.repo, worker_command: "true", target: 1 }),
      /project_start refused: runtime sandbox cannot run here: bwrap \(bubblewrap\) and socat not found on PATH: install bubblewrap and socat \(Debian, Ubuntu: `sudo apt-get install bubblewrap socat`.*or choose runtime "local" explicitly/,
    );
    const local = fleetHost(forge, dir, cleanups, { AFK_RUNTIME: "local", PATH: join(dir, "no-programs-here") });
    const steps: string[] = [];
    await local.start({ repo: forge.repo, worker_command: "true", target: 1, dry_run: true }, (s) => steps.push(s));
    assert.ok(
      steps.some((s) => s.startsWith("runtime local: workers run as this user, unconfined")),
      steps.join("\n"),
    );
  });

  it(
    "hostile workers get nothing — no credential, no write outside, no other branch, no port off the allowlist — and both issues land",
    { timeout: 300_000 },
    async () => {
      const available = await sandboxAvailability();
      assert.ok(available.ok, `the sandbox must run on this machine for this test (.ci/run installs bubblewrap and socat): ${available.detail}`);
      const { forge, dir, issues } = await issueWorld(cleanups, ["Alpha", "Beta"], "afk-sbx-");
      const [a, b] = issues as [number, number];
      const home = join(dir, "home");
      await mkdir(join(home, ".config", "gh"), { recursive: true });
      const cred = join(home, ".config", "gh", "hosts.yml");
      await writeFile(cred, "github.com:\n  oauth_token: planted-secret-token\n");
      const outside = join(dir, "outside");
      await mkdir(outside);
      let knocks = 0;
      const listener = createServer((socket) => {
        knocks += 1;
        socket.destroy();
      });
      await new Promise<void>((done) => listener.listen(0, "127.0.0.1", done));
      cleanups.push(() => new Promise<void>((done) => listener.close(() => done())));
      const port = (listener.address() as AddressInfo).port;
      const state = join(dir, "state");
      const [owner, name] = forge.repo.split("/") as [string, string];
      const branches = [`afk/${a}-alpha`, `afk/${b}-beta`];
      const command = ["sh", WORKER, cred, outside, String(port), state, defaultWorkRepoDir(state, owner, name), ...branches].map(shellQuote).join(" ");
      const host = fleetHost(forge, dir, cleanups, { AFK_RUNTIME: "sandbox", HOME: home });
      const steps: string[] = [];
      await host.start(
        {
          repo: forge.repo,
          worker_command: command,
          target: 2,
          auto_merge: true,
          config: {
            retry: 0,
            gate: { ci: "local", local_command: "true" },
            landing: { strategy: "push" },
            pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 },
          },
        },
        (s) => steps.push(s),
      );
      assert.ok(
        steps.some((s) => /^runtime sandbox \(bubblewrap \d/.test(s)),
        steps.join("\n"),
      );
      const supervisor = async () =>
        ((await host.logs({ repo: forge.repo, lane: "supervisor", tail_lines: 500 })).records as Array<{ event?: unknown; msg?: unknown }>)
          .map((r) => `${String(r.event)}: ${String(r.msg)}`)
          .join("\n");
      for (const n of [a, b]) {
        await waitFor(
          `#${n} landed and closed`,
          async () => ((await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body as { state: string }).state === "closed",
          { deadlineMs: 4 * 60_000, intervalMs: 250, explain: supervisor },
        );
      }
      await host.stop({ repo: forge.repo, stop_workers: true });

      for (const n of [a, b]) {
        const report = (await git(forge.bareRepo, "show", `main:sandbox-report-${n}.txt`)).stdout;
        const got = Object.fromEntries(
          report
            .trim()
            .split("\n")
            .map((line) => [line.slice(0, line.indexOf(": ")), line.slice(line.indexOf(": ") + 2)]),
        );
        assert.deepEqual(
          got,
          {
            credential: "denied",
            outside: "denied",
            "state files": "0",
            "sibling worktrees": "0",
            "work repository refs moved": "0",
            direct: "ECONNREFUSED",
            proxied: "HTTP/1.1 403 Forbidden",
            "proxied name": "HTTP/1.1 403 Forbidden",
          },
          `#${n}'s report:\n${report}`,
        );
        assert.equal((await git(forge.bareRepo, "show", `main:work-${n}.txt`)).stdout.trim(), `work for ${n}`);
      }
      // Each issue's commit is its own worker's, once: neither moved the other's branch.
      const subjects = (await git(forge.bareRepo, "log", "--format=%s", "main")).stdout.split("\n").filter((s) => s.startsWith("work for"));
      assert.deepEqual(subjects.sort(), [`work for #${a}`, `work for #${b}`].sort());
      for (const n of [a, b]) {
        const files = (await git(forge.bareRepo, "log", "--format=", "--name-only", "main", "--grep", `^work for #${n}$`)).stdout
          .split("\n")
          .filter(Boolean)
          .sort();
        assert.deepEqual(files, [`sandbox-report-${n}.txt`, `work-${n}.txt`]);
      }
      assert.deepEqual(await readdir(outside), [], "nothing was written outside the worktrees");
      assert.equal(knocks, 0, "the listener off the allowlist was never reached");
      const lines = ((await host.logs({ repo: forge.repo, lane: "worker", tail_lines: 500 })).records as Array<{ msg?: unknown }>).map((r) => String(r.msg));
      assert.equal(lines.filter((l) => l.startsWith("afk-mcp sandbox: bubblewrap;")).length, 2, "each worker ran in the sandbox");
      assert.equal(lines.filter((l) => l.includes("refused a connection to example.com:443")).length, 2, "each refusal is named in the worker lane");
      assert.ok(!lines.some((l) => l.includes("planted-secret-token")));
    },
  );
});
