// Worker processes, with real scripted workers started through startWorker — the same code path
// as a real agent command: brief on a closed stdin, a minimal env, `{brief}`, hostile issue text
// that is never executed, output that never reaches our stdout, and a kill that ends the tree.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { access, chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { renderBrief, writeBrief, type BriefInput } from "../server/agent/brief.js";
import { workerEnv } from "../server/agent/env.js";
import { processGroupMembers, readProcTable } from "../server/runtimes/local/proc.js";
import { existsSync } from "node:fs";
import { liveOrphan, pidFilePath, processStartTimeSync, writePidFileSync } from "../server/runtimes/local/pid-files.js";
import {
  expandCommand,
  resolveShell,
  shellQuote,
  startWorker,
  WorkerSpawnError,
  type OutputStream,
  type WorkerHandle,
} from "../server/runtimes/local/spawn.js";

let root: string;

before(async () => {
  root = await mkdtemp(join(tmpdir(), "afk-spawn-"));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

async function freshDir(name: string): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  return dir;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: still running after ${ms} ms`)), ms);
    }),
  ]);
}

function briefInput(dir: string, body: string, title = "A title"): BriefInput {
  return {
    repo: "acme/widgets",
    issue: { number: 7, title, body, url: "https://github.com/acme/widgets/issues/7", labels: ["ready-for-agent"] },
    branch: "afk/7-a-title",
    base: "main",
    worktree: dir,
    attempt: 1,
    maxAttempts: 3,
    verdictPath: join(dir, "verdict.json"),
  };
}

function envFor(dir: string, briefPath: string, base: Record<string, string | undefined> = process.env, passthrough: string[] = []): Record<string, string> {
  return workerEnv({
    base,
    passthrough,
    deny: ["AFK_USER_DENIED"],
    facts: {
      AFK_ISSUE: 7,
      AFK_BRIEF: briefPath,
      AFK_BRANCH: "afk/7-a-title",
      AFK_BASE: "main",
      AFK_WORKTREE: dir,
      AFK_REPO: "acme/widgets",
      AFK_ATTEMPT: 1,
      AFK_VERDICT_FILE: join(dir, "verdict.json"),
    },
  });
}

/** Live (non-zombie) state of a pid: true while it runs. Our PID 1 may not reap zombies. */
async function alive(pid: number): Promise<boolean> {
  const table = await readProcTable();
  if (table === null) {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  const p = table.find((e) => e.pid === pid);
  return p !== undefined && p.state !== "Z" && p.state !== "X";
}

function firstLine(handle: { onLine: (cb: (s: OutputStream, l: string) => void) => void }, want: string): Promise<void> {
  return new Promise((resolve) => handle.onLine((_s, l) => l === want && resolve()));
}

/** Starts a worker and exposes a promise for a given output line. */
async function start(
  opts: Parameters<typeof startWorker>[0] & { waitFor?: string },
): Promise<{ handle: WorkerHandle; lines: Array<[OutputStream, string]>; seen: Promise<void> }> {
  const lines: Array<[OutputStream, string]> = [];
  const listeners: Array<(s: OutputStream, l: string) => void> = [];
  const seen = opts.waitFor === undefined ? Promise.resolve() : firstLine({ onLine: (cb) => listeners.push(cb) }, opts.waitFor);
  const handle = await startWorker({
    ...opts,
    onLine: (stream, line) => {
      lines.push([stream, line]);
      for (const l of listeners) l(stream, line);
    },
  });
  return { handle, lines, seen };
}

describe("startWorker: stdin, env and the brief", () => {
  it("hands the brief on stdin and closes it; env is minimal; AFK_* facts present", async () => {
    const dir = await freshDir("stdin-env");
    const briefPath = await writeBrief(join(dir, "briefs"), briefInput(dir, "Make it work."));
    const base = {
      ...process.env,
      GITHUB_TOKEN: "ghp_notforworkers000000000000",
      GH_TOKEN: "gho_notforworkers000000000000",
      AFK_USER_OK: "yes",
      AFK_USER_DENIED: "no",
      SOME_RANDOM_VAR: "x",
    };
    const env = envFor(dir, briefPath, base, ["AFK_USER_*"]);
    // `cat` finishing at all proves stdin reached EOF: an open stdin would hang it (and the test).
    const { handle, lines } = await start({
      command: "cat > stdin.txt; env > env.txt; echo finished",
      cwd: dir,
      env,
      briefPath,
    });
    const exit = await withTimeout(handle.exited, 10_000, "cat on stdin");
    assert.equal(exit.code, 0);
    assert.equal(exit.killReason, null);
    assert.deepEqual(lines, [["stdout", "finished"]]);
    assert.equal(await readFile(join(dir, "stdin.txt"), "utf8"), await readFile(briefPath, "utf8"));
    const seenEnv = Object.fromEntries(
      (await readFile(join(dir, "env.txt"), "utf8"))
        .split("\n")
        .filter((l) => l.includes("="))
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    for (const name of ["GITHUB_TOKEN", "GH_TOKEN", "AFK_USER_DENIED", "SOME_RANDOM_VAR"]) assert.equal(name in seenEnv, false, `${name} leaked`);
    assert.equal(seenEnv.AFK_USER_OK, "yes");
    assert.equal(seenEnv.AFK_ISSUE, "7");
    assert.equal(seenEnv.AFK_BRIEF, briefPath);
    assert.equal(seenEnv.AFK_BRANCH, "afk/7-a-title");
    assert.equal(seenEnv.AFK_BASE, "main");
    assert.equal(seenEnv.AFK_WORKTREE, dir);
    assert.equal(seenEnv.AFK_REPO, "acme/widgets");
    assert.equal(seenEnv.AFK_ATTEMPT, "1");
    assert.equal(seenEnv.AFK_VERDICT_FILE, join(dir, "verdict.json"));
    assert.equal(seenEnv.GIT_TERMINAL_PROMPT, "0");
    assert.equal(seenEnv.TERM, "dumb");
  });

  it("GITHUB_TOKEN reaches the worker only when passed through by name", async () => {
    const dir = await freshDir("token-named");
    const briefPath = await writeBrief(dir, briefInput(dir, "x"));
    const env = envFor(dir, briefPath, { PATH: process.env.PATH, GITHUB_TOKEN: "ghp_named" }, ["GITHUB_TOKEN"]);
    const { handle, lines } = await start({ command: 'echo "token=$GITHUB_TOKEN"', cwd: dir, env, briefPath });
    await withTimeout(handle.exited, 10_000, "echo");
    assert.deepEqual(lines, [["stdout", "token=ghp_named"]]);
  });

  it("{brief} expands to the quoted path, even with spaces, quotes and $() in it", async () => {
    const dir = await freshDir(`it's a "dir" $(touch PWNED) \`touch PWNED2\``);
    const briefPath = await writeBrief(join(dir, "my briefs"), briefInput(dir, "the body"));
    const { handle } = await start({
      command: 'cat {brief} > one.txt && cat "{brief}" > two.txt && cat \'{brief}\' > three.txt && cat "$AFK_BRIEF" > four.txt',
      cwd: dir,
      env: envFor(dir, briefPath),
      briefPath,
    });
    const exit = await withTimeout(handle.exited, 10_000, "cat {brief}");
    assert.equal(exit.code, 0);
    const want = await readFile(briefPath, "utf8");
    for (const name of ["one.txt", "two.txt", "three.txt", "four.txt"]) assert.equal(await readFile(join(dir, name), "utf8"), want, name);
    assert.deepEqual(
      (await readdir(dir)).filter((n) => n.startsWith("PWNED")),
      [],
    );
  });

  it("hostile issue text is never executed, through any runtime template shape", async () => {
    const dir = await freshDir("hostile");
    const marker = join(dir, "pwned");
    const hostile = [
      `$(touch ${marker}-1)`,
      `\`touch ${marker}-2\``,
      `; touch ${marker}-3;`,
      `" ; touch ${marker}-4 ; "`,
      `' ; touch ${marker}-5 ; '`,
      `\n$(touch ${marker}-6)\n`,
      "naïve 🚀 \u202Eevil ∙ ünïcödé",
      "x".repeat(100_000),
    ].join("\n");
    // The same corpus as comments (an author's login and a review's path too): data like the body.
    const base = briefInput(dir, hostile, `$(touch ${marker}-title) \`touch ${marker}-t2\`; touch ${marker}-t3`);
    const commentCorpus = hostile.split("\n").filter((line) => line.length < 1_000);
    const input: BriefInput = {
      ...base,
      comments: commentCorpus.map((body, i) => ({ author: `$(touch ${marker}-author${i})`, createdAt: `2026-12-01T10:0${i}:00Z`, body })),
      lastFailure: {
        kind: "review",
        summary: `$(touch ${marker}-summary)`,
        excerpt: "",
        reviewComments: commentCorpus.map((body, i) => ({
          author: "alice",
          createdAt: `2026-12-01T11:0${i}:00Z`,
          body,
          path: `$(touch ${marker}-path${i}).ts`,
          line: i + 1,
        })),
      },
    };
    const briefPath = await writeBrief(join(dir, "briefs"), input);
    const brief = renderBrief(input);
    const { handle } = await start({
      // The shapes of the worker command templates (docs/runtimes.md, "The worker command"): "$(cat "$AFK_BRIEF")", < "$AFK_BRIEF", {brief}, stdin.
      command: ['printf "%s" "$(cat "$AFK_BRIEF")" > a.txt', 'cat < "$AFK_BRIEF" > b.txt', "cat {brief} > c.txt", "cat > d.txt"].join("; "),
      cwd: dir,
      env: envFor(dir, briefPath),
      briefPath,
    });
    const exit = await withTimeout(handle.exited, 10_000, "hostile brief");
    assert.equal(exit.code, 0);
    assert.equal(await readFile(join(dir, "a.txt"), "utf8"), brief.replace(/\n+$/, ""));
    for (const name of ["b.txt", "c.txt", "d.txt"]) assert.equal(await readFile(join(dir, name), "utf8"), brief, name);
    assert.ok(brief.includes(`$(touch ${marker}-1)`), "the hostile text is in the brief, verbatim");
    for (const line of commentCorpus.filter((l) => l.trim() !== ""))
      assert.ok(brief.split(line).length - 1 >= 3, `in the body and both comment sections: ${line}`);
    const created = (await readdir(dir)).filter((n) => n.startsWith("pwned"));
    assert.deepEqual(created, [], "nothing from the issue ran");
  });

  it("stdin is not a socket, so bash does not source ~/.bashrc as if run by sshd", async () => {
    const dir = await freshDir("no-bashrc");
    const home = join(dir, "home");
    await mkdir(home);
    await writeFile(join(home, ".bashrc"), "echo BASHRC-RAN\nexport SNEAKY_TOKEN=leaked\n");
    const briefPath = join(dir, "brief.md");
    await writeFile(briefPath, "from the file\n");
    const { handle, lines } = await start({
      command: 'cat; echo "token=${SNEAKY_TOKEN:-none}"',
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home },
      briefPath,
      shell: (await exists("/bin/bash")) ? "/bin/bash" : "/bin/sh",
    });
    await withTimeout(handle.exited, 10_000, "cat");
    assert.deepEqual(lines, [
      ["stdout", "from the file"],
      ["stdout", "token=none"],
    ]);
  });

  it("refuses a brief that is missing or not a regular file", async () => {
    const dir = await freshDir("bad-brief");
    await assert.rejects(startWorker({ command: "true", cwd: dir, env: {}, briefPath: join(dir, "none.md") }), /cannot open the brief/);
    await assert.rejects(startWorker({ command: "true", cwd: dir, env: {}, briefPath: dir }), /not a regular file/);
  });
});

