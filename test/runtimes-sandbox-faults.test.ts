// A sandbox that cannot start (server/runtimes/sandbox/fault.ts), with real bubblewrap, the local
// forge over HTTP and real git. Two ways, both broken for real: bubblewrap gone from the host's
// PATH after the start (the host's own check at birth finds it), and bubblewrap failing before
// the worker's command ran (the launcher finds it: here a HOME outside /tmp that does not exist,
// over which bubblewrap cannot mount its tmpfs). Each ends the same way: "the sandbox could not
// start: …" on the issue's board and in `status`, one attempt per fault, the worker's command
// never run, and the next attempt continues the commit an earlier host checkpointed and lands.
// A sandbox broken for every birth trips the circuit breaker instead of burning the backlog's
// retries, and the parked births, the released boards and the swept issues' notes name it.
// Also the launcher alone: a worker's own failure is no fault; bubblewrap that cannot be run,
// or that refuses its arguments, is one.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { which } from "../server/runtimes/sandbox/available.js";
import { readFault, withSandboxFault } from "../server/runtimes/sandbox/fault.js";
import { BASE_ARGS, sandboxPaths } from "../server/runtimes/sandbox/plan.js";
import { sandboxDirOf, type SandboxSpec } from "../server/runtimes/sandbox/spec.js";
import { shellQuote } from "../server/runtimes/local/spawn.js";
import { api, cloneRepo, git, pushBranch, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, READY } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";

