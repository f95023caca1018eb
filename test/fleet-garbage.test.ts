// Garbage in the fleet's namespace: which refs findGarbage names (one row per case), and the
// collector deleting exactly those on the local forge, over real git, once per period.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { GitRefStore } from "../server/gh/gitrefs.js";
import type { RefEntry } from "../server/gh/refstore.js";
import { GarbageCollector } from "../server/fleet/garbage.js";
import { findGarbage, formatProbeMessage, PROBE_MAX_AGE_SECONDS } from "../server/state/garbage.js";
import { formatClaimMessage, formatHeartbeatMessage } from "../server/state/snapshot.js";
import { startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";

const NS = "refs/afk";
const TTL = 600;
const NOW = new Date("2026-06-01T12:00:00Z");
const ago = (seconds: number): Date => new Date(NOW.getTime() - seconds * 1000);

const beat = (instance: string, at: Date): RefEntry => ({
  ref: `${NS}/heartbeat/${instance}`,
  sha: `b-${instance}`,
  message: formatHeartbeatMessage({ instance, host: "h", at }),
});
const claim = (issue: number, instance: string): RefEntry => ({
  ref: `${NS}/claim/${issue}`,
  sha: `c-${issue}`,
  message: formatClaimMessage({ instance, host: "h", at: ago(10_000) }),
});
const probe = (instance: string, message: string): RefEntry => ({ ref: `${NS}/probe/${instance}`, sha: `p-${instance}`, message });

const rows: { name: string; entries: RefEntry[]; garbage: string[] }[] = [
  {
    name: "a heartbeat expired more than one TTL ago, no claims: garbage",
    entries: [beat("deadone", ago(2 * TTL + 60))],
    garbage: [`${NS}/heartbeat/deadone`],
  },
  { name: "a heartbeat expired less than one TTL ago: kept (its host may be slow)", entries: [beat("lateone", ago(TTL + 60))], garbage: [] },
  {
    name: "a long-dead heartbeat whose instance still holds a claim: kept (takeover needs it)",
    entries: [beat("holder", ago(10 * TTL)), claim(7, "holder")],
    garbage: [],
  },
  { name: "our own heartbeat, however old: kept", entries: [beat("meme", ago(10 * TTL))], garbage: [] },
  {
    name: "a probe older than ten minutes: garbage",
    entries: [probe("oldprobe", formatProbeMessage("oldprobe", ago(PROBE_MAX_AGE_SECONDS + 60)))],
    garbage: [`${NS}/probe/oldprobe`],
  },
  {
    name: "a probe a minute younger than the limit: kept (its host may still be probing)",
    entries: [probe("midprobe", formatProbeMessage("midprobe", ago(PROBE_MAX_AGE_SECONDS - 60)))],
    garbage: [],
  },
  { name: "a fresh probe (a host probing now): kept", entries: [probe("newprobe", formatProbeMessage("newprobe", ago(5)))], garbage: [] },
  { name: "a probe without a time (an older version's): garbage", entries: [probe("legacy", "afk-probe\ninstance=legacy\n")], garbage: [`${NS}/probe/legacy`] },
  { name: "claims are never garbage", entries: [claim(3, "deadone")], garbage: [] },
];

describe("findGarbage", () => {
  for (const row of rows) {
    it(row.name, () => {
      assert.deepEqual(
        findGarbage({ namespace: NS, entries: row.entries, now: NOW, ttlSeconds: TTL, me: "meme" }).map((g) => g.ref),
        row.garbage,
      );
    });
  }
});

describe("GarbageCollector on the local forge", () => {
  let forge: TestForge;
  before(async () => {
    forge = await startTestForge();
  });
  after(async () => {
    await forge.dispose();
  });

  it("deletes dead heartbeats and old probes, keeps everything else, and runs once per period", async () => {
    const refs = new GitRefStore({ controlDir: join(await tempDir("afk-gc-"), "control.git"), remoteUrl: forge.gitUrl, token: forge.token });
    const now = new Date();
    const back = (seconds: number): Date => new Date(now.getTime() - seconds * 1000);
    for (const [ref, message] of [
      [`${NS}/heartbeat/deadone`, formatHeartbeatMessage({ instance: "deadone", host: "gone", at: back(3 * TTL) })],
      [`${NS}/heartbeat/holder`, formatHeartbeatMessage({ instance: "holder", host: "gone", at: back(3 * TTL) })],
      [`${NS}/claim/12`, formatClaimMessage({ instance: "holder", host: "gone", at: back(3 * TTL) })],
      [`${NS}/heartbeat/alive`, formatHeartbeatMessage({ instance: "alive", host: "here", at: back(30) })],
      [`${NS}/probe/killed`, formatProbeMessage("killed", back(2 * 3_600))],
      [`${NS}/probe/busy`, formatProbeMessage("busy", back(1))],
    ] as const) {
      assert.equal((await refs.create(ref, message)).won, true, ref);
    }
    const logged: string[] = [];
    const gc = new GarbageCollector({
      refs,
      namespace: NS,
      instance: "meme",
      ttlSeconds: TTL,
      probeMaxAgeSeconds: PROBE_MAX_AGE_SECONDS,
      everyMs: 60_000,
      clock: () => now,
      log: (_level, event) => logged.push(event),
    });
    assert.deepEqual(await gc.collectIfDue(), [`${NS}/heartbeat/deadone`, `${NS}/probe/killed`]);
    assert.deepEqual(logged, ["garbage_deleted", "garbage_deleted"]);
    const left = (await refs.list(`${NS}/`)).map((e) => e.ref).sort();
    assert.deepEqual(left, [`${NS}/claim/12`, `${NS}/heartbeat/alive`, `${NS}/heartbeat/holder`, `${NS}/probe/busy`]);
    // Within the period it does not even list the namespace again.
    assert.equal((await refs.create(`${NS}/probe/late`, "afk-probe\ninstance=late\n")).won, true);
    assert.deepEqual(await gc.collectIfDue(), []);
    assert.ok((await refs.list(`${NS}/`)).some((e) => e.ref === `${NS}/probe/late`));
  });
});
