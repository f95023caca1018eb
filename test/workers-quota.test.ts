// Usage limits and expired logins: every message the agent runtimes print, with the reset time it implies.
// `now` is fixed; times printed without a zone are read in a fixed "local" zone (New York, EDT in
// June), and the expectations are written in UTC.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_AUTH_PATTERNS, DEFAULT_QUOTA_PATTERNS } from "../schemas/config.js";
import {
  detectQuota,
  parseDuration,
  parseResetTime,
  QuotaScanner,
  quotaPause,
  type AgentRuntime,
  type QuotaDetection,
  type QuotaKind,
} from "../server/agent/quota.js";

// Friday 2026-06-05 10:00 UTC = 06:00 in New York (EDT), 12:00 in Warsaw/Rome (CEST),
// 11:00 in Lisbon (WEST), 02:00 PST.
const NOW = new Date("2026-06-05T10:00:00Z");
const LOCAL = "America/New_York";
const matchers = { quotaPatterns: DEFAULT_QUOTA_PATTERNS, authPatterns: DEFAULT_AUTH_PATTERNS, localTimeZone: LOCAL };
const plus = (seconds: number) => new Date(NOW.getTime() + seconds * 1000).toISOString();

interface Row {
  line: string;
  kind: QuotaKind;
  runtime: AgentRuntime;
  /** ISO UTC, or null for "back off". */
  resetAt: string | null;
}

