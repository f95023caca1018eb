// Runtime failures that are not usage limits: logins, refusals, lost networks. Every text the
// real CLIs print (test/support/runtime-texts.ts says which were measured and which reported)
// is recognised as the right kind, by the runtime that printed it, with a fix that names it.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_CONFIG } from "../schemas/config.js";
import { detectQuota, QuotaScanner, quotaPause, NETWORK_REPEATS, type QuotaMatchers } from "../server/agent/quota.js";
import { OutputTail, pauseReason } from "../server/agent/runtime-failures.js";
import { fenced } from "../server/text/fenced.js";
import { ORDINARY_TEXTS, RUNTIME_TEXTS } from "./support/runtime-texts.js";

const NOW = new Date("2026-12-01T12:00:00Z");
const w = DEFAULT_CONFIG.worker;
const matchers: QuotaMatchers = {
  quotaPatterns: w.quota_patterns,
  authPatterns: w.auth_patterns,
  refusalPatterns: w.refusal_patterns,
  networkPatterns: w.network_patterns,
};

describe("runtime failures in worker output", () => {
  for (const t of RUNTIME_TEXTS) {
    it(`${t.runtime}, ${t.situation} (${t.source}) → ${t.kind}`, () => {
      const d = detectQuota(t.line, matchers, NOW);
      assert.ok(d, `not recognised: ${t.line}`);
      assert.equal(d.kind, t.kind);
      assert.equal(d.runtime, t.runtime);
      assert.equal(d.resetAt, null);
    });
  }

  it("ordinary output, and an agent echoing these texts in a tool result, pause nothing", () => {
    for (const line of ORDINARY_TEXTS) assert.equal(detectQuota(line, matchers, NOW), null, line);
  });

  it("logins and refusals wait for an operator; a lost network backs off", () => {
    const pause = (kind: "auth" | "refusal" | "network") => quotaPause({ kind, runtime: "codex", resetAt: null, text: "x" }, NOW, { backoffSeconds: 300 });
    assert.deepEqual(pause("auth"), { until: null, basis: "operator", resetAt: null });
    assert.deepEqual(pause("refusal"), { until: null, basis: "operator", resetAt: null });
    const network = pause("network");
    assert.equal(network.basis, "backoff");
    assert.equal(network.until?.toISOString(), "2026-12-01T12:05:00.000Z");
  });

  it("a network failure counts once it repeats: one blip is retried by the runtime itself", () => {
    const scanner = new QuotaScanner(matchers);
    const line = RUNTIME_TEXTS.find((t) => t.kind === "network" && t.runtime === "codex")!.line;
    const seen = Array.from({ length: NETWORK_REPEATS + 3 }, () => scanner.push(line, NOW));
    assert.deepEqual(
      seen.map((d) => d?.kind ?? null),
      seen.map((_, i) => (i === NETWORK_REPEATS - 1 ? "network" : null)),
      "one event, on the third line",
    );
    // A Codex 401 arrives inside a "Reconnecting..." line: the first one is a login problem, at once.
    const auth = new QuotaScanner(matchers).push(RUNTIME_TEXTS.find((t) => t.kind === "auth" && t.runtime === "codex")!.line, NOW);
    assert.equal(auth?.kind, "auth");
  });

  it("the reason names the runtime's own fix and quotes its words", () => {
    const detect = (runtime: string, kind: string) => detectQuota(RUNTIME_TEXTS.find((t) => t.runtime === runtime && t.kind === kind)!.line, matchers, NOW)!;
    assert.match(pauseReason(detect("codex", "auth"), null), /unexpected status 401 Unauthorized.*codex login.*project_reset/);
    assert.match(pauseReason(detect("claude", "auth"), null), /Not logged in · Please run \/login.*\/login.*ANTHROPIC_API_KEY/);
    assert.match(pauseReason(detect("gemini", "auth"), null), /GEMINI_API_KEY/);
    assert.match(pauseReason(detect("cursor", "auth"), null), /cursor-agent login/);
    assert.match(pauseReason(detect("aider", "auth"), null), /worker\.env_passthrough/);
    assert.match(pauseReason(detect("claude", "refusal"), null), /root\/sudo.*normal user.*IS_SANDBOX=1/);
    const until = new Date("2026-12-01T12:05:00Z");
    assert.match(pauseReason(detect("codex", "network"), until), /Reconnecting\.\.\..*network, DNS and proxy; births paused until 2026-12-01T12:05:00.000Z/);
  });

  it("keeps the last lines, bounded, without escapes; a fence no line can close", () => {
    const tail = new OutputTail(3, 10);
    for (const line of ["one", "", "\u001b[31mtwo\u001b[0m", "three", "a very long line indeed"]) tail.push(line);
    assert.deepEqual(tail.last(), ["two", "three", "a very lon…"]);
    const block = fenced(["```", "x ```` y"].join("\n"), "text");
    assert.ok(block.startsWith("`````text\n") && block.endsWith("\n`````"), block);
  });
});
