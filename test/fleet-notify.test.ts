// The notifier (server/fleet/notify.ts) against a real HTTP server on 127.0.0.1: a webhook that
// answers 500 or never answers is retried with backoff while the caller never waits; events
// are deduplicated and rate-limited; mentions go into new comments; the URL is never logged.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Notifier, type NotifySettings } from "../server/fleet/notify.js";
import { tempDirSync } from "./support/forge-fixtures.js";

interface Hook {
  url: string;
  bodies: Array<Record<string, unknown>>;
  hits: number;
  close(): Promise<void>;
}

/** A webhook on loopback whose n-th request (0-based) gets `answer(n)`: a status, or "hang". */
async function webhook(answer: (n: number) => number | "hang"): Promise<Hook> {
  const hook: Hook = { url: "", bodies: [], hits: 0, close: async () => undefined };
  const hanging: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const n = hook.hits++;
      hook.bodies.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>);
      const a = answer(n);
      if (a === "hang") hanging.push(res);
      else res.writeHead(a, { "content-type": "text/plain" }).end(a === 200 ? "ok" : "boom");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  hook.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?secret=s3cr3t-path`;
  hook.close = async () => {
    for (const r of hanging) r.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return hook;
}

function notifier(
  settings: Partial<NotifySettings>,
  extra: { clock?: () => Date; comments?: Array<[number, string]>; logs?: string[]; timeoutMs?: number } = {},
): Notifier {
  const all: NotifySettings = { mention: [], webhook_url: null, dedupe_seconds: 3600, max_per_hour: 20, ...settings };
  return new Notifier({
    repo: "acme/widget",
    settings: () => all,
    clock: extra.clock ?? (() => new Date("2026-01-01T00:00:00Z")),
    comment: async (issue, body) => void extra.comments?.push([issue, body]),
    log: (_level, event, msg) => extra.logs?.push(`${event}: ${msg}`),
    timeoutMs: extra.timeoutMs ?? 5000,
    retryMs: 10,
  });
}

describe("notifications", () => {
  it("a webhook that answers 500, then times out, then 200: retried with backoff, delivered once, the caller never waits", async () => {
    const hook = await webhook((n) => (n === 0 ? 500 : n === 1 ? "hang" : 200));
    try {
      const n = notifier({ webhook_url: hook.url }, { timeoutMs: 300 });
      const returned = n.notify({ event: "escalation", issue: 12, msg: "#12: escalated to ready-for-human: CI kept failing" });
      // notify is synchronous: nothing of the delivery has happened when it returns.
      assert.equal(returned, undefined);
      assert.equal(n.stats().webhook_ok, 0);
      await n.idle();
      assert.equal(hook.hits, 3);
      assert.deepEqual(n.stats(), { told: 1, deduplicated: 0, rate_limited: 0, webhook_ok: 1, webhook_failed: 0, webhook_retries: 2, comments: 0 });
      const body = hook.bodies[2]!;
      assert.equal(body.text, "afk-mcp acme/widget: #12: escalated to ready-for-human: CI kept failing");
      assert.deepEqual([body.event, body.repo, body.issue], ["escalation", "acme/widget", 12]);
    } finally {
      await hook.close();
    }
  });

  it("a webhook that keeps failing is given up after its retries, logged without its URL", async () => {
    const hook = await webhook(() => 503);
    try {
      const logs: string[] = [];
      const n = notifier({ webhook_url: hook.url }, { logs });
      n.notify({ event: "breaker_trip", issue: 3, msg: "circuit breaker tripped" });
      await n.idle();
      assert.equal(hook.hits, 4, "the first try and three retries");
      assert.equal(n.stats().webhook_failed, 1);
      assert.equal(logs.length, 1);
      assert.match(logs[0]!, /notify_failed: the webhook \(notify\.webhook_url\) answered 503; the breaker_trip notification for #3 was given up/);
      assert.ok(!logs.join("\n").includes("s3cr3t") && !logs.join("\n").includes("127.0.0.1"), "the URL is never logged");
      // A 4xx is the request's fault: not retried.
      const four = await webhook(() => 404);
      try {
        const m = notifier({ webhook_url: four.url });
        m.notify({ event: "pause", msg: "usage limit", data: { kind: "quota" } });
        await m.idle();
        assert.equal(four.hits, 1);
      } finally {
        await four.close();
      }
    } finally {
      await hook.close();
    }
  });

  it("deduplicates (per issue, per kind of pause, per trip) and rate-limits; mentions go into new comments", async () => {
    const hook = await webhook(() => 200);
    try {
      let now = Date.parse("2026-01-01T00:00:00Z");
      const comments: Array<[number, string]> = [];
      const n = notifier({ webhook_url: hook.url, mention: ["alice", "bob"], dedupe_seconds: 600, max_per_hour: 6 }, { clock: () => new Date(now), comments });
      // A usage limit seen by three workers is one pause.
      for (const issue of [1, 2, 3]) n.notify({ event: "pause", issue, msg: `#${issue}: usage limit, births paused`, data: { kind: "quota" } });
      n.notify({ event: "pause", issue: 4, msg: "#4: login expired", data: { kind: "auth" } });
      // Events that need no human are not told.
      n.notify({ event: "landing", issue: 5, msg: "merged" });
      await n.idle();
      assert.equal(hook.hits, 2);
      assert.deepEqual(
        comments.map(([i, b]) => [i, /cc @alice @bob/.test(b)]),
        [
          [1, true],
          [4, true],
        ],
      );
      // The escalation's mention goes into its own comment, once; its webhook too.
      assert.match(n.escalationMention(9), /cc @alice @bob: this issue needs a human\./);
      assert.equal(n.escalationMention(9), "", "the same escalation is not mentioned twice");
      n.notify({ event: "escalation", issue: 9, msg: "#9: escalated" });
      await n.idle();
      assert.equal(hook.hits, 3);
      assert.equal(comments.length, 2, "no extra comment for an escalation");
      // Past the dedupe window the same pause is told again; past max_per_hour nothing is.
      now += 601_000;
      n.notify({ event: "pause", issue: 1, msg: "#1: usage limit again", data: { kind: "quota" } });
      n.notify({ event: "escalation", issue: 10, msg: "#10: escalated" });
      n.notify({ event: "escalation", issue: 11, msg: "#11: escalated" });
      await n.idle();
      const s = n.stats();
      assert.equal(s.told, 6, JSON.stringify(s));
      assert.equal(s.rate_limited, 4, JSON.stringify(s));
      assert.equal(s.deduplicated, 5, JSON.stringify(s));
      // An hour later the limit has room again.
      now += 3_600_000;
      n.notify({ event: "escalation", issue: 12, msg: "#12: escalated" });
      await n.idle();
      assert.equal(hook.bodies.at(-1)!.issue, 12);
    } finally {
      await hook.close();
    }
  });

  it("with nothing configured, tells nobody", async () => {
    const n = notifier({});
    assert.equal(n.enabled(), false);
    n.notify({ event: "escalation", issue: 1, msg: "x" });
    assert.equal(n.escalationMention(1), "");
    await n.idle();
    assert.equal(n.stats().told, 0);
  });
});

