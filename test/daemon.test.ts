// The per-machine daemon for real: the built binary as daemon and as stdio MCP server, sessions
// as DaemonClients in this process, the local forge over HTTP, quiet scripted workers (two stdio
// servers on one daemon: daemon-sessions.test.ts; a daemon that cannot be used: daemon-faults).
// Each scenario has its own forge and state dir and stops its daemon (and every worker) at the end.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import { spawn } from "node:child_process";
import { chmod, readFile, stat } from "node:fs/promises";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { DaemonClient } from "../server/daemon/client.js";
import { readProcTable } from "../server/runtimes/local/proc.js";
import { processStartTime } from "../server/runtimes/local/pid-files.js";
import { daemonPaths } from "../server/daemon/paths.js";
import { UsageError } from "../server/gh/errors.js";
import { api, git, repoPath, tempDir } from "./support/forge-fixtures.js";
import { GitRefStore } from "../server/gh/gitrefs.js";
import { Lease } from "../server/gh/lease.js";
import { BIN } from "./support/paths.js";
import { tasks } from "./support/fleet-fixtures.js";
import {
  alive,
  BASE_CONFIG,
  claims,
  pullsFor,
  CHATTY_WORKER,
  QUIET_WORKER,
  cli,
  daemonPid,
  daemonWorld,
  daemonWritings,
  until,
  workerPids,
  type DaemonWorld,
  daemonTestScope,
} from "./support/daemon-fixtures.js";

const REPO = "afk/demo";
const { worlds, clients } = daemonTestScope();

async function world(titles: string[], plan: "await" | "commit" = "await"): Promise<DaemonWorld> {
  const w = await daemonWorld(titles, plan);
  worlds.push(w);
  return w;
}

function session(w: DaemonWorld, options: { version?: string } = {}): DaemonClient {
  const c = new DaemonClient({ env: w.env, ...options });
  clients.push(c);
  return c;
}

function startInput(w: DaemonWorld, config: Record<string, unknown> = {}, target = w.issues.length) {
  return { repo: REPO, worker_command: `sh ${w.worker}`, target, config: { ...BASE_CONFIG, ...config } };
}

const go = (w: DaemonWorld, n: number) => writeFile(join(w.planDir, `${n}.go`), "");