const cleanups = cleanupsAfterFile();
const LAUNCHER = fileURLToPath(new URL("../server/runtimes/sandbox/launcher.js", import.meta.url));
const BWRAP = which("bwrap");
const SOCAT = which("socat");
const SANDBOX_UP = /^runtime sandbox \(bubblewrap \d/;

// The worker: it says it runs (in the sandbox), waits for the test's word, then commits part 2
// on top of whatever the branch already holds.
const WORKER = [
  "#!/bin/sh",
  "cat > /dev/null",
  'echo "worker of #$AFK_ISSUE runs, sandbox: $AFK_SANDBOX"',
  'until [ -e "$1-$AFK_ISSUE" ]; do sleep 0.1; done',
  'echo "part 2 for $AFK_ISSUE" > "part-2-$AFK_ISSUE.txt"',
  'git add -A && git -c user.name=w -c user.email=w@example.com -c commit.gpgsign=false commit -qm "part 2 for #$AFK_ISSUE"',
  "",
].join("\n");

/**
 * A PATH whose bwrap and socat are links the test can take away: every directory of this
 * process's PATH that holds either is mirrored, link by link, into `bin`, which comes first.
 */
async function ownPath(bin: string): Promise<string> {
  await mkdir(bin, { recursive: true });
  const kept: string[] = [];
  for (const entry of (process.env.PATH ?? "").split(":")) {
    if (!entry) continue;
    const names = await readdir(entry).catch(() => null);
    if (names === null) continue;
    if (!names.includes("bwrap") && !names.includes("socat")) {
      kept.push(entry);
      continue;
    }
    for (const name of names) await symlink(join(entry, name), join(bin, name)).catch(() => undefined);
  }
  return [bin, ...kept].join(":");
}

async function comments(forge: TestForge, n: number): Promise<string> {
  const r = await api(forge, "GET", repoPath(forge, `/issues/${n}/comments`));
  return (r.body as Array<{ body: string }>).map((c) => c.body).join("\n---\n");
}

async function labels(forge: TestForge, n: number): Promise<string[]> {
  return ((await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body as { labels: Array<{ name: string }> }).labels.map((l) => l.name).sort();
}

async function closed(forge: TestForge, n: number): Promise<boolean> {
  return ((await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body as { state: string }).state === "closed";
}

/** Issues not yet ready (each becomes ready when the test says), each with a commit an earlier host checkpointed on its branch. */
async function checkpointedIssues(forge: TestForge, titles: readonly string[]): Promise<number[]> {
  assert.equal((await api(forge, "POST", repoPath(forge, "/labels"), { name: READY, color: "0e8a16" })).status, 201);
  const clone = await cloneRepo(forge);
  await git(clone, "config", "user.name", "earlier host");
  await git(clone, "config", "user.email", "host@example.com");
  const numbers: number[] = [];
  for (const title of titles) {
    const r = await api(forge, "POST", repoPath(forge, "/issues"), { title, body: "" });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const n = r.body.number as number;
    await pushBranch(clone, `afk/${n}-${title.toLowerCase()}`, `part-1-${n}.txt`, `part 1 for ${n}\n`);
    numbers.push(n);
  }
  return numbers;
}

async function makeReady(forge: TestForge, n: number): Promise<void> {
  assert.equal((await api(forge, "POST", repoPath(forge, `/issues/${n}/labels`), { labels: [READY] })).status, 200);
}

type LaneRecord = { event?: unknown; msg?: unknown; issue?: unknown };

/**
 * A fleet on `forge` under the sandbox runtime, with a PATH of its own (ownPath), the worker
 * script and its go-files in `tools` (both shown inside the sandbox), and `config` over the
 * scene's: what the lanes say, for its assertions and its failures.
 */
async function sandboxFleet(
  forge: TestForge,
  prefix: string,
  home: string,
  target: number,
  config: Record<string, unknown>,
): Promise<{
  dir: string;
  bin: string;
  tools: string;
  host: ReturnType<typeof fleetHost>;
  lane: (which: "supervisor" | "worker") => Promise<LaneRecord[]>;
  explain: () => Promise<string>;
}> {
  const dir = await tempDir(prefix);
  const bin = join(dir, "bin");
  const path = await ownPath(bin);
  const tools = join(dir, "tools");
  await mkdir(tools);
  await writeFile(join(tools, "worker.sh"), WORKER);
  const host = fleetHost(forge, dir, cleanups, { AFK_RUNTIME: "sandbox", PATH: path, HOME: home });
  const steps: string[] = [];
  await host.start(
    {
      repo: forge.repo,
      worker_command: ["sh", join(tools, "worker.sh"), join(tools, "go")].map(shellQuote).join(" "),
      target,
      auto_merge: true,
      config: {
        board: { settle_seconds: 0 },
        sandbox: { allow_read: [bin, tools] },
        gate: { ci: "local", local_command: "true" },
        landing: { strategy: "push" },
        pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 },
        ...config,
      },
    },
    (s) => steps.push(s),
  );
  assert.ok(
    steps.some((s) => SANDBOX_UP.test(s)),
    steps.join("\n"),
  );
  const lane = async (which: "supervisor" | "worker"): Promise<LaneRecord[]> =>
    (await host.logs({ repo: forge.repo, lane: which, tail_lines: 2000 })).records as LaneRecord[];
  const explain = async () => (await lane("supervisor")).map((r) => `${String(r.event)}: ${String(r.msg)}`).join("\n");
  return { dir, bin, tools, host, lane, explain };
}

describe("the sandbox launcher tells a sandbox that could not start from a worker that failed (real bubblewrap)", () => {
  /** Runs the launcher on a spec of `bwrapArgs` and `commandLine`, as the local runtime would; its exit, output and recorded fault. */
  async function launch(
    bwrap: string,
    extraArgs: string[],
    commandLine: string,
  ): Promise<{ code: number | null; stdout: string; stderr: string; fault: string | null }> {
    const dir = await tempDir("afk-sbx-launch-");
    const runDir = join(dir, "issue-1");
    const sandboxDir = sandboxDirOf(runDir);
    await mkdir(sandboxDir, { recursive: true });
    const spec: SandboxSpec = {
      bwrap,
      socat: SOCAT!,
      bwrapArgs: [...BASE_ARGS, ...extraArgs, "--chdir", "/"],
      shell: "/bin/sh",
      commandLine,
      allowHosts: [],
      forwardPorts: [],
      proxyPort: 3128,
      showPathUnder: [],
      keepOut: [],
      env: { set: {}, unset: [] },
      takeBack: {
        gitDir: join(sandboxDir, "git"),
        worktree: dir,
        branch: "afk/1-x",
        boxVerdict: join(sandboxDir, "box", "verdict.json"),
        verdict: join(runDir, "v"),
      },
    };
    await writeFile(sandboxPaths(sandboxDir).spec, JSON.stringify(spec));
    const child = spawn(process.execPath, [LAUNCHER, sandboxPaths(sandboxDir).spec], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += String(d)));
    child.stderr.on("data", (d: Buffer) => (stderr += String(d)));
    const code = await new Promise<number | null>((resolve) => child.once("close", (c) => resolve(c)));
    return { code, stdout, stderr, fault: await readFault(runDir) };
  }

  it("the worker's own failure, even a command not found, is its exit code and no fault", async () => {
    assert.ok(BWRAP && SOCAT, "bubblewrap and socat must be installed for this test");
    const failed = await launch(BWRAP, [], "echo out; echo err >&2; exit 3");
    assert.deepEqual([failed.code, failed.stdout, failed.fault], [3, "out\n", null], failed.stderr);
    assert.match(failed.stderr, /^afk-mcp sandbox: bubblewrap;.*\nerr\n$/);
    const missing = await launch(BWRAP, [], "no-such-program-afk");
    assert.equal(missing.code, 127);
    assert.equal(missing.fault, null, "the command ran and was not found: the worker's failure");
  });

  it("bubblewrap that cannot be run, or that fails before the command (a bind whose source is gone), is recorded as the sandbox's fault with its own words", async () => {
    assert.ok(BWRAP && SOCAT, "bubblewrap and socat must be installed for this test");
    const dir = await tempDir("afk-sbx-gone-");
    const gone = await launch(join(dir, "bwrap"), [], "echo never");
    assert.equal(gone.code, 127);
    assert.equal(gone.stdout, "");
    assert.match(gone.fault ?? "", new RegExp(`^cannot run ${dir}/bwrap: spawn ${dir}/bwrap ENOENT$`));
    const refused = await launch(BWRAP, ["--bind", join(dir, "no-such-source"), "/mnt"], "echo never");
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, "", "the command never ran");
    assert.equal(
      refused.fault,
      `bwrap: Can't find source path ${dir}/no-such-source: No such file or directory (bubblewrap exited with code 1 before the worker's command started)`,
    );
    assert.match(refused.stderr, /bwrap: Can't find source path/, "bubblewrap's words are in the worker's output too");
    // What the runtime's handle makes of such an exit: the fault, unless the fleet itself ended it.
    const runDir = join(dir, "issue-2");
    await mkdir(sandboxDirOf(runDir), { recursive: true });
    await writeFile(sandboxPaths(sandboxDirOf(runDir)).fault, JSON.stringify({ why: "bubblewrap exited with code 1" }));
    const exit = { code: 1, signal: null, durationMs: 5, killReason: null };
    assert.deepEqual((await withSandboxFault(exit, runDir)).fault, { why: "the sandbox could not start: bubblewrap exited with code 1", resume: true });
    assert.equal((await withSandboxFault({ ...exit, killReason: "stopping" }, runDir)).fault, undefined, "a stop is not a fault");
  });
});

describe("a fleet whose sandbox cannot start (real bubblewrap, local forge, real git)", () => {
  it(
    "bubblewrap gone from PATH at birth, then bubblewrap failing before the command: each spends one attempt per fault with its reason on the board and in status, the command never runs, and the next attempt continues the checkpointed commit and lands",
    { timeout: 300_000 },
    async () => {
      assert.ok(BWRAP && SOCAT, "bubblewrap and socat must be installed for this test");
      assert.ok(existsSync("/var/tmp"), "this test needs /var/tmp: a HOME outside /tmp that bubblewrap cannot mount over while it is missing");
      const forge = await startTestForge();
      cleanups.push(() => forge.dispose());
      const [a, b] = (await checkpointedIssues(forge, ["Alpha", "Beta"])) as [number, number];
      // The HOME of the host: outside /tmp (inside the sandbox /tmp is a fresh tmpfs, where any mount point can be made).
      const outside = join("/var/tmp", `afk-sbx-faults-${process.pid}-${Date.now()}`);
      const home = join(outside, "home");
      await mkdir(home, { recursive: true });
      cleanups.push(() => rm(outside, { recursive: true, force: true }));
      // Room for a fault more than the test means to cause (the fleet retries at once): the equalities below say what each cost.
      const { dir, bin, tools, host, lane, explain } = await sandboxFleet(forge, "afk-sbx-faults-", home, 2, { retry: 4, circuit: { k: 10 } });
      const [owner, name] = forge.repo.split("/") as [string, string];
      const faultFile = (n: number) => sandboxPaths(sandboxDirOf(join(dir, "state", "runs", owner.toLowerCase(), name.toLowerCase(), `issue-${n}`))).fault;
      const faultsOf = async (n: number) =>
        (await lane("supervisor")).filter((r) => r.event === "worker_exited" && r.issue === n && String(r.msg).includes("fault: the sandbox could not start"));

      /**
       * Breaks the sandbox, makes the issue ready, mends the sandbox at its first fault; then
       * board (`head`: the start of the reason, which the board cuts), status (`reason`: all of
       * it) and labels while its worker waits.
       */
      async function onceBroken(n: number, breakIt: () => Promise<void>, mend: () => Promise<void>, head: RegExp, reason: RegExp): Promise<void> {
        await breakIt();
        await makeReady(forge, n);
        await waitFor(`#${n}'s sandbox could not start`, async () => existsSync(faultFile(n)) || (await faultsOf(n)).length > 0, {
          deadlineMs: 2 * 60_000,
          intervalMs: 10,
          explain,
        });
        await mend();
        const ran = `worker of #${n} runs, sandbox: bubblewrap`;
        await waitFor(`#${n}'s worker running in the sandbox`, async () => (await lane("worker")).some((r) => r.msg === ran), {
          deadlineMs: 2 * 60_000,
          intervalMs: 100,
          explain,
        });
        const faults = (await faultsOf(n)).length;
        assert.ok(faults >= 1);
        const board = await waitFor(
          `#${n}'s board naming the fault`,
          async () => {
            const text = await comments(forge, n);
            return new RegExp(`Attempt ${faults} failed: the sandbox could not start: ${head.source}`).test(text) && text;
          },
          { deadlineMs: 60_000, intervalMs: 100, explain: async () => `${await comments(forge, n)}\n${await explain()}` },
        );
        assert.match(board, /attempt \d+ of 5/);
        const status = await host.status({ repo: forge.repo, scope: "issue", issue: n });
        assert.equal(status.issue?.where, "mine");
        assert.match(status.issue?.detail ?? "", new RegExp(`the last attempt failed: the sandbox could not start: ${reason.source}`));
        // One attempt per fault: the attempt label counts exactly the faults.
        assert.deepEqual(
          (await labels(forge, n)).filter((l) => l.startsWith("afk-attempt/")),
          [`afk-attempt/${faults}`],
        );
        await writeFile(join(tools, `go-${n}`), "");
        await waitFor(`#${n} landed and closed`, () => closed(forge, n), { deadlineMs: 3 * 60_000, intervalMs: 250, explain });
      }

      const link = join(bin, "bwrap");
      await onceBroken(
        a,
        () => unlink(link),
        () => symlink(BWRAP, link),
        /bwrap \(bubblewrap\) not found on PATH: install bubblewrap/,
        /bwrap \(bubblewrap\) not found on PATH: install bubblewrap and socat \(Debian, Ubuntu: `sudo apt-get install bubblewrap socat`/,
      );
      await onceBroken(
        b,
        () => rm(outside, { recursive: true, force: true }),
        () => mkdir(home, { recursive: true }).then(() => undefined),
        /bwrap: Can't mkdir /,
        new RegExp(
          `bwrap: Can't mkdir (parents for )?${outside}/home: Read-only file system \\(bubblewrap exited with code 1 before the worker's command started\\)`,
        ),
      );
      await host.stop({ repo: forge.repo, stop_workers: true });

      const supervisor = await lane("supervisor");
      const worker = await lane("worker");
      for (const n of [a, b]) {
        // Each fault spent one attempt, and only a fault did: every retry says the sandbox could not start.
        const retries = supervisor.filter((r) => r.event === "retry" && r.issue === n);
        assert.equal(retries.length, (await faultsOf(n)).length, (await explain()).toString());
        for (const r of retries) assert.match(String(r.msg), /after: the sandbox could not start: /);
        // The command ran once, in the last attempt: never in a sandbox that could not start.
        assert.equal(worker.filter((r) => r.msg === `worker of #${n} runs, sandbox: bubblewrap`).length, 1);
        // The commit an earlier host checkpointed was continued, not thrown away, and the work landed on it.
        assert.equal((await git(forge.bareRepo, "show", `main:part-1-${n}.txt`)).stdout.trim(), `part 1 for ${n}`);
        assert.equal((await git(forge.bareRepo, "show", `main:part-2-${n}.txt`)).stdout.trim(), `part 2 for ${n}`);
        const subjects = (await git(forge.bareRepo, "log", "--format=%s", "main")).stdout;
        assert.ok(subjects.includes(`part 2 for #${n}`) && subjects.includes(`part-1-${n}.txt`), subjects);
        assert.ok(!(await labels(forge, n)).includes("ready-for-human"));
      }
      assert.ok(!supervisor.some((r) => r.event === "birth_failed" || r.event === "breaker_tripped"), await explain());
      // Both ways said why in the worker lane too: the host's check, and bubblewrap's own words.
      assert.ok(worker.some((r) => String(r.msg).startsWith("afk-mcp sandbox: the sandbox could not start: bwrap (bubblewrap) not found on PATH")));
      assert.ok(worker.some((r) => /^bwrap: Can't mkdir /.test(String(r.msg))));
    },
  );

  it(
    "a sandbox broken for every birth trips the breaker before the backlog burns its retries: births park naming the sandbox, the issues go back with their attempts, and all land once it is mended and reset",
    { timeout: 300_000 },
    async () => {
      assert.ok(BWRAP && SOCAT, "bubblewrap and socat must be installed for this test");
      const forge = await startTestForge();
      cleanups.push(() => forge.dispose());
      const issues = await checkpointedIssues(forge, ["Gamma", "Delta", "Epsilon"]);
      const home = await tempDir("afk-sbx-home-");
      const { bin, tools, host, lane, explain } = await sandboxFleet(forge, "afk-sbx-breaker-", home, 3, { retry: 1, circuit: { k: 2 } });
      for (const n of issues) await writeFile(join(tools, `go-${n}`), "");
      await unlink(join(bin, "bwrap"));
      for (const n of issues) await makeReady(forge, n);

      const swept = await waitFor("the breaker's sweep", async () => (await lane("supervisor")).find((r) => r.event === "breaker_swept"), {
        deadlineMs: 2 * 60_000,
        intervalMs: 100,
        explain,
      });
      const births = (await host.status({ repo: forge.repo, scope: "project" })).births;
      assert.equal(births?.paused, true);
      assert.match(
        births?.reason ?? "",
        /^circuit breaker tripped after \d+ fast worker deaths; the last, #\d+, never ran: the sandbox could not start: bwrap \(bubblewrap\) not found on PATH: install bubblewrap and socat .*: fix that, then project_reset$/,
      );
      const sweptIssues = [...String(swept.msg).matchAll(/#(\d+)/g)].map((m) => Number(m[1]));
      assert.ok(sweptIssues.length >= 1, String(swept.msg));
      for (const n of sweptIssues) {
        const text = await comments(forge, n);
        assert.match(
          text,
          /The fleet stopped starting workers: workers ended within seconds \d+ times in a row \(circuit breaker\), this issue's because the sandbox could not start: bwrap \(bubblewrap\) not found on PATH/,
        );
        // Back in the backlog with the attempts its faults spent given back, marked as the runner's failure.
        const now = await labels(forge, n);
        assert.ok(now.includes(READY) && now.includes("runner-error"), now.join(", "));
        assert.ok(!now.some((l) => l.startsWith("afk-attempt/")), now.join(", "));
      }
      for (const n of issues) assert.ok(!(await labels(forge, n)).includes("ready-for-human"), `#${n} was not escalated`);
      assert.ok(!(await lane("worker")).some((r) => String(r.msg).startsWith("worker of #")), "no worker command ran");

      // Mended and reset: every issue lands, each on the commit an earlier host checkpointed.
      await symlink(BWRAP, join(bin, "bwrap"));
      await host.reset({ repo: forge.repo });
      for (const n of issues) await waitFor(`#${n} landed and closed`, () => closed(forge, n), { deadlineMs: 3 * 60_000, intervalMs: 250, explain });
      // Done after all: the sweep's runner-error label goes with the landing.
      for (const n of sweptIssues)
        await waitFor(`#${n}'s runner-error label removed`, async () => !(await labels(forge, n)).includes("runner-error"), {
          deadlineMs: 60_000,
          intervalMs: 250,
          explain,
        });
      await host.stop({ repo: forge.repo, stop_workers: true });
      for (const n of issues) {
        assert.equal((await git(forge.bareRepo, "show", `main:part-1-${n}.txt`)).stdout.trim(), `part 1 for ${n}`);
        assert.equal((await git(forge.bareRepo, "show", `main:part-2-${n}.txt`)).stdout.trim(), `part 2 for ${n}`);
      }
      assert.ok(!(await lane("supervisor")).some((r) => r.event === "birth_failed"));
    },
  );
});