describe("startWorker: output", () => {
  for (const files of [false, true]) {
    it(`delivers stdout and stderr line by line, splits long lines, keeps a bounded tail (${files ? "through files, which outlive us" : "through pipes"})`, async () => {
      const dir = await freshDir(files ? "lines-files" : "lines");
      const briefPath = join(dir, "b.md");
      await writeFile(briefPath, "");
      const { handle, lines } = await start({
        command:
          "echo one; echo two >&2; printf 'crlf\\r\\n'; head -c 250 /dev/zero | tr '\\0' x; echo; for i in 1 2 3 4 5; do echo n$i; done; printf 'no newline'",
        cwd: dir,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
        briefPath,
        maxLineChars: 100,
        tailLines: 3,
        ...(files ? { outputDir: dir } : {}),
      });
      const exit = await withTimeout(handle.exited, 10_000, "lines");
      assert.equal(exit.code, 0);
      const out = lines.filter(([s]) => s === "stdout").map(([, l]) => l);
      assert.deepEqual(out, ["one", "crlf", "x".repeat(100), "x".repeat(100), "x".repeat(50), "n1", "n2", "n3", "n4", "n5", "no newline"]);
      assert.deepEqual(
        lines.filter(([s]) => s === "stderr"),
        [["stderr", "two"]],
      );
      // The tail is the last lines in order of arrival (stdout and stderr interleave freely).
      assert.deepEqual(
        handle.tail().map((t) => [t.stream, t.line]),
        lines.slice(-3),
      );
      assert.ok(handle.lastOutputAt() >= handle.startedAt);
      if (files) {
        // The worker wrote files, owner-only, that a daemon restarted after a crash follows again.
        assert.equal(await readFile(join(dir, "stderr.log"), "utf8"), "two\n");
        assert.match(await readFile(join(dir, "stdout.log"), "utf8"), /^one\ncrlf\r\nx{250}\nn1\n/);
        assert.equal((await stat(join(dir, "stdout.log"))).mode & 0o777, 0o600);
      }
    });
  }

  it("caps the output files: a worker writing far past the cap loses no line, the files are cut with a marker", async () => {
    const dir = await freshDir("output-cap");
    const briefPath = join(dir, "b.md");
    await writeFile(briefPath, "");
    const count = 40_000;
    const cap = 65_536;
    const cuts: Array<[OutputStream, number]> = [];
    // About 2 MB on stdout in one write per line, as fast as the shell goes, in batches of 8,000
    // lines (past the cap), each followed by a wait for the file to be cut (so the cuts happen
    // while it writes, however fast it is), and a little on stderr.
    const { handle, lines } = await start({
      command: `i=0; while [ $i -lt ${count} ]; do echo "line $i of the worker's long and chatty output"; i=$((i+1)); if [ $((i % 8000)) -eq 0 ]; then while [ $(wc -c < stdout.log) -ge ${cap} ]; do sleep 0.05; done; fi; done; echo done >&2`,
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      briefPath,
      outputDir: dir,
      outputMaxBytes: cap,
      onOutputTruncated: (stream, dropped) => cuts.push([stream, dropped]),
    });
    const exit = await withTimeout(handle.exited, 300_000, "chatty worker");
    assert.equal(exit.code, 0);
    const out = lines.filter(([s]) => s === "stdout").map(([, l]) => l);
    const markers = out.filter((l) => l.startsWith("[afk-mcp] stdout.log passed its cap of 65536 bytes"));
    const worker = out.filter((l) => !l.startsWith("[afk-mcp]"));
    // Every line once, whole and in order: nothing was written into the cut.
    assert.equal(worker.length, count);
    worker.forEach((line, i) => assert.equal(line, `line ${i} of the worker's long and chatty output`));
    assert.deepEqual(
      lines.filter(([s]) => s === "stderr"),
      [["stderr", "done"]],
    );
    // Cut about once per cap (a poll may read well past it first), each reported, each marked.
    const written = worker.reduce((sum, l) => sum + l.length + 1, 0);
    assert.ok(cuts.length >= 2 && cuts.length <= Math.ceil(written / cap), `cuts: ${cuts.length}`);
    assert.ok(cuts.every(([s, dropped]) => s === "stdout" && dropped >= cap));
    assert.equal(markers.length, cuts.length);
    // The file holds what came after the last cut, marker first; the cuts plus what is left are every byte.
    const file = await readFile(join(dir, "stdout.log"), "utf8");
    assert.ok(file.startsWith("[afk-mcp] stdout.log passed its cap"), file.slice(0, 80));
    const markerBytes = markers.reduce((sum, l) => sum + l.length + 1, 0);
    assert.equal(cuts.reduce((sum, [, d]) => sum + d, 0) + Buffer.byteLength(file), written + markerBytes);
    assert.equal((await stat(join(dir, "stdout.log"))).mode & 0o777, 0o600);
  });

  it("nothing reaches the host's stdout (checked in a separate process)", async () => {
    const dir = await freshDir("stdout-isolation");
    const spawnUrl = pathToFileURL(resolve("server/runtimes/local/spawn.ts")).href;
    const harness = join(dir, "harness.mts");
    await writeFile(join(dir, "brief.md"), "brief-on-stdin\n");
    await writeFile(
      harness,
      `import { startWorker } from ${JSON.stringify(spawnUrl)};
const lines = [];
const h = await startWorker({
  command: "echo to-stdout; echo to-stderr >&2; cat; ls /nonexistent-afk-path",
  cwd: ${JSON.stringify(dir)},
  env: { PATH: process.env.PATH },
  briefPath: ${JSON.stringify(join(dir, "brief.md"))},
  onLine: (s, l) => lines.push(s + ":" + l),
});
const exit = await h.exited;
process.stderr.write(JSON.stringify({ lines, code: exit.code }));
`,
    );
    const child = spawn(process.execPath, ["--import", "tsx", harness], { cwd: process.cwd(), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const code = await withTimeout(new Promise<number | null>((r) => child.on("close", r)), 20_000, "harness");
    assert.equal(code, 0, stderr);
    assert.equal(stdout, "", "the host's stdout (the MCP stream) stays empty");
    const report = JSON.parse(stderr.slice(stderr.indexOf("{"))) as { lines: string[]; code: number };
    assert.deepEqual(report.lines.slice(0, 3).sort(), ["stderr:to-stderr", "stdout:brief-on-stdin", "stdout:to-stdout"]);
    assert.ok(report.lines.some((l) => l.startsWith("stderr:") && l.includes("nonexistent-afk-path")));
    assert.notEqual(report.code, 0);
  });
});

describe("startWorker: exit and kill", () => {
  it("kill ends the whole process tree, grandchildren and orphans included", async () => {
    const dir = await freshDir("kill-tree");
    const briefPath = join(dir, "b.md");
    await writeFile(briefPath, "");
    const { handle, seen } = await start({
      command: "sleep 1000 & sh -c 'sleep 1000 & wait' & sh -c 'sleep 1000 &' ; echo started; wait",
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      briefPath,
      waitFor: "started",
      killGraceMs: 2_000,
    });
    await withTimeout(seen, 10_000, "started");
    const members = await processGroupMembers(handle.pgid);
    if (members === null) return; // no /proc: nothing to count
    assert.ok(members.length >= 4, `expected the shell and its sleeps, got ${members.length}`);
    assert.ok(members.includes(handle.pid));
    const exit = await withTimeout(handle.kill("stalled: test"), 10_000, "kill");
    assert.equal(exit.killReason, "stalled: test");
    assert.equal(exit.signal, "SIGTERM");
    assert.deepEqual(await processGroupMembers(handle.pgid), []);
    for (const pid of members) assert.equal(await alive(pid), false, `pid ${pid} survived`);
    assert.equal(handle.running(), false);
    // Idempotent.
    assert.deepEqual(await handle.kill("again"), exit);
  });

  it("escalates to SIGKILL when the tree ignores SIGTERM", async () => {
    const dir = await freshDir("kill-stubborn");
    const briefPath = join(dir, "b.md");
    await writeFile(briefPath, "");
    const { handle, seen } = await start({
      // The trap outlives SIGTERM and leaves a mark: proof that the grace came before the SIGKILL.
      command: "trap 'echo term >> term.log' TERM; sleep 1000 & echo started; while :; do sleep 1; done",
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      briefPath,
      waitFor: "started",
      killGraceMs: 300,
    });
    await withTimeout(seen, 10_000, "started");
    const exit = await withTimeout(handle.kill("max runtime"), 10_000, "kill");
    assert.equal(exit.signal, "SIGKILL");
    assert.match(await readFile(join(dir, "term.log"), "utf8"), /term/, "SIGTERM first, then the grace, then SIGKILL");
    assert.deepEqual(await processGroupMembers(handle.pgid), []);
  });

  it("a finished worker's leftovers are ended and do not hold `exited` open", async () => {
    const dir = await freshDir("leftovers");
    const briefPath = join(dir, "b.md");
    await writeFile(briefPath, "");
    const { handle, lines } = await start({
      command: "sleep 1000 & echo bye; exit 3",
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      briefPath,
    });
    // The sleeper would hold `exited` for 1000 s; the deadline only has to be far below that.
    const exit = await withTimeout(handle.exited, 120_000, "leftovers");
    assert.equal(exit.code, 3, "the exit code is reported, not judged");
    assert.equal(exit.killReason, null);
    assert.deepEqual(lines, [["stdout", "bye"]]);
    const members = await processGroupMembers(handle.pgid);
    if (members !== null) assert.deepEqual(members, []);
  });

  it("onSpawn records the worker before the first await: a host killed there leaves a pid file a restart finds", async () => {
    const dir = await freshDir("onspawn");
    const briefPath = join(dir, "b.md");
    await writeFile(briefPath, "");
    const pidFile = pidFilePath(dir);
    const pending = startWorker({
      command: "sleep 1000",
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      briefPath,
      onSpawn: (pid, commandLine) => {
        const start = processStartTimeSync(pid);
        assert.ok(start, "the process exists when onSpawn runs");
        writePidFileSync(pidFile, { pid, pgid: pid, start, started_at: Date.now(), issue: 7, attempt: 1, worktree: dir, command: commandLine });
      },
    });
    // startWorker has not been awaited: only its synchronous part ran, as far as a SIGKILL
    // at its first await would let it.
    assert.ok(existsSync(pidFile), "the pid file exists before startWorker yields");
    const handle = await pending;
    const found = await liveOrphan(pidFile);
    assert.equal(found?.pid, handle.pid, "a restart reading the file finds the live worker");
    assert.equal(found?.issue, 7);
    await handle.kill("test over");
    assert.equal(await liveOrphan(pidFile), null, "a dead worker's file is not an orphan");
  });

  it("refuses to start in a missing directory, with a typed error", async () => {
    const emptyBrief = join(root, "empty-brief.md");
    await writeFile(emptyBrief, "");
    await assert.rejects(
      startWorker({ command: "true", cwd: join(root, "does-not-exist"), env: {}, briefPath: emptyBrief }),
      (err: unknown) => err instanceof WorkerSpawnError && /cannot start the worker/.test(err.message),
    );
    await assert.rejects(startWorker({ command: "  ", cwd: root, env: {}, briefPath: emptyBrief }), WorkerSpawnError);
    await assert.rejects(startWorker({ command: "true", cwd: root, env: {}, briefPath: emptyBrief, shell: "sh" }), WorkerSpawnError);
  });
});

describe("shell and quoting", () => {
  it("uses $SHELL only when it is a known POSIX shell at an absolute executable path", async () => {
    const dir = await freshDir("shells");
    const fish = join(dir, "fish");
    await writeFile(fish, "#!/bin/sh\n");
    await chmod(fish, 0o755);
    assert.equal(resolveShell("/bin/sh"), "/bin/sh");
    if (await exists("/bin/bash")) assert.equal(resolveShell("/bin/bash"), "/bin/bash");
    assert.equal(resolveShell(fish), "/bin/sh");
    assert.equal(resolveShell("bash"), "/bin/sh");
    assert.equal(resolveShell(join(dir, "missing", "bash")), "/bin/sh");
    assert.equal(resolveShell(undefined), "/bin/sh");
  });

  it("quotes and expands {brief}", () => {
    assert.equal(shellQuote("a b"), "'a b'");
    assert.equal(shellQuote("it's"), "'it'\\''s'");
    assert.equal(expandCommand("agent --file {brief}", "/p q"), "agent --file '/p q'");
    assert.equal(expandCommand("agent \"{brief}\" '{brief}' {brief}", "/x"), "agent '/x' '/x' '/x'");
    assert.equal(expandCommand("agent $AFK_BRIEF", "/x"), "agent $AFK_BRIEF");
    assert.equal(expandCommand("a {brief}", "$&"), "a '$&'");
  });
});