describe("the fleet's ledger tap", () => {
  it("keeps the supervisor's ledger facts, notifies pauses and breaker trips with a mention comment, and leaves the rest in the lane", async () => {
    const { createRedactor, Ledger } = await import("../server/lanes/index.js");
    const { FleetLedger } = await import("../server/fleet/fleet-ledger.js");
    const dir = tempDirSync("afk-tap-");
    const comments: Array<[number, string]> = [];
    const n = notifier({ mention: ["alice"] }, { comments });
    const ledger = new FleetLedger(new Ledger({ dir, redactor: createRedactor(() => []) }), { instance: "i1", runDir: "/runs", notify: (e) => n.notify(e) });
    const lane: string[] = [];
    const log = ledger.tap((_level, event) => void lane.push(event));
    log("error", "breaker_tripped", "circuit breaker tripped: 3 fast worker deaths", 7, { last_output: { 7: ["boom"] } });
    log("warn", "quota", "#8: usage limit until 14:00", 8, { kind: "quota", runtime: "claude" });
    log("info", "merged", "#9: landed PR #19 as abc", 9, { mergeSha: "m".repeat(40), head: "h".repeat(40), pr: 19, method: "push", verified: true });
    log("info", "claim_lost", "#10: a peer claimed it first", 10);
    log("info", "tick", "a tick", undefined);
    await n.idle();
    assert.deepEqual(lane, ["breaker_tripped", "quota", "merged", "claim_lost", "tick"], "every record still reaches the supervisor lane");
    const records = ledger.ledger.read();
    assert.deepEqual(
      records.map((r) => [r.event, r.issue]),
      [
        ["breaker_trip", 7],
        ["pause", 8],
        ["landing", 9],
      ],
    );
    assert.deepEqual(records[2]!.data, {
      source: "merged",
      pr: 19,
      head: "h".repeat(40),
      method: "push",
      merge_sha: "m".repeat(40),
      gated_sha: "h".repeat(40),
    });
    assert.equal(records[0]!.data!.last_output, undefined, "worker output stays in the supervisor lane");
    assert.deepEqual(
      comments.map(([i, b]) => [i, /cc @alice: the fleet needs a human/.test(b)]),
      [
        [7, true],
        [8, true],
      ],
    );
    ledger.ledger.close();
  });
});
