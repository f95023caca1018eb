// The fakes composed as a fleet would use them (test/support/fakes.ts): the forge and the ref
// store on one repository, so a merge moves the base the RefStore reads; timestamps from the
// virtual clock; the claim lease over the fake refs in virtual time (one winner, a fence, a
// heartbeat due only once the clock passed its period); a worker program given for a command.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Lease } from "../server/gh/lease.js";
import { FencedError } from "../server/state/claims.js";
import { FakeRefStore } from "./support/fake-refs.js";
import { fakePorts } from "./support/fakes.js";
import { workerScene } from "./support/worker-scene.js";

const SETTINGS = { namespace: "refs/afk", ttlSeconds: 300, heartbeatSeconds: 60 };

describe("the fakes composed", () => {
  test("a merge on the fake forge moves the base the fake RefStore reads; times are the virtual clock's", async () => {
    const { clock, forge, refs } = fakePorts();
    const before = await refs.read("refs/heads/main");
    const head = forge.state.push("afk/1-work", { "work.txt": "done\n" });
    await clock.advance(90_000);
    const pr = await forge.createPull({ title: "work", body: "", head: "afk/1-work", base: "main" });
    assert.equal(pr.updatedAt, "2026-01-01T00:01:30Z");
    const merged = await forge.mergePull(pr.number, { sha: head, method: "squash" });
    assert.notEqual(merged.sha, before);
    assert.equal(await refs.read("refs/heads/main"), merged.sha);
    assert.deepEqual(forge.state.git.changedFiles(before ?? "", merged.sha), ["work.txt"]);
  });

  test("the claim lease over the fake refs: one winner, the loser's fence fails, the heartbeat due only as the virtual clock passes its period", async () => {
    const { clock, repo, refs } = fakePorts();
    const a = new Lease(refs, SETTINGS, "host-a", "alpha", clock.date);
    const b = new Lease(new FakeRefStore(repo), SETTINGS, "host-b", "beta", clock.date);
    const won = await a.claim(42);
    assert.ok(won.won);
    assert.deepEqual(await b.claim(42), { won: false, holder: won.sha });
    await a.fence(42, won.sha);
    await assert.rejects(b.fence(42, "0123456789abcdef0123456789abcdef01234567"), FencedError);
    assert.equal(await a.heartbeat(), true, "the first beat is due at once");
    assert.equal(await a.heartbeat(), false);
    await clock.advance(59_000);
    assert.equal(a.heartbeatDue(), false);
    await clock.advance(1_000);
    assert.equal(await a.heartbeat(), true);
    assert.match((await refs.list("refs/afk/heartbeat/")).map((e) => e.message).join("\n"), /2026-01-01T00:01:00/);
  });

  test("a program given for a command runs as that worker, sleeping on the virtual clock", async () => {
    const { clock, runtime } = fakePorts({
      programs: {
        "agent --work": async (io) => {
          io.out(`read ${io.brief.trim()}`);
          await io.sleep(5_000);
          io.err("finished");
          return 0;
        },
      },
    });
    const { request } = await workerScene(9);
    const lines: string[] = [];
    const handle = await runtime.start(request(1, "agent --work", lines));
    assert.deepEqual(lines, ["stdout:read the brief"]);
    await clock.advance(5_000);
    const exit = await handle.exited;
    assert.deepEqual([exit.code, exit.durationMs, lines], [0, 5_000, ["stdout:read the brief", "stderr:finished"]]);
  });
});
