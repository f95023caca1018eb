// What a sandboxed worker can run (server/runtimes/sandbox/visible.ts, shown.ts, preflight.ts):
// the path-visibility rule as table rows over a plan's own mounts and a host filesystem given as
// a table; the start's refusal (dry run too) of a worker program or an engine binary the sandbox
// would hide, and a program under the home shown instead, through the host against the local
// forge; and the circuit breaker quoting a sandboxed worker's own stderr, never the sandbox's
// banner (real bubblewrap).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DEFAULT_CONFIG } from "../schemas/config.js";
import { programOf } from "../server/agent/shell.js";
import { stderrFirst, type SaidLine } from "../server/agent/runtime-failures.js";
import { BirthGuard } from "../server/fleet/birth-guard.js";
import { sandboxAvailability } from "../server/runtimes/sandbox/available.js";
import { bwrapArgs, withShown } from "../server/runtimes/sandbox/plan.js";
import { programInside } from "../server/runtimes/sandbox/preflight.js";
import { mountsOf, resolveInside, type FileKind, type HostFs } from "../server/runtimes/sandbox/visible.js";
import { shellQuote } from "../server/runtimes/local/spawn.js";
import { startTestForge, tempDir } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, issueWorld } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";

const cleanups = cleanupsAfterFile();

/** A host filesystem as a table: a path is a file, a directory (any prefix of another path), or a link (its text). */
function tableFs(entries: Record<string, string | "file">): HostFs {
  const kindOf = (path: string): FileKind | null => {
    const entry = entries[path];
    if (entry === "file") return "file";
    if (entry !== undefined) return "link";
    return Object.keys(entries).some((p) => p.startsWith(`${path}/`)) || path === "/" ? "dir" : null;
  };
  const follow = (path: string, hops = 0): Exclude<FileKind, "link"> | null => {
    // Follows links in every component, as the host would.
    const parts = path.split("/").filter(Boolean);
    let cur = "";
    for (let i = 0; i < parts.length; i++) {
      cur = `${cur}/${parts[i]}`;
      const kind = kindOf(cur);
      if (kind === null) return null;
      if (kind === "link") {
        if (hops > 40) return null;
        const target = entries[cur]!;
        const base = target.startsWith("/") ? target : `${cur.slice(0, cur.lastIndexOf("/"))}/${target}`;
        return follow([base, ...parts.slice(i + 1)].join("/").replace(/\/+/g, "/"), hops + 1);
      }
    }
    return kindOf(cur || "/") as Exclude<FileKind, "link"> | null;
  };
  return { lstat: kindOf, stat: (p) => follow(p), readlink: (p) => entries[p]! };
}

