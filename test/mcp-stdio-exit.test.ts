// A stdio session ends with its client: the built binary, driven with raw JSON-RPC, exits once its
// stdin closes, whichever tool it called and whether that call was answered or still under way,
// every round; it leaves no connection to the daemon behind (the daemon's idle exit is not held),
// and what it registered lapses, since nobody renews it. Real processes: the built binary as
// session and daemon, the local forge over HTTP, a quiet scripted worker.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { alive, BASE_CONFIG, daemonPid, daemonTestScope, daemonWorld, daemonWritings, until, type DaemonWorld } from "./support/daemon-fixtures.js";
import { rawSession, type RawSession } from "./support/raw-stdio.js";

const REPO = "afk/demo";
const ROUNDS = 2;
const { worlds } = daemonTestScope();

/** One call of each tool, in an order that leaves each something to act on; project_stop last. */
function calls(w: DaemonWorld): [string, Record<string, unknown>][] {
  return [
    ["project_start", { repo: REPO, worker_command: `sh ${w.worker}`, target: 1, config: BASE_CONFIG }],
    ["project_resize", { repo: REPO, target: 2 }],
    ["project_reset", { repo: REPO }],
    ["status", { repo: REPO }],
    ["logs", { repo: REPO, lane: "supervisor", tail_lines: 5 }],
    ["takeover", { repo: REPO, list: true }],
    ["project_stop", { repo: REPO }],
  ];
}

const STRAGGLERS = /still open .* after the client went away/;

/** Ends the session's stdin and waits for its exit: code 0, having said why. */
async function closeAndExit(session: RawSession, what: string): Promise<void> {
  session.closeStdin();
  const exit = await session.exited();
  assert.deepEqual(exit, { code: 0, signal: null }, `${what}: ${session.stderr()}`);
  assert.match(session.stderr(), /stopping \(the client went away\)/, what);
}

describe("a stdio session exits once its stdin closes", () => {
  it("after each tool's answer, every round: nothing left open (no straggler to abandon)", async () => {
    const w = await daemonWorld(["one"]);
    worlds.push(w);
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const [name, args] of calls(w)) {
        const session = rawSession(w.env);
        const answer = await session.answer(session.send("tools/call", { name, arguments: args }));
        assert.equal(answer.error, undefined, `${name}: ${JSON.stringify(answer.error)}`);
        const what = `round ${round}, ${name} answered`;
        await closeAndExit(session, what);
        assert.doesNotMatch(session.stderr(), STRAGGLERS, `${what}: closed cleanly, not abandoned`);
      }
    }
  });

  it("with each tool's call still under way, every round (a resource subscription too): the call is abandoned, the session exits", async () => {
    const w = await daemonWorld(["one"]);
    worlds.push(w);
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const [name, args] of calls(w)) {
        const session = rawSession(w.env);
        await session.answer(0);
        if (round === 2) await session.answer(session.send("resources/subscribe", { uri: `afk://${REPO}/board` }));
        session.send("tools/call", { name, arguments: args });
        await closeAndExit(session, `round ${round}, ${name} in flight`);
      }
    }
  });

  it("leaves the daemon's idle exit free: a closed session holds no connection, and what it started lapses unrenewed", async () => {
    const w = await daemonWorld([]);
    w.env = { ...w.env, AFK_DAEMON_IDLE_SECONDS: "2" };
    worlds.push(w);
    // A registration that lapses 2 s after its last renewal, and a read still under way at the close.
    const session = rawSession(w.env);
    const started = await session.answer(
      session.send("tools/call", {
        name: "project_start",
        arguments: { repo: REPO, worker_command: `sh ${w.worker}`, target: 1, config: { ...BASE_CONFIG, registration: { ttl_seconds: 2 } } },
      }),
    );
    assert.notEqual(started.result?.isError, true, JSON.stringify(started.result));
    const pid = (await daemonPid(w.env))!;
    assert.ok(alive(pid), "the start started a daemon");
    session.send("tools/call", { name: "status", arguments: { repo: REPO } });
    await closeAndExit(session, "a status in flight");
    // Nobody renews the registration: it lapses and drains; then, with no session connected, the daemon leaves.
    await until("the daemon's idle exit", async () => !alive(pid), 300_000);
    const writings = await daemonWritings(w.env);
    assert.match(writings, /registration lapsed \(no session renewed it within 2s\)/);
    assert.match(writings, /idle for .* exiting/);
  });
});