const rows: Row[] = [
  // ---- Claude Code
  { line: "Claude AI usage limit reached|1755615600", kind: "quota", runtime: "claude", resetAt: "2025-08-19T15:00:00.000Z" },
  { line: "Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).", kind: "quota", runtime: "claude", resetAt: "2026-06-05T15:00:00.000Z" },
  { line: "5-hour limit reached ∙ resets 12pm", kind: "quota", runtime: "claude", resetAt: "2026-06-05T16:00:00.000Z" },
  { line: "5-hour limit reached ∙ resets 5am", kind: "quota", runtime: "claude", resetAt: "2026-06-06T09:00:00.000Z" }, // 5am NY already past → tomorrow
  { line: "Opus weekly limit reached ∙ resets Oct 31, 9am", kind: "quota", runtime: "claude", resetAt: "2026-10-31T13:00:00.000Z" },
  { line: "Opus weekly limit reached ∙ resets Jan 2, 9am", kind: "quota", runtime: "claude", resetAt: "2027-01-02T14:00:00.000Z" }, // past → next year (EST)
  { line: "You've hit your limit · resets 1pm (Europe/Lisbon)", kind: "quota", runtime: "claude", resetAt: "2026-06-05T12:00:00.000Z" },
  { line: "You’ve hit your limit · resets 11am (Europe/Lisbon)", kind: "quota", runtime: "claude", resetAt: "2026-06-06T10:00:00.000Z" }, // 11:00 Lisbon is now → tomorrow
  { line: "You've hit your weekly limit · resets Jun 7, 4pm (Europe/Rome)", kind: "quota", runtime: "claude", resetAt: "2026-06-07T14:00:00.000Z" },
  { line: "You've hit your limit · resets 1:30pm (Mars/Olympus_Mons)", kind: "quota", runtime: "claude", resetAt: "2026-06-05T17:30:00.000Z" }, // unknown zone → local
  // measured: the real CLI (2.1.197) answered a plan-limit 429 (RUNTIMES.md): subscriber login, then API key (no reset time: back off)
  { line: "You've hit your session limit · resets 4:19pm (UTC)", kind: "quota", runtime: "claude", resetAt: "2026-06-05T16:19:00.000Z" },
  {
    line: "API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again later.",
    kind: "quota",
    runtime: "claude",
    resetAt: null,
  },
  {
    line: '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1774447200,"rateLimitType":"five_hour"},"session_id":"x"}',
    kind: "quota",
    runtime: "claude",
    resetAt: "2026-03-25T14:00:00.000Z",
  },
  { line: '{"type":"rate_limit_event","rate_limit_info":{"resetsAt":1774447200}}', kind: "quota", runtime: "claude", resetAt: "2026-03-25T14:00:00.000Z" },
  {
    line: '{"type":"result","subtype":"success","is_error":true,"result":"Claude AI usage limit reached|1780675200"}',
    kind: "quota",
    runtime: "claude",
    resetAt: "2026-06-05T16:00:00.000Z",
  },
  // ---- Codex
  {
    line: "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again at 7:10 AM.",
    kind: "quota",
    runtime: "codex",
    resetAt: "2026-06-05T11:10:00.000Z",
  },
  {
    line: "You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at Sep 19th, 2026 7:10 AM.",
    kind: "quota",
    runtime: "codex",
    resetAt: "2026-09-19T11:10:00.000Z",
  },
  {
    line: "You've hit your usage limit. Upgrade to Plus to continue using Codex, or try again in 5 days 22 hours 11 minutes.",
    kind: "quota",
    runtime: "codex",
    resetAt: plus(5 * 86_400 + 22 * 3600 + 11 * 60),
  },
  { line: "You've hit your usage limit. Try again later.", kind: "quota", runtime: "codex", resetAt: null },
  { line: "Quota exceeded. Check your plan and billing details.", kind: "quota", runtime: "codex", resetAt: null },
  { line: "Model gpt-5-codex is at capacity. Please try a different model. Try again in 5m.", kind: "quota", runtime: "codex", resetAt: plus(300) },
  { line: '{"type":"error","message":"You\'ve hit your usage limit. Try again in 1h 30m."}', kind: "quota", runtime: "codex", resetAt: plus(5400) },
  // ---- Gemini CLI
  {
    line: "You have exhausted your capacity on this model. Your quota will reset after 8h44m7s.",
    kind: "quota",
    runtime: "gemini",
    resetAt: plus(8 * 3600 + 44 * 60 + 7),
  },
  {
    line: "Usage limit reached for gemini-2.5-flash-lite. Access resets at 2:55 PM PST.",
    kind: "quota",
    runtime: "gemini",
    resetAt: "2026-06-05T22:55:00.000Z",
  },
  { line: "You have exhausted your daily quota on this model.", kind: "quota", runtime: "gemini", resetAt: null },
  {
    line: '[API Error: {"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}]',
    kind: "quota",
    runtime: "gemini",
    resetAt: null,
  },
  // ---- cursor-agent
  { line: "You've hit your usage limit", kind: "quota", runtime: "unknown", resetAt: null }, // codex and cursor both print it
  { line: "Your usage limits will reset when your monthly cycle ends on 11/17/2025.", kind: "quota", runtime: "cursor", resetAt: "2025-11-17T05:00:00.000Z" },
  // ---- aider (litellm)
  {
    line: "litellm.RateLimitError: VertexAIException - Resource has been exhausted (e.g. check quota). RESOURCE_EXHAUSTED",
    kind: "quota",
    runtime: "aider",
    resetAt: null,
  },
  {
    line: "litellm.RateLimitError: RateLimitError: OpenAIException - You exceeded your current quota, please check your plan and billing details.",
    kind: "quota",
    runtime: "aider",
    resetAt: null,
  },
  {
    line: 'litellm.RateLimitError: geminiException - {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "44s"}]}}',
    kind: "quota",
    runtime: "aider",
    resetAt: plus(44),
  },
  // ---- expired logins
  {
    line: 'API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"OAuth token has expired. Please obtain a new token or refresh your existing token."}}',
    kind: "auth",
    runtime: "unknown",
    resetAt: null,
  },
  { line: "Not logged in · Please run /login", kind: "auth", runtime: "claude", resetAt: null },
  { line: "Invalid API key · Please run /login", kind: "auth", runtime: "claude", resetAt: null },
];