describe("the sandbox's path-visibility rule (pure: the plan's mounts, the host as a table)", () => {
  const home = "/home/u";
  const state = "/var/lib/afk";
  const worktree = `${state}/worktrees/o/r/issue-1`;
  const plan = bwrapArgs({
    worktree,
    runDir: `${state}/runs/o/r/issue-1`,
    sandboxDir: `${state}/runs/o/r/issue-1.sandbox`,
    commonDir: `${state}/work/o/r.git`,
    deny: [home, state, `${state}/worktrees/o/r`, `${state}/work/o/r.git`],
    allowRead: ["/opt/afk-mcp", "/tmp/tools"],
    allowWrite: [],
  });
  const fs = tableFs({
    "/usr/bin/git": "file",
    "/usr/local/bin/tool": "/tmp/build/tool",
    "/tmp/build/tool": "file",
    "/tmp/x/worker.sh": "file",
    "/tmp/tools/w.sh": "file",
    "/tmp/link": "/usr/bin/git",
    [`${home}/secret/tool`]: "file",
    [`${home}/worker.sh`]: "file",
    [`${home}/.local/bin/claude`]: `${home}/.local/share/claude/versions/1/claude`,
    [`${home}/.local/share/claude/versions/1/claude`]: "file",
    "/opt/a/bin/t": "../lib/t",
    "/opt/a/lib/t": "file",
    "/opt/a/bin/loop": "/opt/a/bin/loop",
    [`${worktree}/run.sh`]: "file",
    [`${state}/worktrees/o/r/issue-2/run.sh`]: "file",
    "/dev/thing": "file",
  });
  const shownClaude = [`${home}/.local/bin`, `${home}/.local/share/claude/versions/1`];
  const rows: Array<[string, string, string[], string]> = [
    // [what, path, shown again, expected: "ok <inside path>" or "hidden <at> by <mount>" or "missing <at>"]
    ["a system program", "/usr/bin/git", [], "ok /usr/bin/git"],
    ["a program under /tmp", "/tmp/x/worker.sh", [], "hidden /tmp/x by /tmp"],
    ["under /tmp, in sandbox.allow_read", "/tmp/tools/w.sh", [], "ok /tmp/tools/w.sh"],
    ["a link in /tmp to a system program", "/tmp/link", [], "hidden /tmp/link by /tmp"],
    ["a system link into /tmp", "/usr/local/bin/tool", [], "hidden /tmp/build by /tmp"],
    ["under the home, not shown", `${home}/secret/tool`, [], `hidden ${home}/secret by ${home}`],
    ["under the home, its directory shown", `${home}/secret/tool`, [`${home}/secret`], `ok ${home}/secret/tool`],
    ["right in the home", `${home}/worker.sh`, [], `hidden ${home}/worker.sh by ${home}`],
    ["a PATH link whose target's directory is shown", `${home}/.local/bin/claude`, shownClaude, `ok ${home}/.local/share/claude/versions/1/claude`],
    ["a PATH link whose target is hidden", `${home}/.local/bin/claude`, [`${home}/.local/bin`], `hidden ${home}/.local/share by ${home}`],
    ["a relative link", "/opt/a/bin/t", [], "ok /opt/a/lib/t"],
    ["a link to itself", "/opt/a/bin/loop", [], "missing /opt/a/bin/loop"],
    ["in the worker's own worktree", `${worktree}/run.sh`, [], `ok ${worktree}/run.sh`],
    ["in another issue's worktree", `${state}/worktrees/o/r/issue-2/run.sh`, [], `hidden ${state}/worktrees/o/r/issue-2 by ${state}`],
    ["under /dev, made afresh", "/dev/thing", [], "hidden /dev/thing by /dev"],
    ["nothing there on the host", "/usr/bin/nosuch", [], "missing /usr/bin/nosuch"],
    ["a directory is no program", "/usr/bin", [], "missing /usr/bin"],
  ];
  for (const [what, path, shown, expected] of rows) {
    it(`${what}: ${path} → ${expected}`, () => {
      const found = resolveInside(path, mountsOf(withShown(plan, shown)), fs);
      assert.equal(found.ok ? `ok ${found.path}` : found.by === null ? `missing ${found.at}` : `hidden ${found.at} by ${found.by}`, expected);
    });
  }

  it("a bare name is looked up on the PATH inside: a hidden entry is passed over", () => {
    const mounts = mountsOf(plan);
    assert.equal(programInside("git", "/tmp/bin:relative:/usr/bin", mounts, tableFs({ "/tmp/bin/git": "file", "/usr/bin/git": "file" })), "/usr/bin/git");
    assert.equal(programInside("git", "/tmp/bin", mounts, tableFs({ "/tmp/bin/git": "file" })), null);
    assert.throws(() => mountsOf(["--overlay", "/a", "/b"]), /unknown bubblewrap option --overlay/);
  });

  it("the program of a command line: the first word after assignments, plain or single-quoted; null for what a shell expands", () => {
    const rows: Array<[string, string | null]> = [
      ["claude -p --verbose", "claude"],
      ["ANTHROPIC_MODEL='x y' 'claude' '-p'", "claude"],
      ["'/opt/my tools/agent' {brief}", "/opt/my tools/agent"],
      ["/tmp/w.sh {brief}", "/tmp/w.sh"],
      ["~/bin/agent", "~/bin/agent"],
      ["exit 3", "exit"],
      ["cd sub && make", "cd"],
      ['"quoted" x', null],
      ["$HOME/bin/agent", null],
      ["a|b", null],
      ["FOO=bar", null],
      ["", null],
    ];
    for (const [command, program] of rows) assert.equal(programOf(command), program, command);
  });
});

