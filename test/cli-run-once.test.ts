// `afk-mcp run` for cron and CI, as a child process against a real daemon on the local forge:
// --once is one tick whose births the daemon's drain waits for, and the exit code says whether
// work remains; --max-issues N stops births once N issues reached an end, and run exits when the
// project ended and its registration went; a cap of 0 or less is refused.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DaemonClient } from "../server/daemon/client.js";
import { api, repoPath } from "./support/forge-fixtures.js";
import { cli, daemonWorld, teardown, until, type DaemonWorld } from "./support/daemon-fixtures.js";

const REPO = "afk/demo";
const worlds: DaemonWorld[] = [];
const clients: DaemonClient[] = [];

after(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  for (const w of worlds) await teardown(w);
});

const runArgs = (w: DaemonWorld, ...extra: string[]) => [
  "run",
  "--repo",
  REPO,
  "--worker",
  `sh ${w.worker}`,
  "--target",
  "1",
  "--set",
  "gate.ci=local",
  "--set",
  "gate.local_command=true",
  ...extra,
];
const born = async (w: DaemonWorld) =>
  (await readdir(w.planDir))
    .filter((f) => /^\d+\.\d+\.pid$/.test(f))
    .map((f) => Number(f.split(".")[0]))
    .sort((a, b) => a - b);
const closed = async (w: DaemonWorld) => {
  const out: number[] = [];
  for (const n of w.issues) if ((await api(w.forge, "GET", repoPath(w.forge, `/issues/${n}`))).body.state === "closed") out.push(n);
  return out;
};

describe("afk-mcp run --once and --max-issues", { concurrency: true }, () => {
  it("refuses a cap of 0, a negative one or a word, before anything starts", async () => {
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", AFK_STATE_DIR: "/nonexistent-afk-state" };
    // A negative number is given with "=", as parseArgs wants for a value that starts with a dash.
    for (const bad of ["0", "-1", "two", "1.5"]) {
      const r = await cli(env, "run", "--repo", REPO, "--worker", "true", `--max-issues=${bad}`);
      assert.equal(r.code, 2, `${bad}: ${r.stderr}`);
      assert.match(r.stderr, /--max-issues must be a whole number of issues, 1 or more/);
    }
  });

  it("--once: one tick's birth, drained by the daemon; exit 3 while work remains; the registration is gone", { timeout: 300_000 }, async () => {
    const w = await daemonWorld(["one", "two", "three"], "commit");
    worlds.push(w);
    const r = await cli(w.env, ...runArgs(w, "--once"));
    assert.equal(r.code, 3, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /the project ended and its registration is gone; work remains \(exit 3\)/);
    assert.deepEqual((await born(w)).length, 1, "one tick at target 1 starts one worker");
    // Its result was handled before the end: the worker's commit became a PR, whose claim stays.
    const pulls = (await api(w.forge, "GET", repoPath(w.forge, "/pulls?state=all"))).body as unknown[];
    assert.equal(pulls.length, 1);
    const session = new DaemonClient({ env: w.env });
    clients.push(session);
    assert.equal((await session.status({ repo: REPO, scope: "worker" })).registration, null);
  });

  it("--max-issues 1: births stop once one issue landed; run exits 0 when the drain is done", { timeout: 300_000 }, async () => {
    const w = await daemonWorld(["one", "two", "three"], "await");
    worlds.push(w);
    const [first] = w.issues as [number];
    await writeFile(join(w.planDir, `${first}.go`), "");
    const running = cli(w.env, ...runArgs(w, "--max-issues", "1", "--auto-merge"));
    await until("the first issue landed", async () => (await closed(w)).length >= 1, 240_000);
    // The second worker, born while the first landed, may finish now: the drain waits for it.
    for (const n of w.issues) await writeFile(join(w.planDir, `${n}.go`), "");
    const r = await running;
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /the project ended and its registration is gone/);
    const bornIssues = await born(w);
    assert.ok(bornIssues.length <= 2 && bornIssues.includes(first), `born: ${bornIssues.join(", ")}`);
    assert.equal(existsSync(join(w.planDir, `${w.issues[2]}.1.pid`)), false, "no birth after the cap was reached");
    assert.equal((await closed(w)).length, 1);
  });
});
