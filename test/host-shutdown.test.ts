// The shutdown path with real signals to real child processes. First the failure it fixes, as
// it was: a `process.once` handler while execa runs a child (which loads signal-exit) dies of the
// signal with no drain. Then the shutdown module in the same situation drains, and a second
// signal exits at once saying what it left. Last, `afk-mcp run` itself (a session of the daemon)
// on the local forge: a SIGINT while workers run releases every claim, the lease and the lock,
// and ends the workers; the garbage of earlier hosts (a dead heartbeat, a probe) is gone too.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { api, git, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { BIN, ROOT } from "./support/paths.js";
import { waitFor } from "./support/wait.js";
import { GitRefStore } from "../server/gh/gitrefs.js";
import { formatHeartbeatMessage } from "../server/state/snapshot.js";
import { cli } from "./support/daemon-fixtures.js";

const children: ChildProcess[] = [];
const forges: TestForge[] = [];

const daemons: Record<string, string>[] = [];

after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  // `afk-mcp run` is a session of the state dir's daemon: stop each daemon the tests started.
  await Promise.all(daemons.map((env) => cli(env, "daemon", "stop", "--kill-workers")));
  await Promise.all(forges.map((f) => f.dispose()));
});

interface Watched {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function watch(child: ChildProcess): Watched {
  children.push(child);
  let text = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => text, exited };
}

/** Waits until `ready()` holds; the deadline is generous because the machine may be loaded. */
async function until(what: string, ready: () => boolean | Promise<boolean>, ms = 120_000, story: () => string = () => ""): Promise<void> {
  await waitFor(what, ready, { deadlineMs: ms, intervalMs: 100, explain: story });
}

/** A node process that runs a long execa child (signal-exit is loaded) and handles SIGINT one way or the other. */
function signalChild(mode: "once" | "watch" | "watch-hang"): Watched {
  const shutdown = join(ROOT, "dist", "server", "host", "shutdown.js");
  const script = `
    import { execa } from "execa";
    import { watchShutdown } from ${JSON.stringify(shutdown)};
    const mode = ${JSON.stringify(mode)};
    let sleeper = null;
    const drain = async () => {
      sleeper.kill();
      await new Promise((resolve) => setTimeout(resolve, 100));
      process.stdout.write("drained\\n");
    };
    if (mode === "once") {
      process.once("SIGINT", () => void drain().then(() => process.exit(0)));
    } else {
      const w = watchShutdown({ say: (line) => process.stdout.write(line + "\\n"), abandon: async () => "left one sleeper" });
      w.requested.then(async () => {
        if (mode === "watch-hang") return;
        await drain();
        w.dispose();
      });
    }
    // As in \`afk-mcp run\`: the handler is in place first, and execa loads signal-exit later.
    sleeper = execa("sleep", ["60"]);
    sleeper.catch(() => undefined);
    sleeper.on("spawn", () => process.stdout.write("ready\\n"));
  `;
  return watch(spawn(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] }));
}

describe("the shutdown path", () => {
  it("reproduces the failure: a once-handler dies of SIGINT while execa runs a child", async () => {
    const w = signalChild("once");
    await until("the child to start its execa child", () => w.output().includes("ready"));
    w.child.kill("SIGINT");
    const end = await w.exited;
    assert.equal(end.signal, "SIGINT", `signal-exit re-raised the signal (output: ${w.output()})`);
    assert.ok(!w.output().includes("drained"), "no drain happened");
  });

  it("drains on the first signal in the same situation, and exits 0", async () => {
    const w = signalChild("watch");
    await until("the child to start its execa child", () => w.output().includes("ready"));
    w.child.kill("SIGINT");
    const end = await w.exited;
    assert.deepEqual(end, { code: 0, signal: null }, w.output());
    assert.match(w.output(), /stopping \(SIGINT received\): no new claims/);
    assert.match(w.output(), /drained/);
  });

  it("exits at once on a second signal, saying what it left", async () => {
    const w = signalChild("watch-hang");
    await until("the child to start its execa child", () => w.output().includes("ready"));
    w.child.kill("SIGTERM");
    await until("the drain to begin", () => w.output().includes("stopping (SIGTERM received)"));
    w.child.kill("SIGHUP");
    const end = await w.exited;
    assert.equal(end.code, 129, w.output());
    assert.match(w.output(), /exiting at once on a second signal \(SIGHUP\): left one sleeper/);
  });
});