describe("the breaker quotes the worker's own last lines, stderr first", () => {
  const said = (...lines: Array<[SaidLine["stream"], string]>): SaidLine[] => lines.map(([stream, line]) => ({ stream, line }));
  it("stderr's newest lines first, then stdout's to fill up", () => {
    const lines = said(["stdout", "o1"], ["stderr", "e1"], ["stdout", "o2"], ["stderr", "e2"], ["stdout", "o3"]);
    assert.deepEqual(stderrFirst(lines, 3), ["e1", "e2", "o3"]);
    assert.deepEqual(stderrFirst(lines, 1), ["e2"]);
    assert.deepEqual(stderrFirst(lines, 9), ["e1", "e2", "o1", "o2", "o3"]);
    assert.deepEqual(stderrFirst(said(["stdout", "only"]), 3), ["only"]);
  });

  it("the trip's reason and its log quote the worker's error, not what it printed before", () => {
    const logged: Array<{ msg: string; data: unknown }> = [];
    const guard = new BirthGuard(
      { ...DEFAULT_CONFIG.circuit, k: 1 },
      1,
      () => new Date("2026-12-07T19:00:00Z"),
      (_level, _event, msg, _issue, data) => logged.push({ msg, data }),
      (lines) => lines.map((l) => l.replace("secret", "[redacted]")),
    );
    const lines = said(["stdout", "starting up"], ["stdout", "reading the brief"], ["stdout", "one more"], ["stderr", "sh: 1: agent-cli: not found (secret)"]);
    assert.equal(guard.recordDeath(7, 1, 300, false, false, lines), true);
    assert.equal(
      guard.paused(false)?.reason,
      "circuit breaker tripped after 1 fast worker deaths; the last, #7, printed: sh: 1: agent-cli: not found ([redacted]) ⏎ reading the brief ⏎ one more: fix the worker command, then project_reset",
    );
    assert.deepEqual((logged[0]!.data as { last_output: Record<string, string[]> }).last_output["7"]![0], "sh: 1: agent-cli: not found ([redacted])");
  });
});