describe("detectQuota: every message the agent runtimes print", () => {
  for (const row of rows) {
    it(row.line.slice(0, 90), () => {
      const d = detectQuota(row.line, matchers, NOW);
      assert.ok(d, "detected");
      assert.equal(d.kind, row.kind);
      assert.equal(d.runtime, row.runtime);
      assert.equal(d.resetAt?.toISOString() ?? null, row.resetAt);
      assert.ok(d.text.length <= 501);
    });
  }

  it("a named zone does not depend on the host's zone", () => {
    for (const zone of ["UTC", "Asia/Tokyo", "America/Los_Angeles"]) {
      const d = detectQuota("You've hit your weekly limit · resets Jun 7, 4pm (Europe/Rome)", { ...matchers, localTimeZone: zone }, NOW);
      assert.equal(d?.resetAt?.toISOString(), "2026-06-07T14:00:00.000Z");
    }
    // An unzoned time follows the local zone.
    const tokyo = detectQuota("5-hour limit reached ∙ resets 12pm", { ...matchers, localTimeZone: "Asia/Tokyo" }, NOW);
    assert.equal(tokyo?.resetAt?.toISOString(), "2026-06-06T03:00:00.000Z"); // 19:00 in Tokyo now → tomorrow noon
  });

  it("uses the host's zone when none is configured", () => {
    const d = detectQuota("5-hour limit reached ∙ resets 12pm", { quotaPatterns: DEFAULT_QUOTA_PATTERNS, authPatterns: DEFAULT_AUTH_PATTERNS }, NOW);
    const host = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const again = detectQuota("5-hour limit reached ∙ resets 12pm", { ...matchers, localTimeZone: host }, NOW);
    assert.equal(d?.resetAt?.toISOString(), again?.resetAt?.toISOString());
  });

  const negatives: Array<[string, string]> = [
    ["ordinary output", "All 42 tests passed."],
    ["an informational rate-limit event", '{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","resetsAt":1774447200}}'],
    ["a warning rate-limit event", '{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1774447200}}'],
    [
      "a tool result quoting a limit message (the agent read a file)",
      '{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"const line = \\"Claude AI usage limit reached|1755615600\\";"}]}}',
    ],
    [
      "model text quoting one",
      '{"type":"assistant","message":{"model":"claude-opus-4","content":[{"type":"text","text":"The test checks You\'ve hit your usage limit."}]}}',
    ],
    [
      "codex command output quoting one",
      '{"type":"item.completed","item":{"type":"command_execution","aggregated_output":"Quota exceeded. Check your plan and billing details."}}',
    ],
  ];
  for (const [name, line] of negatives) {
    it(`no detection: ${name}`, () => assert.equal(detectQuota(line, matchers, NOW), null));
  }

  it("Claude's synthetic assistant message is not treated as echo", () => {
    const line = '{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"Claude AI usage limit reached|1780675200"}]}}';
    assert.equal(detectQuota(line, matchers, NOW)?.resetAt?.toISOString(), "2026-06-05T16:00:00.000Z");
  });

  it("strips terminal escapes and honours custom patterns", () => {
    const d = detectQuota("\u001b[31mClaude AI usage limit reached|1755615600\u001b[0m", matchers, NOW);
    assert.equal(d?.text, "Claude AI usage limit reached|1755615600");
    const custom = { quotaPatterns: ["my proxy says no"], authPatterns: [], localTimeZone: LOCAL };
    assert.equal(detectQuota("my proxy says no, retry in 30s", custom, NOW)?.resetAt?.toISOString(), plus(30));
    assert.equal(detectQuota("Claude AI usage limit reached|1755615600", custom, NOW), null);
  });
});

