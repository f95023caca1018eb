// The claim and lease protocol on the local forge, over real HTTP git: concurrent claimers,
// stale reclaim versus live peers, takeover's confirmation gate, and fencing.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { GitRefStore } from "../server/gh/gitrefs.js";
import { FencedError, parseNamespace } from "../server/state/claims.js";
import { Lease } from "../server/gh/lease.js";
import { rebuild } from "../server/state/rebuild.js";
import type { Snapshot } from "../server/state/snapshot.js";
import { DEFAULT_CONFIG } from "../schemas/config.js";
import { startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { snapshotIssue } from "./support/snapshots.js";
import { waitFor } from "./support/wait.js";

const NS = "refs/afk";
const TTL = 600;
const CONFIG = { ...DEFAULT_CONFIG, lease: { ...DEFAULT_CONFIG.lease, ttl_seconds: TTL, heartbeat_seconds: 60 } };

let forge: TestForge;
before(async () => {
  forge = await startTestForge();
});
after(async () => {
  await forge.dispose();
});

async function leaseFor(instance: string, clock: () => Date = () => new Date()): Promise<Lease> {
  const refs = new GitRefStore({ controlDir: join(await tempDir(`afk-${instance}-`), "control.git"), remoteUrl: forge.gitUrl, token: forge.token });
  return new Lease(refs, { namespace: NS, ttlSeconds: TTL, heartbeatSeconds: 60 }, instance, `${instance}-host`, clock);
}

async function observedRefs(): Promise<ReturnType<typeof parseNamespace>> {
  const reader = new GitRefStore({ controlDir: join(await tempDir("afk-reader-"), "control.git"), remoteUrl: forge.gitUrl, token: forge.token });
  return parseNamespace(NS, await reader.list(`${NS}/`));
}

function snapshotOf(refs: ReturnType<typeof parseNamespace>, issues: number[]): Snapshot {
  return {
    repo: "afk/demo",
    login: "afk-bot",
    defaultBranch: "main",
    base: "main",
    takenAt: new Date().toISOString(),
    issues: issues.map((number) => snapshotIssue(number)),
    pulls: [],
    claims: refs.claims,
    heartbeats: refs.heartbeats,
    requiredChecks: { contexts: [], strict: false, source: "none", readable: true },
  };
}

describe("claims on the forge", () => {
  it("two instances claiming the same issues concurrently: exactly one wins each", async () => {
    const [a, b] = await Promise.all([leaseFor("alpha"), leaseFor("bravo")]);
    const issues = [101, 102, 103, 104, 105, 106, 107, 108];
    const results = await Promise.all(
      issues.flatMap((n) => [a.claim(n).then((r) => ({ n, who: "alpha", r })), b.claim(n).then((r) => ({ n, who: "bravo", r }))]),
    );
    for (const n of issues) {
      const winners = results.filter((x) => x.n === n && x.r.won);
      assert.equal(winners.length, 1, `issue ${n}: ${winners.length} winners`);
    }
    const refs = await observedRefs();
    for (const n of issues) {
      const claim = refs.claims.find((c) => c.issue === n);
      const winner = results.find((x) => x.n === n && x.r.won)!;
      assert.equal(claim?.instance, winner.who, `the ref for #${n} names its winner`);
    }
  });

  it("a stale peer's claim is reclaimed; a live peer's is left alone", async () => {
    const longAgo = () => new Date(Date.now() - 3 * TTL * 1000);
    const dead = await leaseFor("deadpeer", longAgo);
    const live = await leaseFor("livepeer");
    const me = await leaseFor("mine");
    assert.equal((await dead.claim(201)).won, true);
    await dead.heartbeat(true);
    assert.equal((await live.claim(202)).won, true);
    await live.heartbeat(true);

    const set = rebuild(snapshotOf(await observedRefs(), [201, 202]), CONFIG, "mine", new Date());
    assert.deepEqual(
      set.stale.map((s) => s.issue).filter((n) => n >= 200 && n < 300),
      [201],
    );
    assert.deepEqual(
      set.peer_live.map((p) => p.issue).filter((n) => n >= 200 && n < 300),
      [202],
    );

    const stale = set.stale.find((s) => s.issue === 201)!;
    const reclaimed = await me.reclaim(201, stale.sha);
    assert.equal(reclaimed.won, true);
    // A second reclaimer from the same observation loses: the ref moved.
    const late = await leaseFor("latecomer");
    assert.equal((await late.reclaim(201, stale.sha)).won, false);

    const after = rebuild(snapshotOf(await observedRefs(), [201, 202]), CONFIG, "mine", new Date());
    assert.ok(
      after.mine.some((m) => m.issue === 201),
      "the reclaimed claim is mine",
    );
    assert.ok(
      after.peer_live.some((p) => p.issue === 202),
      "the live peer keeps its claim",
    );
  });

  it("takeover refuses a fresh lease without confirmation, then takes it with it", async () => {
    const peer = await leaseFor("freshpeer");
    const me = await leaseFor("taker");
    assert.equal((await peer.claim(301)).won, true);
    assert.equal((await peer.claim(302)).won, true);
    await peer.heartbeat(true);
    let refs = await observedRefs();
    const refused = await me.takeover("freshpeer", refs.claims, refs.heartbeats, false);
    assert.equal(refused.action, "confirm");
    refs = await observedRefs();
    assert.deepEqual(
      refs.claims.filter((c) => c.instance === "freshpeer").map((c) => c.issue),
      [301, 302],
      "nothing was taken",
    );

    const taken = await me.takeover("freshpeer", refs.claims, refs.heartbeats, true);
    assert.equal(taken.action, "taken");
    assert.deepEqual(taken.action === "taken" ? taken.taken.map((t) => t.issue) : [], [301, 302]);
    refs = await observedRefs();
    assert.deepEqual(
      refs.claims
        .filter((c) => c.instance === "taker")
        .map((c) => c.issue)
        .sort(),
      [301, 302],
    );
  });

  it("a fenced operation with a superseded claim sha is refused", async () => {
    const zombie = await leaseFor("zombie", () => new Date(Date.now() - 3 * TTL * 1000));
    const rescuer = await leaseFor("rescuer");
    const claimed = await zombie.claim(401);
    assert.ok(claimed.won);
    await zombie.fence(401, claimed.sha); // still ours: passes
    const reclaimed = await rescuer.reclaim(401, claimed.sha);
    assert.ok(reclaimed.won);
    await assert.rejects(zombie.fence(401, claimed.sha), (error: unknown) => error instanceof FencedError && /no longer holds/.test(error.message));
    // The zombie cannot release what is no longer its claim either.
    assert.equal(await zombie.release(401, claimed.sha), false);
    await rescuer.fence(401, reclaimed.sha);
    assert.equal(await rescuer.release(401, reclaimed.sha), true);
    const refs = await observedRefs();
    assert.equal(
      refs.claims.some((c) => c.issue === 401),
      false,
      "released: no phantom lock",
    );
  });

  it("the heartbeat is written only when due", async () => {
    let now = new Date("2026-01-01T00:00:00Z");
    const lease = await leaseFor("beater", () => now);
    assert.equal(await lease.heartbeat(), true, "first beat");
    assert.equal(await lease.heartbeat(), false, "not due yet");
    now = new Date(now.getTime() + 61_000);
    assert.equal(await lease.heartbeat(), true, "due after the cadence");
    const refs = await observedRefs();
    assert.equal(refs.heartbeats.find((h) => h.instance === "beater")?.at, now.toISOString());
  });

  it("concurrent heartbeats (the tick, a landing wait, the keep-alive timer) write one at a time and none fails", async () => {
    let now = new Date("2026-01-01T00:00:00Z");
    const lease = await leaseFor("crowd", () => now);
    assert.equal(await lease.heartbeat(), true);
    now = new Date(now.getTime() + 61_000);
    // Without one write at a time, the CAS writes from one remembered sha would race.
    const wrote = await Promise.all([lease.heartbeat(true), lease.heartbeat(true), lease.heartbeat(), lease.heartbeat(true)]);
    assert.deepEqual(wrote, [true, true, false, true], "forced writes each write; the unforced one finds it fresh");
    assert.equal((await observedRefs()).heartbeats.find((h) => h.instance === "crowd")?.at, now.toISOString());
  });

  it("keepAlive beats on its own timer while nothing else calls heartbeat, and stops when told", async () => {
    const refs = new GitRefStore({ controlDir: join(await tempDir("afk-alive-"), "control.git"), remoteUrl: forge.gitUrl, token: forge.token });
    // A one-second period: the host's tick never runs here, as when a tick is stuck behind a slow call.
    const lease = new Lease(refs, { namespace: NS, ttlSeconds: 3, heartbeatSeconds: 1 }, "alive", "alive-host");
    const failures: unknown[] = [];
    const stop = lease.keepAlive((error) => failures.push(error));
    const seen = new Set<string>();
    await waitFor(
      "three distinct heartbeats written by keepAlive alone",
      async () => {
        const mine = (await observedRefs()).heartbeats.find((h) => h.instance === "alive");
        if (mine) seen.add(mine.sha);
        return seen.size >= 3;
      },
      { deadlineMs: 120_000, explain: () => `${seen.size} distinct heartbeat(s) seen; failures: ${failures.map(String).join("; ")}` },
    );
    stop();
    await lease.retire();
    assert.deepEqual(failures, []);
    // Stopped: nothing writes the heartbeat again after the retire.
    await new Promise((r) => setTimeout(r, 2_500));
    assert.equal(
      (await observedRefs()).heartbeats.find((h) => h.instance === "alive"),
      undefined,
    );
  });
});