describe("the start looks for the workers' programs inside the sandbox (local forge)", () => {
  it("a worker program or an engine binary the sandbox hides refuses the start, dry run too, naming the path, the runtime and the fixes; one under the home is shown", async () => {
    const available = await sandboxAvailability();
    assert.ok(available.ok, `the sandbox must run on this machine for this test (.ci/run installs bubblewrap and socat): ${available.detail}`);
    const forge = await startTestForge();
    cleanups.push(() => forge.dispose());
    const dir = await tempDir("afk-sbx-programs-");
    const home = join(dir, "home");
    const tools = join(dir, "tools");
    await mkdir(join(home, "agent"), { recursive: true });
    await mkdir(tools);
    const script = "#!/bin/sh\necho 'fake-agent 1.2.3'\n";
    for (const path of [join(tools, "worker.sh"), join(home, "agent", "worker.sh"), join(home, "worker.sh"), join(tools, "claude")]) {
      await writeFile(path, script);
      await chmod(path, 0o755);
    }
    const host = fleetHost(forge, dir, cleanups, { AFK_RUNTIME: "sandbox", HOME: home });
    const start = (input: Record<string, unknown>, steps: string[] = []) => host.start({ repo: forge.repo, target: 1, ...input }, (s) => steps.push(s));
    const inTmp = join(tools, "worker.sh");
    const refusal = (what: string, path: string) =>
      new RegExp(
        `project_start refused: ${what} ${path} is not there inside the sandbox \\(runtime sandbox\\): ${tools} is under /tmp, and each worker gets a private, empty /tmp\\. ` +
          `Fixes: sandbox\\.allow_read: \\["${tools}"\\] \\(shows that directory read-only\\), or install it in a directory on the workers' PATH outside /tmp .*, or "runtime": "local" in the config \\(or AFK_RUNTIME=local\\)`,
      );
    for (const dry_run of [true, false])
      await assert.rejects(start({ worker_command: `${shellQuote(inTmp)} {brief}`, dry_run }), refusal("the worker command's program", inTmp));
    await assert.rejects(
      start({ engine: "claude", dry_run: true, config: { engines: { claude: { binary: join(tools, "claude") } } } }),
      refusal("engine claude's binary", join(tools, "claude")),
    );
    await assert.rejects(
      start({ worker_command: join(home, "worker.sh"), dry_run: true }),
      new RegExp(
        `project_start refused: the worker command's program ${home}/worker.sh is not there inside the sandbox \\(runtime sandbox\\): ${home}/worker.sh is in the home \\(${home}\\)`,
      ),
    );
    await assert.rejects(
      start({ worker_command: "no-such-agent-cli {brief}", dry_run: true }),
      /project_start refused: worker_command: its program "no-such-agent-cli" is not found by the workers' shell/,
    );
    const unrunnable = join(dir, "not-executable.sh");
    await writeFile(unrunnable, script);
    await assert.rejects(
      start({ worker_command: unrunnable, dry_run: true }),
      // bash's `command -v` passes over a file it cannot run; dash's names it.
      /its program ".*\/not-executable\.sh" (is not found by the workers' shell|is .*\/not-executable\.sh, which the user the fleet runs as cannot execute)/,
    );
    // Shown read-only instead: the directory asked for, and a program's own directory under the home.
    const steps: string[] = [];
    const fine = await start({ worker_command: inTmp, dry_run: true, config: { sandbox: { allow_read: [tools] } } }, steps);
    assert.match(fine.message, /^dry run/);
    const shown: string[] = [];
    await start({ worker_command: join(home, "agent", "worker.sh"), dry_run: true }, shown);
    assert.ok(
      shown.some((s) => s.startsWith("runtime sandbox (") && s.endsWith(`; shown read-only for the program it runs: ${join(home, "agent")}`)),
      shown.join("\n"),
    );
    // A relative path is the worktree's: nothing to look for at the start.
    assert.match((await start({ worker_command: "./scripts/agent.sh {brief}", dry_run: true })).message, /^dry run/);
    // Under runtime local nothing is hidden.
    const local = fleetHost(forge, dir, cleanups, { AFK_RUNTIME: "local", HOME: home });
    assert.match((await local.start({ repo: forge.repo, target: 1, worker_command: inTmp, dry_run: true })).message, /^dry run/);
  });

  it(
    "a sandboxed worker that dies at once: the breaker's reason quotes its own stderr, never the sandbox's banner (real bubblewrap)",
    { timeout: 300_000 },
    async () => {
      const { forge, dir, issues } = await issueWorld(cleanups, ["Alpha"], "afk-sbx-dies-");
      // Its program lies under the home, off PATH: the sandbox shows its directory, so it runs and says why it stops.
      const home = join(dir, "home");
      await mkdir(join(home, "agent"), { recursive: true });
      const program = join(home, "agent", "die.sh");
      await writeFile(program, '#!/bin/sh\necho "starting"\necho "agent-cli: cannot read its settings" >&2\nexit 3\n');
      await chmod(program, 0o755);
      const host = fleetHost(forge, dir, cleanups, { AFK_RUNTIME: "sandbox", HOME: home });
      await host.start({
        repo: forge.repo,
        worker_command: shellQuote(program),
        target: 1,
        config: { retry: 0, circuit: { k: 1 }, pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 } },
      });
      const reason = await waitFor(
        "the breaker's trip",
        async () => {
          const births = (await host.status({ repo: forge.repo, scope: "project" })).births;
          return births?.paused === true && births.reason;
        },
        { deadlineMs: 2 * 60_000, intervalMs: 100 },
      );
      assert.equal(
        reason,
        `circuit breaker tripped after 1 fast worker deaths; the last, #${issues[0]}, printed: agent-cli: cannot read its settings ⏎ starting: fix the worker command, then project_reset`,
      );
      const lines = ((await host.logs({ repo: forge.repo, lane: "worker", tail_lines: 100 })).records as Array<{ msg?: unknown }>).map((r) => String(r.msg));
      assert.ok(
        lines.some((l) => l.startsWith("afk-mcp sandbox: bubblewrap;")),
        "the banner is still in the worker lane",
      );
    },
  );
});