describe("reset-time helpers", () => {
  it("parseDuration", () => {
    assert.equal(parseDuration("5 days 22 hours 11 minutes"), 5 * 86_400 + 22 * 3600 + 11 * 60);
    assert.equal(parseDuration("8h44m7s"), 8 * 3600 + 44 * 60 + 7);
    assert.equal(parseDuration("5m"), 300);
    assert.equal(parseDuration("43.5s"), 43.5);
    assert.equal(parseDuration("soon"), null);
  });

  it("parseResetTime handles a.m./p.m., 24-hour clocks, Retry-After, and refuses bare numbers", () => {
    assert.equal(parseResetTime("try again at 7:10 p.m.", NOW, LOCAL)?.toISOString(), "2026-06-05T23:10:00.000Z");
    assert.equal(parseResetTime("resets at 17:00 (UTC)", NOW, LOCAL)?.toISOString(), "2026-06-05T17:00:00.000Z");
    assert.equal(parseResetTime("Retry-After: 120", NOW, LOCAL)?.toISOString(), plus(120));
    assert.equal(parseResetTime("resets 5 times a day", NOW, LOCAL), null);
    assert.equal(parseResetTime("try again later", NOW, LOCAL), null);
  });

  it("crosses a DST change by the calendar, not by 24 hours", () => {
    // 2026-03-08 is the US spring-forward day: at 06:30 EST on the 7th, "resets 5am" is tomorrow 05:00 EDT.
    const before = new Date("2026-03-07T11:30:00Z");
    assert.equal(parseResetTime("resets 5am", before, LOCAL)?.toISOString(), "2026-03-08T09:00:00.000Z");
  });
});

describe("quotaPause", () => {
  const detection = (resetAt: string | null, kind: QuotaKind = "quota"): QuotaDetection => ({
    kind,
    runtime: "claude",
    resetAt: resetAt ? new Date(resetAt) : null,
    text: "x",
  });

  it("waits for a future reset plus a minute of slack", () => {
    const p = quotaPause(detection("2026-06-05T15:00:00Z"), NOW, { backoffSeconds: 900 });
    assert.deepEqual([p.basis, p.until?.toISOString()], ["reset", "2026-06-05T15:01:00.000Z"]);
  });

  it("backs off when the reset is unknown or already past, doubling per consecutive detection", () => {
    assert.equal(quotaPause(detection(null), NOW, { backoffSeconds: 900 }).until?.toISOString(), plus(900));
    assert.equal(quotaPause(detection("2025-08-19T15:00:00Z"), NOW, { backoffSeconds: 900 }).basis, "backoff");
    assert.equal(quotaPause(detection(null), NOW, { backoffSeconds: 900, consecutive: 3 }).until?.toISOString(), plus(3600));
    assert.equal(quotaPause(detection(null), NOW, { backoffSeconds: 900, consecutive: 99, maxPauseSeconds: 7200 }).until?.toISOString(), plus(7200));
  });

  it("caps a far reset (cursor's monthly cycle) and says so", () => {
    const p = quotaPause(detection("2026-07-01T00:00:00Z"), NOW, { backoffSeconds: 900, maxPauseSeconds: 86_400 });
    assert.deepEqual([p.basis, p.until?.toISOString(), p.resetAt?.toISOString()], ["capped", plus(86_400), "2026-07-01T00:00:00.000Z"]);
  });

  it("an expired login pauses until an operator acts", () => {
    assert.deepEqual(quotaPause(detection(null, "auth"), NOW, { backoffSeconds: 900 }), { until: null, basis: "operator", resetAt: null });
  });
});

describe("QuotaScanner", () => {
  it("takes aider's retryDelay from a later line of the same error", () => {
    const scanner = new QuotaScanner(matchers);
    const lines = [
      "Running tests...",
      "litellm.RateLimitError: VertexAIException - {",
      '  "error": {',
      '    "code": 429,',
      '    "status": "RESOURCE_EXHAUSTED",',
      '    "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",',
      '      "retryDelay": "44s"',
    ];
    const found = lines.map((l) => scanner.push(l, NOW)).filter((d) => d !== null);
    assert.equal(found.length, 2);
    assert.equal(found[0]!.resetAt, null);
    assert.equal(found[1]!.refined, true);
    assert.equal(found[1]!.resetAt?.toISOString(), plus(44));
    // Nothing pending any more.
    assert.equal(scanner.push('"retryDelay": "10s"', NOW), null);
  });

  it("forgets a pending detection after the lookahead", () => {
    const scanner = new QuotaScanner(matchers, 2);
    scanner.push("You have exhausted your daily quota on this model.", NOW);
    scanner.push("a", NOW);
    scanner.push("b", NOW);
    assert.equal(scanner.push('"retryDelay": "44s"', NOW), null);
  });
});
