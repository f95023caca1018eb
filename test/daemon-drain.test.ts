// The two drains a terminal starts or ends: `afk-mcp daemon stop` (drains every registration
// first, then exits) and `afk-mcp run` (a session that renews from a terminal: killed, its
// registration lapses and drains). Real processes: the built CLI, its daemon, scripted workers,
// the local forge. Each scenario has its own forge and state dir.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DaemonClient } from "../server/daemon/client.js";
import { daemonPaths } from "../server/daemon/paths.js";
import { processStartTime } from "../server/runtimes/local/pid-files.js";
import { BIN } from "./support/paths.js";
import {
  alive,
  BASE_CONFIG,
  claims,
  cli,
  pullsFor,
  QUIET_WORKER,
  daemonPid,
  daemonWorld,
  until,
  workerPids,
  type DaemonWorld,
  daemonTestScope,
} from "./support/daemon-fixtures.js";

const REPO = "afk/demo";
const OTHER = "afk/other";
const { worlds, clients, children } = daemonTestScope();

async function world(titles: string[], repos: string[] = []): Promise<DaemonWorld> {
  const w = await daemonWorld(titles, "await", repos);
  worlds.push(w);
  // The quiet worker, except that one told `<issue>.empty` exits with no commit (its claim has no PR).
  await writeFile(
    w.worker,
    QUIET_WORKER.replace("\nprintf 'done", () => `\n[ -e "$plan/$n.empty" ] && exit 0\nprintf 'done`),
    { mode: 0o755 },
  );
  return w;
}

function session(w: DaemonWorld): DaemonClient {
  const c = new DaemonClient({ env: w.env });
  clients.push(c);
  return c;
}

/** A CLI child process whose output is collected as it comes. */
function background(w: DaemonWorld, args: string[]): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, ...args], { env: w.env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let text = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (text += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (text += d));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => text, exited };
}

const touch = (w: DaemonWorld, name: string) => writeFile(join(w.planDir, name), "");

