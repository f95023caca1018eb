// Every input has a limit, held first and the same way in the dry run, the real call and the
// daemon: issue numbers per selector, the bytes and the keys of a whole call; a refusal names the
// limit, and an unknown-key refusal is bounded like every other. A message between session and
// daemon over its cap is refused with that reason, never taken for a crash. Arguments that are not
// an object are a JSON-RPC -32602. Real processes: the built binary over raw stdio, the daemon
// over its socket, the local forge over HTTP.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import { DaemonClient } from "../server/daemon/client.js";
import { daemonPaths } from "../server/daemon/paths.js";
import { MAX_CALL_BYTES, MAX_CALL_KEYS, MAX_SELECTOR_ISSUES } from "../schemas/limits.js";
import { BASE_CONFIG, daemonPid, daemonTestScope, daemonWorld } from "./support/daemon-fixtures.js";
import { rawSession, type RawSession } from "./support/raw-stdio.js";

const REPO = "afk/demo";
const { worlds, clients } = daemonTestScope();

async function refusal(session: RawSession, name: string, args: unknown): Promise<string> {
  const answer = await session.answer(session.send("tools/call", { name, arguments: args }));
  assert.equal(answer.result?.isError, true, JSON.stringify(answer).slice(0, 500));
  return answer.result!.content!.map((c) => c.text ?? "").join("\n");
}

const range = (n: number, from = 1) => Array.from({ length: n }, (_, i) => from + i);

describe("input limits", () => {
  it("over stdio: each limit is named, in the dry run and the real start alike, before any daemon starts; unknown keys capped at 10 and counted", async () => {
    const w = await daemonWorld([]);
    worlds.push(w);
    const session = rawSession(w.env);
    const start = { repo: REPO, worker_command: `sh ${w.worker}`, config: BASE_CONFIG };
    for (const dry_run of [true, false]) {
      const what = dry_run ? "dry run" : "start";
      const issues = await refusal(session, "project_start", { ...start, dry_run, selectors: [{ issues: range(MAX_SELECTOR_ISSUES + 1) }] });
      assert.match(issues, /a selector lists at most 1000 issue numbers \(MAX_SELECTOR_ISSUES\)[^\n]* at selectors\[0\]\.issues/, what);
      const bytes = await refusal(session, "project_start", { ...start, dry_run, config: { ...BASE_CONFIG, note: "x".repeat(MAX_CALL_BYTES) } });
      assert.match(bytes, /the arguments are \d+ bytes of JSON, over the limit of 262144 bytes \(256 KiB\) for one call: send fewer or shorter values/, what);
      const keys = await refusal(session, "project_start", {
        ...start,
        dry_run,
        config: Object.fromEntries(range(MAX_CALL_KEYS + 1).map((n) => [`k${n}`, 1])),
      });
      assert.match(keys, /the arguments hold more than 2000 keys, the limit of one call/, what);
    }
    // The 2.1 MB selector of the report, and 100,000 issue numbers: refused by the byte limit, not passed on.
    assert.match(
      await refusal(session, "project_start", { ...start, dry_run: true, selectors: [{ issues: range(100_000) }] }),
      /over the limit of 262144 bytes/,
    );
    // 1,500 unknown keys (under the key limit): the first 10 named, the valid keys once, the rest counted.
    const unknown = await refusal(session, "project_start", { ...start, dry_run: true, ...Object.fromEntries(range(1_500).map((n) => [`zz${n}`, 1])) });
    assert.equal((unknown.match(/unknown key "zz/g) ?? []).length, 10, unknown.slice(0, 400));
    assert.equal((unknown.match(/valid keys:/g) ?? []).length, 1);
    assert.match(unknown, /… and 1490 more unknown key\(s\), 1500 in all/);
    assert.ok(unknown.length < 2_000, `a bounded refusal, got ${unknown.length} characters`);
    assert.equal(await daemonPid(w.env), null, "no refusal started a daemon");
    session.closeStdin();
    await session.exited();
  });

  it("arguments that are not an object: -32602 Invalid params, one line naming what was sent", async () => {
    const w = await daemonWorld([]);
    worlds.push(w);
    const session = rawSession(w.env);
    for (const [args, got] of [
      [[1, 2], "an array of 2 element\\(s\\)"],
      ["x", "a string"],
      [7, "a number"],
      [null, "null"],
    ] as const) {
      const answer = await session.answer(session.send("tools/call", { name: "status", arguments: args }));
      assert.equal(answer.error?.code, -32602, JSON.stringify(answer));
      assert.match(
        answer.error!.message,
        new RegExp(
          `^Invalid params: tools/call status: "arguments" must be an object of named arguments \\(e\\.g\\. \\{"repo": "owner/name"\\}\\), got ${got}$`,
        ),
      );
    }
    // The session goes on answering.
    const ok = await session.answer(session.send("tools/call", { name: "logs", arguments: { lane: "daemon" } }));
    assert.equal(ok.error, undefined);
    session.closeStdin();
    await session.exited();
  });

  it("between session and daemon: the daemon holds the same limits, and a message over 1 MiB is refused with that reason (the session's, then the daemon's), never as a crash", async () => {
    const w = await daemonWorld([]);
    worlds.push(w);
    const plain = new DaemonClient({ env: w.env });
    clients.push(plain);
    await plain.takeover({ repo: REPO, list: true });
    // The daemon's own check, for a session that skips the MCP server's.
    await assert.rejects(
      plain.start({ repo: REPO, worker_command: "true", config: { note: "x".repeat(MAX_CALL_BYTES) } }),
      /^UsageError: start: the arguments are \d+ bytes of JSON, over the limit of 262144 bytes/,
    );
    await assert.rejects(
      plain.start({ repo: REPO, worker_command: "true", selectors: [{ issues: range(MAX_SELECTOR_ISSUES + 1) }] } as never),
      /at most 1000 issue numbers/,
    );
    // A session whose environment alone is over the cap: refused before sending, naming its parts.
    const big = new DaemonClient({ env: { ...w.env, AFK_BIG: "x".repeat(1_100_000) } });
    clients.push(big);
    const refused = await big.start({ repo: REPO, worker_command: "true", config: BASE_CONFIG }).then(
      () => assert.fail("the start was sent"),
      (error: Error) => error.message,
    );
    assert.match(
      refused,
      /^the start request to the afk-mcp daemon is over 1048576 bytes \(1 MiB\), the limit of one message between a session and the daemon \(its arguments \d+ bytes, this session's environment \d+ bytes\): .*a smaller environment/,
    );
    assert.doesNotMatch(refused, /went away|crashed/);
    assert.equal((await big.status({ repo: REPO })).registration, null, "its connection still answers, and nothing was registered");
    // A peer that sends an oversized line anyway hears the reason before the daemon closes the connection.
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(daemonPaths(w.env).socket);
      let text = "";
      socket.on("data", (chunk) => (text += chunk.toString()));
      socket.on("close", () => resolve(text));
      // The rest of the line meets a closed socket (EPIPE): what was said before the close is the answer.
      socket.on("error", () => undefined);
      socket.write(JSON.stringify({ id: 1, method: "status", params: { note: "x".repeat(1_100_000) } }) + "\n");
    });
    assert.match(JSON.parse(answer.split("\n")[0]!).refused, /^a request to the afk-mcp daemon is over 1048576 bytes \(1 MiB\), the limit of one message/);
  });
});
