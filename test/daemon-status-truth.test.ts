// status never contradicts itself or the forge: an issue its last tick merged is not listed as
// mine; "renewed by N session(s)" counts the sessions connected now; workers that outlived their
// daemon (or that the next has yet to adopt) are listed as orphans, not "no live workers". Real
// processes: the built binary as daemon and stdio server, the local forge, quiet scripted workers.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DaemonClient } from "../server/daemon/client.js";
import { afterTick, emptyReport } from "../server/fleet/tick-report.js";
import type { WorkingSet } from "../server/state/rebuild.js";
import { mineClaim } from "./support/snapshots.js";
import { api, repoPath } from "./support/forge-fixtures.js";
import { alive, BASE_CONFIG, daemonPid, daemonTestScope, daemonWorld, until, workerPids, type DaemonWorld } from "./support/daemon-fixtures.js";
import { rawSession } from "./support/raw-stdio.js";

const REPO = "afk/demo";
const { worlds, clients } = daemonTestScope();

function session(w: DaemonWorld, env: Record<string, string> = {}): DaemonClient {
  const c = new DaemonClient({ env: { ...w.env, ...env } });
  clients.push(c);
  return c;
}

/** The status tool's text, over raw stdio on the built binary. */
async function statusText(env: Record<string, string>, args: Record<string, unknown>): Promise<string> {
  const raw = rawSession(env);
  const answer = await raw.answer(raw.send("tools/call", { name: "status", arguments: args }));
  raw.closeStdin();
  await raw.exited();
  return (answer.result?.content ?? []).map((c) => c.text ?? "").join("\n");
}

describe("status tells one story", () => {
  it("afterTick: what a tick ended is not mine, what it dispatched is not dispatchable (one row per move)", () => {
    const set = {
      frontier: { dispatch: [5, 6].map((number) => ({ number, title: "", selector: 0, high: false, attempt: 1 })), excluded: [] },
      mine: [1, 2, 3, 4, 7].map((n) => mineClaim(n)),
    } as unknown as WorkingSet;
    const rows: [string, Partial<ReturnType<typeof emptyReport>>, number[], number[]][] = [
      ["nothing moved: the set as it was", {}, [1, 2, 3, 4, 7], [5, 6]],
      ["merged", { merged: [1, 2] }, [3, 4, 7], [5, 6]],
      ["escalated, closed, released", { escalated: [3], closed: [4], released: [7] }, [1, 2], [5, 6]],
      ["dispatched and reclaimed", { dispatched: [5], reclaimed: [6] }, [1, 2, 3, 4, 7], []],
    ];
    for (const [name, moves, mine, dispatch] of rows) {
      const after = afterTick(set, { ...emptyReport(new Date()), ...moves });
      assert.deepEqual(
        after.mine.map((m) => m.issue),
        mine,
        name,
      );
      assert.deepEqual(
        after.frontier.dispatch.map((d) => d.number),
        dispatch,
        name,
      );
    }
  });

  it("right after a landing, an issue the last tick merged is not listed as mine (every status read while the fleet lands)", async (t) => {
    const w = await daemonWorld(["one", "two"], "commit");
    worlds.push(w);
    const s = session(w);
    await s.start({ repo: REPO, worker_command: `sh ${w.worker}`, target: 2, auto_merge: true, config: BASE_CONFIG });
    let merged = new Set<number>();
    await until(
      "both issues merged",
      async () => {
        const status = await s.status({ repo: REPO });
        const last = /merged ((?:#\d+ ?)+)/.exec(status.last_tick ?? "")?.[1] ?? "";
        const now = [...last.matchAll(/#(\d+)/g)].map((m) => Number(m[1]));
        const mine = (status.plan?.mine ?? []).map((m) => m.issue);
        assert.deepEqual(
          mine.filter((n) => now.includes(n)),
          [],
          `last tick "${status.last_tick}" vs mine ${JSON.stringify(status.plan?.mine)}`,
        );
        merged = new Set([...merged, ...now]);
        const open = await Promise.all(w.issues.map(async (n) => (await api(w.forge, "GET", repoPath(w.forge, `/issues/${n}`))).body.state === "open"));
        return open.every((o) => !o);
      },
      300_000,
    );
    // Whether a read fell between a landing tick and the next is up to the machine's pace (the
    // next tick follows a landing at once): the rows above hold the rule itself, every time.
    t.diagnostic(`status reads that saw a merging tick: issues ${[...merged].join(", ") || "none"}`);
  });

  it("counts only live sessions: one that exited is counted as gone, not as renewing", async () => {
    const w = await daemonWorld([]);
    worlds.push(w);
    const a = session(w);
    const b = session(w);
    const start = { repo: REPO, worker_command: `sh ${w.worker}`, target: 1, config: BASE_CONFIG };
    await a.start(start);
    await b.start(start);
    const both = (await a.status({ repo: REPO })).registrations[0]!;
    assert.deepEqual([...both.sessions].sort(), [a.session, b.session].sort());
    assert.equal(both.sessions_gone, 0);
    await b.close();
    const row = await until("b to count as gone", async () => {
      const r = (await a.status({ repo: REPO })).registrations[0];
      return r && r.sessions_gone === 1 ? r : null;
    });
    assert.deepEqual(row.sessions, [a.session]);
    assert.match(await statusText(w.env, { repo: REPO }), /renewed by 1 live session\(s\) \(1 gone, whose last renewal holds until it lapses\)/);
  });

  it("with the daemon not answering, and right after a crash, still-running workers are listed (as orphans), never 'no live workers'", async () => {
    const w = await daemonWorld(["one"]);
    worlds.push(w);
    const s = session(w);
    await s.start({ repo: REPO, worker_command: `sh ${w.worker}`, target: 1, config: BASE_CONFIG });
    const [worker] = [...(await until("a worker", async () => ((await workerPids(w.planDir)).size === 1 ? workerPids(w.planDir) : null))).values()];
    const pid = (await daemonPid(w.env))!;
    // Stopped (SIGSTOP): a session reads GitHub and the state dir itself, with no daemon.
    process.kill(pid, "SIGSTOP");
    let leader = 0;
    try {
      const quick = { AFK_DAEMON_REPLY_SECONDS: "1" };
      const local = await session(w, quick).status({ repo: REPO, scope: "worker" });
      assert.equal(local.daemon, null);
      // (Its pid is the worker command's shell, the process group's leader; the script runs under it.)
      assert.deepEqual(
        local.workers.map((r) => [r.issue, r.state]),
        [[w.issues[0], "orphan"]],
      );
      leader = local.workers[0]!.pid!;
      assert.ok(alive(leader));
      const text = await statusText({ ...w.env, ...quick }, { repo: REPO, scope: "worker" });
      assert.doesNotMatch(text, /no live workers/);
      assert.match(text, new RegExp(`#${w.issues[0]}  orphan  pid ${leader}[^]*1 orphan\\(s\\): still running, but no fleet of a running daemon watches them`));
    } finally {
      process.kill(pid, "SIGCONT");
    }
    // Killed: the next read restarts it, and lists the worker whether or not it has adopted it yet.
    process.kill(pid, "SIGKILL");
    await until("the daemon gone", async () => !alive(pid));
    const after = await session(w).status({ repo: REPO, scope: "worker" });
    assert.ok(after.daemon && after.daemon.pid !== pid, "a new daemon answered");
    assert.ok(alive(leader), "the worker's shell ran on");
    assert.deepEqual(
      after.workers.map((r) => r.issue),
      [w.issues[0]],
    );
    assert.ok(alive(worker!), "the worker ran on");
  });
});