describe("the drains a terminal starts", () => {
  it("afk-mcp daemon stop drains first: running workers finish, the claim without a PR is released, the one with a PR kept; then it exits", async () => {
    const w = await world(["one", "two"]);
    const [one, two] = w.issues as [number, number];
    const s = session(w);
    await s.start({ repo: REPO, worker_command: `sh ${w.worker}`, target: 2, config: BASE_CONFIG });
    await until("two workers", async () => (await workerPids(w.planDir)).size === 2);
    const workers = [...(await workerPids(w.planDir)).values()];
    const pid = (await daemonPid(w.env))!;
    const stop = background(w, ["daemon", "stop"]);
    await until("the stop to say it waits for the workers", async () =>
      /draining 1 registration\(s\); waiting for 2 running worker\(s\) to finish/.test(stop.output()),
    );
    // Draining, not ending: the daemon and both workers run on, and the registration is kept as draining.
    assert.ok(alive(pid), "the daemon waits for its workers");
    assert.ok(workers.every(alive), "no worker was ended");
    // Kept, marked draining (written just after the stop's answer): a daemon killed now would resume the drain.
    const stored = async () => JSON.parse(await readFile(daemonPaths(w.env).registrations, "utf8")) as { repo: string; draining: boolean }[];
    await until(
      "the registration stored as draining",
      async () => JSON.stringify((await stored()).map((r) => [r.repo, r.draining])) === JSON.stringify([[REPO, true]]),
    );
    // #one's worker commits (its result becomes a PR); #two's exits with nothing (its claim has no PR).
    await touch(w, `${two}.empty`);
    await touch(w, `${one}.go`);
    await touch(w, `${two}.go`);
    assert.equal(await stop.exited, 0, stop.output());
    assert.match(stop.output(), /\nstopped\n$/);
    await until("the daemon to exit once the drain was done", async () => (await processStartTime(pid)) === null);
    assert.deepEqual(await pullsFor(w), [one], "the finished worker's commits became its PR");
    assert.deepEqual(await claims(w), [one], "the claim without a PR was released, the one with a PR kept");
    assert.deepEqual(JSON.parse(await readFile(daemonPaths(w.env).registrations, "utf8")), [], "nothing left to resume");
    // The session that registered it renews on: with nothing left behind, its renewal starts no new daemon.
    assert.equal(await s.renew(), 0);
    assert.equal(await daemonPid(w.env), null, "stopped stays stopped");
    assert.deepEqual([...(await workerPids(w.planDir)).keys()].sort(), [`${one}.1`, `${two}.1`], "no worker was started during the drain");
  });

  it("afk-mcp run renews from a terminal; killed, its registration lapses and drains; a plain start lapses after the default 300 s (none is lapse-free by default)", async () => {
    const w = await world(["one"], [OTHER]);
    const n = w.issues[0]!;
    // A plain start (no registration config): the default TTL, stated in the answer, with a renewal deadline.
    const plain = session(w);
    const started = await plain.start({ repo: OTHER, worker_command: `sh ${w.worker}`, target: 1, config: BASE_CONFIG });
    assert.match(started.message, /it lapses and drains 300s after the last renewal by a session/);
    const rowOf = async (repo: string) => (await plain.status({ repo })).registrations.find((r) => r.repo === repo);
    const plainRow = await rowOf(OTHER);
    assert.equal(plainRow?.ttl_seconds, 300);
    assert.ok(plainRow?.renew_by, "lapse-free only through config or run --persist, never by default");
    // The run's registration is renewed by the run every half TTL (10 s: room on a loaded machine).
    const run = background(w, [
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
      "--set",
      "registration.ttl_seconds=10",
    ]);
    const first = await until("the run's registration", async () => rowOf(REPO));
    assert.equal(first.ttl_seconds, 10, run.output());
    assert.equal(first.sessions.length, 1, "the run is the one session renewing it");
    await until(
      "a renewal by the run past its first deadline",
      async () => Date.parse((await rowOf(REPO))?.renew_by ?? "0") > Date.parse(first.renew_by!) + 1000,
    );
    await until("its worker", async () => (await workerPids(w.planDir)).size === 1);
    const [worker] = [...(await workerPids(w.planDir)).values()];
    assert.equal((await rowOf(REPO))?.state, "running");
    // One line per tick, stamped once with the tick's time.
    const tickLine = /^\d{4}-\d\d-\d\dT[\d:.]+Z: .*\bin flight\b/m;
    await until("a tick line from the run", async () => tickLine.test(run.output()));
    assert.doesNotMatch(run.output(), /Z\s+\d{4}-\d\d-\d\dT[\d:.]+Z: /, "no second timestamp before the tick's own");
    // kill -9: nothing stops the project, and nothing renews it any more.
    run.child.kill("SIGKILL");
    await run.exited;
    assert.ok(alive(worker!), "the run's death touched no worker");
    await until("the lapse to drain it", async () => (await rowOf(REPO))?.state === "draining");
    const lapses = (await plain.logs({ repo: REPO, lane: "supervisor", tail_lines: 1000 })).records.filter((r) => r.event === "registration_lapsed");
    assert.equal(lapses.length, 1);
    assert.match(String(lapses[0]!.msg), /no session renewed it within 10s/);
    // Lapsed, it has no renewal deadline left: the terminal's status does not state one.
    const listed = await cli(w.env, "daemon", "status");
    assert.match(listed.stdout, /\n {2}afk\/demo {2}draining .* renew by - \(draining: no longer renewed\) /, listed.stdout);
    await touch(w, `${n}.go`);
    await until("the drain to end", async () => (await rowOf(REPO)) === undefined);
    assert.deepEqual(await pullsFor(w), [n], "the running worker finished and its commits became a PR");
    assert.deepEqual(await claims(w), [n], "only the claim with a PR is kept");
    assert.equal((await rowOf(OTHER))?.state, "running", "the renewed registration runs on");
  });
});