describe("afk-mcp daemon", () => {
  it("one per state dir: an owner-only socket, a second start exits 0 naming it, status, stop", async () => {
    const w = await world([]);
    const first = await cli(w.env, "daemon");
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /started the afk-mcp daemon \(pid \d+\)/);
    const pid = await daemonPid(w.env);
    assert.ok(pid !== null && alive(pid));
    const info = await stat(daemonPaths(w.env).socket);
    assert.ok(info.isSocket());
    assert.equal(info.mode & 0o777, 0o600, "the socket is owner-only");
    const second = await cli(w.env, "daemon");
    assert.equal(second.code, 0);
    assert.match(second.stdout, new RegExp(`already running \\(pid ${pid}`));
    const foreground = await cli(w.env, "daemon", "--foreground");
    assert.equal(foreground.code, 0);
    assert.match(foreground.stdout, new RegExp(`already running for this state dir \\(pid ${pid}\\)`));
    const status = await cli(w.env, "daemon", "status");
    assert.equal(status.code, 0);
    assert.match(status.stdout, new RegExp(`pid ${pid}`));
    const restarted = await cli(w.env, "daemon", "restart");
    assert.equal(restarted.code, 0, restarted.stderr);
    const fresh = await daemonPid(w.env);
    assert.ok(fresh !== null && fresh !== pid && alive(fresh), "restart drained the old daemon and started a new one");
    assert.equal(await processStartTime(pid!), null, "the old daemon exited");
    const stopped = await cli(w.env, "daemon", "stop");
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.equal(await processStartTime(fresh!), null, "the daemon exited");
    assert.equal((await cli(w.env, "daemon", "status")).code, 3);
  });

  it("daemon status lists each registration's selectors in order, long lists summarized", async () => {
    // Eight issues: a number that is no issue would refuse the start, so the lists name these.
    const w = await world(tasks(8));
    const s = session(w);
    // The largest selectors project_start takes: 20 of them, 1,000 issue numbers each.
    const first8 = (i: number): number[] => Array.from({ length: 8 }, (_, j) => ((i + j) % 8) + 1);
    const selectors = Array.from({ length: 20 }, (_, i) => ({
      issues: Array.from({ length: 1000 }, (_, j) => ((i + j) % 8) + 1),
      ...(i === 1 ? { tags: ["api", "ui"], user: "bob" } : {}),
    }));
    await s.start({ ...startInput(w, {}, 1), selectors });
    const status = await cli(w.env, "daemon", "status");
    assert.equal(status.code, 0, status.stderr);
    const line = status.stdout.split("\n").find((l) => l.trim().startsWith("selectors "));
    assert.ok(line, status.stdout);
    const shown = (i: number, more = ""): string => `[label ready-for-agent, issues ${first8(i).join(",")} +992 more (1000)${more}]`;
    assert.equal(
      line.trim(),
      `selectors ${shown(0)} then ${shown(1, ", tags api,ui, user bob")} then ${shown(2)} then ${shown(3)} then ${shown(4)} then 15 more selector(s) (20 in all)`,
    );
    // The whole list stays in status's structured content.
    const view = await s.status({ repo: REPO });
    assert.deepEqual(
      view.registrations[0]!.selectors.map((sel) => (sel.issues as number[]).length),
      Array(20).fill(1000),
    );
  });

  it("racing starts end with exactly one daemon; a stale socket is replaced", async () => {
    const w = await world([]);
    const racers = await Promise.all([1, 2, 3].map(() => cli(w.env, "daemon")));
    assert.ok(
      racers.every((r) => r.code === 0),
      racers.map((r) => r.stderr).join("\n"),
    );
    const pid = await daemonPid(w.env);
    assert.ok(pid !== null);
    const pids = new Set(racers.map((r) => Number(/pid (\d+)/.exec(r.stdout)?.[1])));
    assert.deepEqual([...pids], [pid], "every starter names the same daemon");
    // kill -9 leaves the socket file and the lock behind: the next start replaces both.
    process.kill(pid!, "SIGKILL");
    await until("the daemon to die", async () => !alive(pid!));
    const again = await cli(w.env, "daemon");
    assert.equal(again.code, 0, again.stderr);
    const fresh = await daemonPid(w.env);
    assert.ok(fresh !== null && fresh !== pid && alive(fresh));
  });

  it("refuses a socket open to others; closes a connection that sends garbage or too much, and keeps serving", async () => {
    const w = await world([]);
    assert.equal((await cli(w.env, "daemon")).code, 0);
    const paths = daemonPaths(w.env);
    for (const garbage of ["not json\n", JSON.stringify({ id: 1, method: "hello", extra: true }) + "\n", "x".repeat(1024 * 1024 + 10)]) {
      const closed = await new Promise<boolean>((resolve) => {
        const s = connect(paths.socket, () => s.write(garbage));
        s.on("data", () => undefined);
        s.on("close", () => resolve(true));
        s.on("error", () => undefined);
      });
      assert.ok(closed);
    }
    // A well-formed call to a method it does not know is answered, not dropped.
    const answer = await new Promise<string>((resolve) => {
      const s = connect(paths.socket, () => s.write(JSON.stringify({ id: 7, method: "nope" }) + "\n"));
      s.on("data", (d) => {
        resolve(String(d));
        s.destroy();
      });
    });
    assert.match(answer, /"id":7,"error":\{"type":"usage","message":"unknown daemon method \\"nope\\"/);
    const ok = session(w);
    const status = await ok.status({ repo: REPO, scope: "worker" });
    assert.equal(status.daemon?.pid, await daemonPid(w.env), "still serving");
    await ok.close();
    await chmod(paths.socket, 0o666);
    const refused = session(w);
    await assert.rejects(refused.status({ repo: REPO, scope: "worker" }), /mode 666, open to other users/);
    if (process.getuid?.() === 0) {
      const { chown } = await import("node:fs/promises");
      await chmod(paths.socket, 0o600);
      await chown(paths.socket, 65534, 65534);
      await assert.rejects(session(w).status({ repo: REPO, scope: "worker" }), /owned by uid 65534, not by you/);
      await chown(paths.socket, 0, 0);
    }
  });

  it("a daemon that dies mid-call: the call fails with the fix, the next one restarts it", async () => {
    const w = await world([]);
    const s = session(w);
    const first = await s.takeover({ repo: REPO, list: true });
    assert.equal(first.action, "list");
    const pid = s.daemon()!.pid;
    const inFlight = s.takeover({ repo: REPO, list: true });
    process.kill(pid, "SIGKILL");
    await assert.rejects(inFlight, (error: Error) => error instanceof UsageError && /went away during takeover.*call again/.test(error.message));
    const next = await s.takeover({ repo: REPO, list: true });
    assert.equal(next.action, "list");
    assert.ok(s.daemon()!.pid !== pid && alive(s.daemon()!.pid), "a new daemon answered");
  });

  it("a drained queue deregisters; a registration with ttl_seconds null has no renewal deadline", async () => {
    const w = await world([]);
    const s = session(w);
    await s.start(startInput(w, { registration: { ttl_seconds: null, idle_deregister_seconds: 2 } }, 1));
    const row = (await s.daemonCall<{ ttl_seconds: number | null; renew_by: string | null }[]>("registrations"))?.[0];
    assert.ok(row, "registered");
    assert.equal(row.ttl_seconds, null);
    assert.equal(row.renew_by, null, "it never lapses");
    await until("the idle project to deregister", async () => (await s.status({ repo: REPO })).registrations.length === 0);
    const log = (await s.logs({ lane: "daemon", tail_lines: 500 })).records.map((r) => String(r.msg)).join("\n");
    assert.match(log, /queue drained \(nothing ready, nothing in flight\) for \d+s: deregistering/);
    const idle = (await s.logs({ repo: REPO, lane: "supervisor", tail_lines: 500 })).records.filter((r) => r.event === "registration_idle");
    assert.equal(idle.length, 1, "and said in the project's supervisor lane");
  });

  it("afk-mcp run --persist is a session whose registration never lapses; Ctrl-C stops it", async () => {
    const w = await world(["one"]);
    const run = spawn(
      process.execPath,
      [BIN, "run", "--repo", REPO, "--worker", `sh ${w.worker}`, "--target", "1", "--persist", "--set", "gate.ci=local", "--set", "gate.local_command=true"],
      { env: w.env, stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    run.stdout.on("data", (d: Buffer) => (output += d.toString()));
    run.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => run.once("exit", (code) => resolve(code)));
    const observer = session(w);
    const row = await until(
      "the run's registration",
      async () => (await observer.daemonCall<{ ttl_seconds: number | null; renew_by: string | null; sessions: string[] }[]>("registrations"))?.[0],
    );
    assert.equal(row.ttl_seconds, null, output);
    assert.equal(row.renew_by, null, "no renewal deadline: it never lapses");
    assert.equal(row.sessions.length, 1, "the run is the session that renews it");
    await until("its worker", async () => (await workerPids(w.planDir)).size === 1);
    run.kill("SIGINT");
    assert.equal(await exited, 0, output);
    assert.match(output, /stopped: released 1 claim\(s\) without a PR/);
    assert.deepEqual(await observer.daemonCall("registrations"), [], "Ctrl-C stopped the project");
  });

  it("a start the preconditions refuse registers nothing", async () => {
    const w = await world(["one"]);
    const s = session(w);
    await assert.rejects(
      s.start(startInput(w, { labels: { ready: "no-such-label" } })),
      (error: Error) => error instanceof UsageError && /project_start refused: ready_label/.test(error.message),
    );
    const status = await s.status({ repo: REPO });
    assert.deepEqual(status.registrations, [], "nothing registered");
    assert.deepEqual(await claims(w), [], "nothing claimed");
    assert.equal(await s.renew(), 0, "this session renews nothing");
  });

  it("a token that cannot push is refused with the problem and the fix: nothing registered, nothing written", async () => {
    const w = await world(["one"]);
    // The daemon runs with an admin token; the registering session's own token is what counts.
    assert.equal((await cli(w.env, "daemon")).code, 0);
    const made = await fetch(`${w.forge.apiUrl}/_forge/users`, { method: "POST", body: JSON.stringify({ login: "reader", push: false }) });
    const reader = ((await made.json()) as { token: string }).token;
    const s = new DaemonClient({ env: { ...w.env, GITHUB_TOKEN: reader } });
    clients.push(s);
    await assert.rejects(s.start(startInput(w)), (error: Error) => {
      assert.ok(error instanceof UsageError, String(error));
      assert.match(error.message, /project_start refused: permissions: the token cannot push to afk\/demo: use a token with write access/);
      assert.ok(!error.message.includes(reader), "the token is never quoted");
      return true;
    });
    assert.deepEqual(await s.daemonCall("registrations"), [], "nothing registered");
    const { stdout } = await git(w.planDir, "ls-remote", w.forge.gitUrl, "refs/afk/*");
    assert.equal(stdout, "", "no claim, heartbeat or probe ref");
    const issue = await api(w.forge, "GET", repoPath(w.forge, `/issues/${w.issues[0]}`));
    assert.deepEqual(
      issue.body.labels.map((l: { name: string }) => l.name),
      ["ready-for-agent"],
      "the issue is untouched",
    );
    assert.ok(!(await daemonWritings(w.env)).includes(reader), "the daemon's log never holds the token");
  });

  it("a registration acts with its session's token and environment, not the daemon's; they are kept owner-only and never logged", async () => {
    const w = await world(["one"], "commit");
    assert.equal((await cli(w.env, "daemon")).code, 0, "the daemon runs with another session's environment (afk-bot's token)");
    const made = await fetch(`${w.forge.apiUrl}/_forge/users`, { method: "POST", body: JSON.stringify({ login: "bee" }) });
    const bee = ((await made.json()) as { token: string }).token;
    const worker = join(w.planDir, "env-worker.sh");
    await writeFile(
      worker,
      QUIET_WORKER.replace("cat >/dev/null", 'cat >/dev/null\nprintf "%s\\n%s\\n%s\\n" "${AFK_USER_MARK:-}" "$PATH" "${SOME_SECRET:-}" >"$plan/$n.env"'),
      { mode: 0o755 },
    );
    const env = { ...w.env, GITHUB_TOKEN: bee, AFK_USER_MARK: "from-b", PATH: `/opt/b-bin:${w.env.PATH}`, SOME_SECRET: "s3cret-of-b" };
    const b = new DaemonClient({ env });
    clients.push(b);
    await b.start({ ...startInput(w, {}, 1), worker_command: `sh ${worker}` });
    await until("a PR", async () => (await pullsFor(w)).length === 1);
    const pr = (await api(w.forge, "GET", repoPath(w.forge, "/pulls?state=all"))).body[0] as { user: { login: string } };
    assert.equal(pr.user.login, "bee", "the fleet opened the PR with the registering session's token");
    const [mark, path, secret] = (await readFile(join(w.planDir, `${w.issues[0]}.env`), "utf8")).split("\n");
    assert.equal(mark, "from-b", "the worker got the session's passthrough variable");
    assert.match(path!, /^\/opt\/b-bin:/, "and the session's PATH");
    assert.equal(secret, "", "and nothing the passthrough does not name");
    const paths = daemonPaths(w.env);
    const stored = await readFile(paths.registrations, "utf8");
    assert.equal((await stat(paths.registrations)).mode & 0o777, 0o600, "the registrations file (it holds the token) is owner-only");
    assert.equal((await stat(paths.dir)).mode & 0o777, 0o700);
    assert.ok(!stored.includes("s3cret-of-b"), "a variable the project does not need is not kept");
    assert.ok(!(await daemonWritings(w.env)).includes(bee), "the daemon's log never holds the token");
    const lanes = await b.logs({ repo: REPO, lane: "supervisor", tail_lines: 1000 });
    assert.ok(!JSON.stringify(lanes).includes(bee), "nor do the lanes");
  });

  it("takeover and reads of a repository nobody registered act as the calling session, whose token the daemon does not keep", async () => {
    const w = await world(["one"]);
    const user = async (login: string, push: boolean) =>
      ((await (await fetch(`${w.forge.apiUrl}/_forge/users`, { method: "POST", body: JSON.stringify({ login, push }) })).json()) as { token: string }).token;
    // The daemon was started by a session whose token may read but not push.
    const reader = await user("reader", false);
    assert.equal((await cli({ ...w.env, GITHUB_TOKEN: reader }, "daemon")).code, 0);
    // A dead peer (instance "peer1") left a claim on the first issue.
    const peerRefs = new GitRefStore({ controlDir: join(await tempDir("afk-peer-"), "control.git"), remoteUrl: w.forge.gitUrl, token: w.forge.token });
    const peer = new Lease(peerRefs, { namespace: "refs/afk", ttlSeconds: 4500, heartbeatSeconds: 300 }, "peer1", "peer-host");
    assert.equal((await peer.claim(w.issues[0]!)).won, true);
    assert.equal(await peer.heartbeat(), true);
    const bee = await user("bee", true);
    const b = new DaemonClient({ env: { ...w.env, GITHUB_TOKEN: bee } });
    clients.push(b);
    await api(w.forge, "POST", "/_forge/accounting/reset");
    const listed = await b.takeover({ repo: REPO, list: true });
    assert.deepEqual(listed.instances.find((r) => r.instance === "peer1")?.claims, [w.issues[0]]);
    const byUser = (await api(w.forge, "GET", "/_forge/accounting")).body.by_user as Record<string, unknown>;
    assert.ok(byUser.bee !== undefined, `the list was read with the session's token (requests by ${Object.keys(byUser).join(", ")})`);
    assert.equal(byUser.reader, undefined, "not with the daemon's");
    // Taking the claims pushes refs: the daemon's read-only token could not, the session's can.
    const taken = await b.takeover({ repo: REPO, instance: "peer1", confirm: true });
    assert.equal(taken.action, "taken", taken.message);
    assert.deepEqual(
      taken.taken.map((t) => t.issue),
      [w.issues[0]],
    );
    const after = await b.takeover({ repo: REPO, list: true });
    const mine = after.instances.find((r) => r.claims.includes(w.issues[0]!));
    assert.ok(mine?.this_daemon, "the claim now belongs to this machine's daemon, which continues it once the project starts");
    const status = await b.status({ repo: REPO });
    assert.equal(status.plan?.login, "bee", "status of an unregistered repository reads as the session too");
    assert.deepEqual(await b.daemonCall("registrations"), [], "nothing was registered");
    const paths = daemonPaths(w.env);
    const stored = await readFile(paths.registrations, "utf8").catch(() => "");
    assert.ok(!stored.includes(bee), "the session's token was used for the calls only: not stored");
    assert.ok(!(await daemonWritings(w.env)).includes(bee), "nor logged");
  });

  it("kill -9 of the MCP server touches no worker: a new session sees them and their commits become PRs", async () => {
    const w = await world(["one", "two"]);
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN], env: w.env, stderr: "pipe" });
    const mcp = new Client({ name: "afk-daemon-test", version: "0.0.0" });
    await mcp.connect(transport);
    const started = await mcp.callTool({ name: "project_start", arguments: startInput(w) }, undefined, { timeout: 600_000 });
    assert.notEqual(started.isError, true, JSON.stringify(started.content));
    await until("two workers", async () => (await workerPids(w.planDir)).size === 2);
    const workers = [...(await workerPids(w.planDir)).values()];
    process.kill(transport.pid!, "SIGKILL");
    await until("the MCP server to die", async () => !alive(transport.pid!));
    assert.ok(workers.every(alive), "both workers still run");
    const next = session(w);
    const status = await next.status({ repo: REPO, scope: "worker" });
    const table = (await readProcTable()) ?? [];
    assert.deepEqual(status.workers.map((r) => r.pid).sort(), workers.map((p) => table.find((e) => e.pid === p)?.pgrp).sort());
    for (const n of w.issues) await go(w, n);
    await until("a PR per issue", async () => (await pullsFor(w)).length === 2);
    assert.deepEqual(await pullsFor(w), w.issues);
    await mcp.close().catch(() => undefined);
  });

  it("a registration nobody renews lapses and drains: no claim without a PR is left", async () => {
    const w = await world(["one", "two"]);
    const s = session(w);
    const started = await s.start(startInput(w, { registration: { ttl_seconds: 2 } }));
    assert.match(started.message, /lapses and drains 2s after the last renewal/);
    await until("two workers", async () => (await workerPids(w.planDir)).size === 2);
    const row = (await s.status({ repo: REPO })).registrations.find((r) => r.repo === REPO);
    assert.deepEqual(row?.sessions, [s.session]);
    assert.ok(row?.renew_by);
    // The session renews while it lives: well past one TTL the registration is still running.
    await until(
      "renewals past one TTL",
      async () => Date.parse((await s.status({ repo: REPO })).registrations[0]?.renew_by ?? "0") > Date.parse(row!.renew_by!) + 1000,
    );
    assert.equal((await s.status({ repo: REPO })).registrations[0]?.state, "running");
    await s.close();
    const watcher = session(w);
    await until("the lapse to drain it", async () => (await watcher.status({ repo: REPO })).registrations[0]?.state === "draining");
    // Its running workers finish and their commits still become PRs; nothing else is claimed.
    for (const n of w.issues) await go(w, n);
    await until("the drain to end", async () => (await watcher.status({ repo: REPO })).registrations.length === 0);
    const prs = await pullsFor(w);
    const left = await claims(w);
    assert.deepEqual(
      left.filter((n) => !prs.includes(n)),
      [],
      "every claim left has a PR",
    );
    const lapsed = (await watcher.logs({ repo: REPO, lane: "supervisor", tail_lines: 500 })).records.filter((r) => r.event === "registration_lapsed");
    assert.equal(lapsed.length, 1, "the lapse is recorded in the project's supervisor lane");
  });

  it("a plain start's TTL: unrenewed, it lapses after its interval (a lapse record, claims settled, no more polling); renewed, it does not", async () => {
    const w = await daemonWorld(["one", "two"], "await", ["afk/other"]);
    worlds.push(w);
    // The lapsing project acts with its own forge user's token, so its requests can be told apart.
    const ann = (
      (await (await fetch(`${w.forge.apiUrl}/_forge/users`, { method: "POST", body: JSON.stringify({ login: "ann" }) })).json()) as { token: string }
    ).token;
    const a = new DaemonClient({ env: { ...w.env, GITHUB_TOKEN: ann } });
    const b = session(w);
    clients.push(a);
    const ttl = 3;
    await a.start(startInput(w, { registration: { ttl_seconds: ttl } }));
    // The renewed one has room to spare on a loaded machine: renewals every 5 s against a 10 s TTL.
    await b.start({ ...startInput(w, { registration: { ttl_seconds: 10 } }, 1), repo: "afk/other" });
    await until("two workers", async () => (await workerPids(w.planDir)).size === 2);
    const rowOf = async (repo: string) => (await b.status({ repo: REPO })).registrations.find((r) => r.repo === repo);
    const firstRenewBy = Date.parse((await rowOf("afk/other"))!.renew_by!);
    // The deadline the daemon holds for the lapsing one as the session closes (a renewal after this read only moves it later).
    const renewBy = (await rowOf(REPO))!.renew_by!;
    await a.close();
    await until("the unrenewed registration to lapse", async () => (await rowOf(REPO))?.state === "draining");
    const supervisor = async (repo: string) => (await b.logs({ repo, lane: "supervisor", tail_lines: 1000 })).records;
    const lapses = (await supervisor(REPO)).filter((r) => r.event === "registration_lapsed") as { msg: string; ts: string }[];
    assert.equal(lapses.length, 1, "one lapse record in the project's supervisor lane");
    assert.match(lapses[0]!.msg, new RegExp(`no session renewed it within ${ttl}s`));
    // Not before its deadline: its last renewal plus the TTL (the daemon's own clock, not this test's timing).
    assert.ok(Date.parse(lapses[0]!.ts) >= Date.parse(renewBy), `lapsed at ${lapses[0]!.ts}, before its deadline ${renewBy}`);
    // Drained as project_stop drains: its running workers finish, their commits become PRs, nothing else stays claimed.
    for (const n of w.issues) await go(w, n);
    await until("the drain to end", async () => (await rowOf(REPO)) === undefined);
    const prs = await pullsFor(w);
    assert.deepEqual(
      (await claims(w)).filter((n) => !prs.includes(n)),
      [],
      "every claim left has a PR",
    );
    // The lapsed fleet polls no more: over two further polls of the renewed one, not one request with its token.
    await api(w.forge, "POST", "/_forge/accounting/reset");
    const polled = async () => (await rowOf("afk/other"))?.last_poll ?? null;
    const since = await until("a poll of the renewed project", polled);
    const next = await until("its next poll", async () => ((await polled()) !== since ? await polled() : null));
    await until("one more", async () => (await polled()) !== next);
    const byUser = (await api(w.forge, "GET", "/_forge/accounting")).body.by_user as Record<string, unknown>;
    assert.equal(byUser.ann, undefined, `no request with the lapsed project's token (requests by ${Object.keys(byUser).join(", ")})`);
    // The renewed one runs on, renewed past its first deadline, with no lapse of its own.
    const other = await rowOf("afk/other");
    assert.equal(other?.state, "running");
    await until("a renewal past its first deadline", async () => Date.parse((await rowOf("afk/other"))?.renew_by ?? "0") > firstRenewBy + 1000);
    assert.deepEqual(
      (await supervisor("afk/other")).filter((r) => r.event === "registration_lapsed"),
      [],
    );
  });

  it("a stopping project stays listed, as draining, until the end of its stop is done: once it is gone it sends nothing more", async () => {
    const w = await world(["one"]);
    const s = session(w);
    await s.start(startInput(w, {}, 1));
    await until("a worker", async () => (await workerPids(w.planDir)).size === 1);
    assert.match((await s.stop({ repo: REPO })).message, /1 worker\(s\) still running/);
    // The end of a stop lists the open PRs to know which claims to keep: slow that read down.
    await api(w.forge, "POST", "/_forge/faults", { route: "GET /repos/{owner}/{repo}/pulls", latency_ms: 1500 });
    await go(w, w.issues[0]!);
    const stopped = async () => (await s.logs({ repo: REPO, lane: "supervisor", tail_lines: 1000 })).records.some((r) => r.event === "stopped");
    // Whenever status lists it no more, the stop's end (its "stopped" record) has already happened.
    const listedWhileEnding = await until("the project to leave the list", async () => {
      const ended = await stopped();
      const row = (await s.status({ repo: REPO })).registrations.find((r) => r.repo === REPO);
      if (row) assert.equal(row.state, "draining", "a stopping project is listed as draining");
      return row ? null : { endedNow: ended || (await stopped()) };
    });
    assert.equal(listedWhileEnding.endedNow, true, "the project left the list before its stop had ended (claims still being settled)");
    await api(w.forge, "DELETE", "/_forge/faults");
    const prs = await pullsFor(w);
    assert.deepEqual(prs, w.issues, "the finished worker's commits became its PR");
    assert.deepEqual(await claims(w), prs, "only the claim with a PR is kept");
  });

  it("kill -9 of the daemon mid-drain: the next call restarts it, it adopts its workers at once, no second worker anywhere", async () => {
    const w = await world(["one", "two"]);
    const s = session(w);
    await s.start(startInput(w));
    await until("two workers", async () => (await workerPids(w.planDir)).size === 2);
    const before = await workerPids(w.planDir);
    const stopped = await s.stop({ repo: REPO });
    assert.match(stopped.message, /2 worker\(s\) still running/);
    const pid = (await daemonPid(w.env))!;
    process.kill(pid, "SIGKILL");
    await until("the daemon to die", async () => !alive(pid));
    assert.ok([...before.values()].every(alive), "the workers outlive the daemon");
    // The next call (a read) restarts it: it left registrations behind.
    const status = await s.status({ repo: REPO, scope: "worker" });
    assert.ok(status.daemon && status.daemon.pid !== pid);
    const adopted = await until("both workers adopted", async () => {
      // Rows with state "orphan" are workers status found by their pid files, not yet adopted.
      const rows = (await s.status({ repo: REPO, scope: "worker" })).workers.filter((r) => r.state !== "orphan");
      return rows.length === 2 ? rows : null;
    });
    // The fleet knows a worker by its process group leader (the shell it started).
    const table = (await readProcTable()) ?? [];
    const groups = [...before.values()].map((p) => table.find((e) => e.pid === p)?.pgrp).sort();
    assert.deepEqual(adopted.map((r) => r.pid).sort(), groups, "the same processes, adopted");
    for (const n of w.issues) await go(w, n);
    await until("a PR per issue", async () => (await pullsFor(w)).length === 2);
    assert.deepEqual(await workerPids(w.planDir), before, "no issue got a second worker");
    const lane = (await s.logs({ repo: REPO, lane: "supervisor", tail_lines: 1000 })).records;
    assert.equal(lane.filter((r) => r.event === "worker_adopted").length, 2);
    assert.equal(lane.filter((r) => r.event === "orphan_ended").length, 0);
  });

  it("a worker that keeps printing survives the daemon's kill -9; the next daemon adopts it, follows its output and continues its claim", async () => {
    const w = await world(["one"]);
    await writeFile(w.worker, CHATTY_WORKER, { mode: 0o755 });
    const n = w.issues[0]!;
    const s = session(w);
    await s.start(startInput(w, {}, 1));
    // How many lines the worker has printed, as it counts them itself.
    const printed = async (): Promise<number> => Number((await readFile(join(w.planDir, `${n}.count`), "utf8").catch(() => "0")).trim()) || 0;
    await until("the worker to commit its first half and print", async () => (await printed()) >= 3);
    const [worker] = [...(await workerPids(w.planDir)).values()];
    const pid = (await daemonPid(w.env))!;
    process.kill(pid, "SIGKILL");
    await until("the daemon to die", async () => !alive(pid));
    const atKill = await printed();
    await until("the worker to print with no daemon", async () => (await printed()) > atKill + 5);
    assert.ok(alive(worker!), "printing with its reader gone did not kill the worker");
    // The next call restarts the daemon (it left a registration); it adopts the worker at once.
    await until("the worker adopted", async () => (await s.status({ repo: REPO, scope: "worker" })).workers.filter((r) => r.state !== "orphan").length === 1);
    const adoptedAt = await printed();
    await until("the new daemon to follow the worker's output", async () =>
      (await s.logs({ repo: REPO, lane: "worker", tail_lines: 50 })).records.some((r) => Number(/^working (\d+)$/.exec(String(r.msg))?.[1] ?? 0) > adoptedAt),
    );
    await go(w, n);
    await until("a PR", async () => (await pullsFor(w)).length === 1);
    const pr = (await api(w.forge, "GET", repoPath(w.forge, "/pulls?state=all"))).body[0] as { head: { sha: string } };
    const { stdout } = await git(w.planDir, "-C", w.forge.bareRepo, "log", "--format=%s", `main..${pr.head.sha}`);
    assert.deepEqual(stdout.split("\n"), [`fix #${n}`, `first half of #${n}`], "the claim was continued in its worktree (tier 1), not started over");
    assert.deepEqual([...(await workerPids(w.planDir)).keys()], [`${n}.1`], "one worker, one attempt: no second worker");
    const lane = (await s.logs({ repo: REPO, lane: "supervisor", tail_lines: 1000 })).records;
    assert.equal(lane.filter((r) => r.event === "worker_adopted").length, 1);
  });
});
