// `npm test`'s runner: runs the test command with TMPDIR set to a fresh directory of its own,
// then checks that the tests left nothing in it. A directory left behind is a test that does
// not clean up after itself, or a process it started that outlived it: a passing run that leaves
// one fails, naming what was left. The directory is removed however the run ends (an interrupt
// included), so /tmp does not fill up with the temp dirs of failed or interrupted runs.
//
//   node scripts/test-run.mjs --kind ci          (one kind of scripts/test-files.mjs, two files at a time)
//   node scripts/test-run.mjs node --test dist/test/some.test.js
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testFiles } from "./test-files.mjs";

let [command, ...args] = process.argv.slice(2);
if (command === "--kind") {
  try {
    const files = testFiles(args[0]);
    console.error(`test-run: ${files.length} test files (${args[0]}) on Node ${process.version}, two at a time, the longest first`);
    // spec on stdout as usual; each file's time and count on stderr at the end (where time goes).
    const reporters = [
      "--test-reporter=spec",
      "--test-reporter-destination=stdout",
      `--test-reporter=${join(import.meta.dirname, "file-times-reporter.mjs")}`,
      "--test-reporter-destination=stderr",
    ];
    [command, ...args] = [process.execPath, "--test", "--test-concurrency=2", ...reporters, ...files];
  } catch (error) {
    console.error(`test-run: ${error.message}`);
    process.exit(2);
  }
}
if (!command) {
  console.error(
    "usage: node scripts/test-run.mjs --kind KIND | COMMAND [ARGS...]  (runs the tests with a TMPDIR of their own and checks they left nothing there)",
  );
  process.exit(2);
}
// Short: the daemon tests put a Unix socket (at most ~100 bytes of path) under it.
const root = mkdtempSync(join(tmpdir(), "afk-t-"));
// The suite's workers are scripted fleet fixtures (marker files in temp dirs, plans read from
// outside their worktrees): they run with runtime "local" unless a run asks otherwise; the
// sandbox's own tests choose "sandbox" explicitly (docs/architecture.md, "Workers in a sandbox").
const child = spawn(command, args, { stdio: "inherit", env: { AFK_RUNTIME: "local", ...process.env, TMPDIR: root } });
let interrupted = null;
for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129],
]) {
  process.on(signal, () => {
    interrupted = code;
    // Ctrl-C reached the child already (same terminal); a SIGTERM from a timeout did not.
    if (signal !== "SIGINT") child.kill(signal);
  });
}
child.on("error", (error) => {
  console.error(`test-run: could not run ${command}: ${error.message}`);
  rmSync(root, { recursive: true, force: true });
  process.exit(2);
});
child.on("exit", (code, signal) => {
  let left = [];
  try {
    // tsx (tsx-<uid>) and Node 22's module compile cache (node-compile-cache) are kept there on
    // purpose: not a test's leftover.
    left = readdirSync(root).filter((name) => !/^tsx-\d+$/.test(name) && name !== "node-compile-cache");
  } catch {
    // removed under us: nothing to report
  }
  try {
    rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  } catch (error) {
    console.error(`test-run: could not remove ${root}: ${error.message} (a process the tests started may still write there)`);
  }
  const status = interrupted ?? (signal ? 1 : (code ?? 1));
  if (left.length === 0) process.exit(status);
  const byPrefix = new Map();
  for (const name of left) {
    const prefix = name.replace(/[A-Za-z0-9]{6}$/, "*");
    byPrefix.set(prefix, (byPrefix.get(prefix) ?? 0) + 1);
  }
  const list = [...byPrefix].map(([prefix, n]) => `${prefix}${n > 1 ? ` ×${n}` : ""}`).join(", ");
  if (status !== 0) {
    console.error(`test-run: the run failed or was interrupted; it left ${left.length} temp entr${left.length === 1 ? "y" : "ies"} (${list}), removed now`);
    process.exit(status);
  }
  console.error(
    `test-run: the tests passed but left ${left.length} temp entr${left.length === 1 ? "y" : "ies"} in their TMPDIR (${list}), removed now: ` +
      "the test that creates that prefix must remove it also on failure (tempDir() in test/support/forge-fixtures.ts, or t.after), and stop what it started",
  );
  process.exit(1);
});