describe("afk-mcp run on a signal", () => {
  async function setup(worker: string): Promise<{ forge: TestForge; env: Record<string, string>; dir: string; issues: number[] }> {
    const forge = await startTestForge();
    forges.push(forge);
    assert.equal((await api(forge, "POST", repoPath(forge, "/labels"), { name: "ready-for-agent" })).status, 201);
    const issues: number[] = [];
    for (const title of ["one", "two"]) {
      const r = await api(forge, "POST", repoPath(forge, "/issues"), { title, labels: ["ready-for-agent"] });
      issues.push(r.body.number as number);
    }
    const dir = await tempDir("afk-signal-");
    await writeFile(join(dir, "worker.sh"), worker);
    const env = {
      GITHUB_API_URL: forge.apiUrl,
      GITHUB_TOKEN: forge.token,
      // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
      AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
      AFK_STATE_DIR: join(dir, "state"),
      AFK_TIME_SCALE: "0.05",
      AFK_USER_DIR: dir,
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
    };
    daemons.push(env);
    return { forge, env, dir, issues };
  }

  function run(env: Record<string, string>, dir: string): Watched {
    const args = [
      BIN,
      "run",
      "--repo",
      "afk/demo",
      "--worker",
      `sh ${join(dir, "worker.sh")}`,
      "--target",
      "2",
      "--set",
      "gate.ci=local",
      "--set",
      'gate.local_command="true"',
      "--set",
      "board.settle_seconds=0",
    ];
    return watch(spawn(process.execPath, args, { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] }));
  }

  async function pidsOf(dir: string, issues: number[]): Promise<number[]> {
    return Promise.all(issues.map(async (n) => Number((await readFile(join(dir, `${n}.pid`), "utf8")).trim())));
  }

  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  /** `afk-mcp run` on the setup, once both workers run (their pids). */
  async function runUntilWorkers(s: { env: Record<string, string>; dir: string; issues: number[] }): Promise<{ w: Watched; pids: number[] }> {
    const w = run(s.env, s.dir);
    const started = async (): Promise<boolean> => {
      if (w.child.exitCode !== null) assert.fail(`afk-mcp run exited early:\n${w.output()}`);
      return (await pidsOf(s.dir, s.issues).catch(() => [])).length === 2;
    };
    await until("both workers to start", started, 120_000, w.output);
    return { w, pids: await pidsOf(s.dir, s.issues) };
  }

  async function boardsOf(forge: TestForge, n: number): Promise<{ body: string }[]> {
    const comments = (await api(forge, "GET", repoPath(forge, `/issues/${n}/comments`))).body as { body: string }[];
    return comments.filter((c) => c.body.startsWith("<!-- afk:board"));
  }

  async function refs(forge: TestForge): Promise<string[]> {
    const out = (await git(forge.bareRepo, "for-each-ref", "--format=%(refname)", "refs/afk/")).stdout;
    return out.split("\n").filter(Boolean);
  }

  it("a SIGINT while workers run ends them, releases every claim, the lease and the lock, and exits 0", { timeout: 240_000 }, async () => {
    // Each worker commits, then keeps working (a long sleep) until the fleet ends it.
    const s = await setup(["cat > /dev/null", 'echo $$ > "$AFK_USER_DIR/$AFK_ISSUE.pid"', "sleep 600 &", "wait", ""].join("\n"));
    // Garbage of earlier hosts: a dead instance's heartbeat and a probe of a host killed mid-probe.
    const refStore = new GitRefStore({ controlDir: join(s.dir, "control.git"), remoteUrl: s.forge.gitUrl, token: s.forge.token });
    await refStore.create(
      "refs/afk/heartbeat/deadhost",
      formatHeartbeatMessage({ instance: "deadhost", host: "gone", at: new Date(Date.now() - 3 * 4_500_000) }),
    );
    await refStore.create("refs/afk/probe/killedhost", "afk-probe\ninstance=killedhost\n");
    const { w, pids } = await runUntilWorkers(s);
    assert.equal((await refs(s.forge)).filter((r) => r.startsWith("refs/afk/claim/")).length, 2);
    await until("both boards", async () => (await Promise.all(s.issues.map((n) => boardsOf(s.forge, n)))).every((b) => b.length === 1));
    w.child.kill("SIGINT");
    const end = await w.exited;
    assert.deepEqual(end, { code: 0, signal: null }, w.output());
    assert.match(w.output(), /stopped: released 2 claim\(s\) without a PR/);
    assert.deepEqual(await refs(s.forge), [], "no claim, heartbeat, probe or lock ref is left: the fleet swept the earlier hosts' garbage too");
    // Ended by the daemon; a process just killed may take a moment to be reaped by init.
    await until("the workers to be gone", () => pids.every((pid) => !alive(pid)), 30_000, w.output);
    for (const n of s.issues) {
      const boards = await boardsOf(s.forge, n);
      assert.equal(boards.length, 1, `#${n} has one board`);
      assert.match(boards[0]!.body, /Released: back in the backlog/, boards[0]!.body);
    }
  });

  it("a second signal during the drain exits at once; the daemon finishes the drain: workers ended, no claim left", { timeout: 240_000 }, async () => {
    // A worker that ignores SIGTERM: the drain waits out its kill grace, long enough for a second signal.
    const s = await setup(["trap '' TERM", "cat > /dev/null", 'echo $$ > "$AFK_USER_DIR/$AFK_ISSUE.pid"', "while :; do sleep 1; done", ""].join("\n"));
    const { w, pids } = await runUntilWorkers(s);
    w.child.kill("SIGTERM");
    await until("the drain to begin", () => w.output().includes("stopping (SIGTERM received)"));
    w.child.kill("SIGINT");
    const end = await w.exited;
    assert.equal(end.code, 130, w.output());
    const line =
      w
        .output()
        .split("\n")
        .find((l) => l.includes("exiting at once")) ?? "";
    // The fleet runs in the daemon: the session exits, the daemon goes on draining.
    assert.match(line, /the daemon \(pid \d+\) finishes the drain/);
    await until("the workers to be gone", () => pids.every((pid) => !alive(pid)), 60_000);
    await until("every claim released", async () => (await refs(s.forge)).filter((r) => r.startsWith("refs/afk/claim/")).length === 0, 60_000);
    assert.equal((await refs(s.forge)).filter((r) => r.includes("/lock/")).length, 0, "no landing lock is left");
  });
});
