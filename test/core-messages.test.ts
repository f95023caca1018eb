// The fleet's written formats, one row per case: instance ids, claim and heartbeat messages,
// labels and markers, and links in prose (closing keywords, `## Blocked by`, `prd: #N`).

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  assertInstanceId,
  canonicalSnapshot,
  claimRefFrom,
  formatClaimMessage,
  formatHeartbeatMessage,
  heartbeatFrom,
  isValidInstanceId,
  parseClaimMessage,
  parseHeartbeatMessage,
  type Snapshot,
  type SnapshotIssue,
} from "../server/state/snapshot.js";
import {
  attemptFromLabels,
  attemptLabel,
  BOARD_MARKER,
  fleetBranchName,
  formatVerdict,
  hasLabel,
  isBoardComment,
  latestVerdict,
  openedOnAttempt,
  openedOnLine,
  parseAttemptLabel,
  parseFleetBranch,
  parseVerdict,
} from "../server/state/markers.js";
import { parseBlockedBySection, parseClosingRefs, parsePrdLabel, parsePrdLines } from "../server/state/links.js";

describe("instance ids", () => {
  const rows: Array<[string, unknown, boolean]> = [
    ["nanoid-style lowercase", "k3f9x2qa", true],
    ["single character", "a", true],
    ["digits first", "0abc", true],
    ["hyphens inside", "host-1-fleet", true],
    ["40 characters", "a".repeat(40), true],
    ["41 characters", "a".repeat(41), false],
    ["empty", "", false],
    ["leading hyphen (would read as a git option)", "-rf", false],
    ["uppercase", "Fleet1", false],
    ["underscore (nanoid's default alphabet has it)", "ab_c", false],
    ["slash (would nest refs)", "a/b", false],
    ["whitespace", "a b", false],
    ["newline", "a\nb", false],
    ["not a string", 42, false],
  ];
  for (const [name, id, valid] of rows) {
    it(`${name}: ${valid ? "valid" : "rejected"}`, () => {
      assert.equal(isValidInstanceId(id), valid);
      if (valid) assert.doesNotThrow(() => assertInstanceId(id));
      else assert.throws(() => assertInstanceId(id), /invalid instance id .*lowercase letters, digits and "-"/);
    });
  }
});

describe("claim and heartbeat messages", () => {
  const at = "2025-06-01T12:00:00.000Z";

  it("claim message round-trips", () => {
    const message = formatClaimMessage({ instance: "k3f9", host: "build-box.local", at: new Date(at) });
    assert.equal(message, `afk-claim\ninstance=k3f9\nhost=build-box.local\nat=${at}\n`);
    assert.deepEqual(parseClaimMessage(message), { instance: "k3f9", host: "build-box.local", at });
  });

  it("heartbeat message round-trips and is not a claim", () => {
    const message = formatHeartbeatMessage({ instance: "k3f9", host: "h", at });
    assert.deepEqual(parseHeartbeatMessage(message), { instance: "k3f9", host: "h", at });
    assert.equal(parseClaimMessage(message), null);
    assert.equal(parseHeartbeatMessage(formatClaimMessage({ instance: "k3f9", host: "h", at })), null);
  });

  it("formatting refuses bad input with a clear error", () => {
    assert.throws(() => formatClaimMessage({ instance: "BAD", host: "h", at }), /invalid instance id "BAD"/);
    assert.throws(() => formatClaimMessage({ instance: "ok", host: "h\ninstance=evil", at }), /invalid host/);
    assert.throws(() => formatClaimMessage({ instance: "ok", host: "h", at: "yesterday" }), /invalid time/);
  });

  const rejected: Array<[string, string]> = [
    ["empty", ""],
    ["foreign text", "Merge branch 'main'"],
    ["wrong header", `afk-claims\ninstance=a\nhost=h\nat=${at}`],
    ["missing instance", `afk-claim\nhost=h\nat=${at}`],
    ["missing host", `afk-claim\ninstance=a\nat=${at}`],
    ["missing at", "afk-claim\ninstance=a\nhost=h"],
    ["bad instance id", `afk-claim\ninstance=Evil_One\nhost=h\nat=${at}`],
    ["duplicate key", `afk-claim\ninstance=a\ninstance=b\nhost=h\nat=${at}`],
    ["not a time", "afk-claim\ninstance=a\nhost=h\nat=soon"],
    ["a date that does not exist", "afk-claim\ninstance=a\nhost=h\nat=2025-02-30T00:00:00.000Z"],
    ["local time without zone", "afk-claim\ninstance=a\nhost=h\nat=2025-06-01T12:00:00"],
    ["a line without key=value", `afk-claim\ninstance=a\nhost=h\nat=${at}\ngarbage`],
    ["oversized", `afk-claim\ninstance=a\nhost=h\nat=${at}\nx=${"y".repeat(5000)}`],
  ];
  for (const [name, message] of rejected) {
    it(`rejects ${name}`, () => assert.equal(parseClaimMessage(message), null));
  }

  it("tolerates CRLF, trailing blank lines and unknown keys (forward compatible)", () => {
    assert.deepEqual(parseClaimMessage(`afk-claim\r\ninstance=a\r\nhost=h\r\nat=${at}\r\nversion=2\r\n\r\n`), {
      instance: "a",
      host: "h",
      at,
    });
  });

  it("claimRefFrom keeps an unreadable claim, with null facts", () => {
    assert.deepEqual(claimRefFrom(4, "abc", "whatever"), { issue: 4, sha: "abc", instance: null, host: null, at: null });
  });

  it("heartbeatFrom refuses a message naming another instance than its ref", () => {
    const message = formatHeartbeatMessage({ instance: "a", host: "h", at });
    assert.deepEqual(heartbeatFrom("a", "s", message), { instance: "a", sha: "s", host: "h", at });
    assert.equal(heartbeatFrom("b", "s", message), null);
  });
});

describe("canonicalSnapshot", () => {
  const issue = (number: number, updatedAt: string, title = "t"): SnapshotIssue => ({
    number,
    id: number,
    title,
    body: "",
    labels: [],
    author: "a",
    assignees: [],
    milestone: null,
    blockedBy: [],
    subIssues: [],
    parent: null,
    updatedAt,
  });
  const snap = (issues: SnapshotIssue[]): Snapshot => ({
    repo: "a/b",
    login: "bot",
    defaultBranch: "main",
    base: "main",
    takenAt: "",
    issues,
    pulls: [],
    claims: [
      { issue: 2, sha: "b", instance: "x", host: "h", at: null },
      { issue: 1, sha: "z", instance: "x", host: "h", at: null },
      { issue: 2, sha: "b", instance: "x", host: "h", at: null },
    ],
    heartbeats: [],
    requiredChecks: { contexts: [], strict: false, source: "none", readable: true },
    knownClosed: [5, 3, 5],
  });

  it("a duplicated issue (paging overlap) resolves to its newest version, in any order", () => {
    const a = canonicalSnapshot(snap([issue(2, "2025-01-02", "new"), issue(1, "x"), issue(2, "2025-01-01", "old")]));
    const b = canonicalSnapshot(snap([issue(2, "2025-01-01", "old"), issue(2, "2025-01-02", "new"), issue(1, "x")]));
    assert.deepEqual(a.issues, b.issues);
    assert.deepEqual(
      a.issues.map((i) => [i.number, i.title]),
      [
        [1, "t"],
        [2, "new"],
      ],
    );
  });

  it("a newest-first listing comes out in number order", () => {
    const c = canonicalSnapshot(snap([issue(3, "a"), issue(2, "a"), issue(1, "a")]));
    assert.deepEqual(
      c.issues.map((i) => i.number),
      [1, 2, 3],
    );
  });

  it("sorts claims, drops repeated refs, and uniquifies knownClosed", () => {
    const c = canonicalSnapshot(snap([]));
    assert.deepEqual(
      c.claims.map((x) => [x.issue, x.sha]),
      [
        [1, "z"],
        [2, "b"],
      ],
    );
    assert.deepEqual(c.knownClosed, [3, 5]);
  });
});

describe("labels and markers", () => {
  it("labels compare case-insensitively", () => {
    assert.equal(hasLabel(["Ready-For-Agent"], "ready-for-agent"), true);
    assert.equal(hasLabel(["ready"], "ready-for-agent"), false);
  });

  const attemptRows: Array<[string, string, number | null]> = [
    ["first attempt", "afk-attempt/1", 1],
    ["upper case", "AFK-Attempt/3", 3],
    ["zero", "afk-attempt/0", 0],
    ["leading zero", "afk-attempt/01", null],
    ["negative", "afk-attempt/-1", null],
    ["not a number", "afk-attempt/x", null],
    ["no number", "afk-attempt/", null],
    ["another label", "priority:high", null],
    ["prefix lookalike", "afk-attempts/2", null],
  ];
  for (const [name, label, n] of attemptRows) {
    it(`parseAttemptLabel: ${name}`, () => assert.equal(parseAttemptLabel(label), n));
  }

  const openedRows: Array<[string, string, number | null]> = [
    ["the fleet's own line", `Closes #7\n\n${openedOnLine(7, 2, "k3f9x2qa")}\n\nHead: abc`, 2],
    ["the first attempt", openedOnLine(12, 1, "a"), 1],
    ["a PR opened before the line named its attempt", "Closes #7\n\nOpened by afk-mcp for #7 (instance `a`).", null],
    ["no description", "", null],
    ["attempt 0 is no attempt", "Opened by afk-mcp for #7 on attempt 0 (instance `a`).", null],
    ["not at a line's start (quoted by someone)", "> Opened by afk-mcp for #7 on attempt 3 (instance `a`).", null],
  ];
  for (const [name, body, n] of openedRows) {
    it(`openedOnAttempt: ${name}`, () => assert.equal(openedOnAttempt(body), n));
  }

  it("attemptFromLabels takes the highest; a prefix without slash is accepted", () => {
    assert.equal(attemptFromLabels(["bug", "afk-attempt/1", "afk-attempt/3"]), 3);
    assert.equal(attemptFromLabels(["bug"]), 0);
    assert.equal(attemptFromLabels(["afk-attempt/2"], "afk-attempt"), 2);
    assert.equal(attemptLabel(2), "afk-attempt/2");
    assert.equal(attemptLabel(2, "afk-attempt"), "afk-attempt/2");
  });

  const branchRows: Array<[string, string, number | null]> = [
    ["issue and slug", "afk/12-add-widget", 12],
    ["issue only", "afk/12", 12],
    ["digits then letters is not an issue", "afk/12abc", null],
    ["other prefix", "feature/12-x", null],
    ["nested prefix", "x/afk/12-x", null],
  ];
  for (const [name, ref, n] of branchRows) {
    it(`parseFleetBranch: ${name}`, () => assert.equal(parseFleetBranch(ref), n));
  }

  it("fleetBranchName slugs the title", () => {
    assert.equal(fleetBranchName(12, "Add the Widget (v2)!"), "afk/12-add-the-widget-v2");
    assert.equal(fleetBranchName(12, "???"), "afk/12");
    assert.equal(parseFleetBranch(fleetBranchName(7, "x")), 7);
  });
});

describe("verdict and board markers", () => {
  const bot = "afk-bot";

  it("verdict round-trips when the fleet wrote it", () => {
    const body = `Worker says:\n${formatVerdict({ kind: "blocked", reason: "needs #4 first", blockedBy: [4] })}`;
    assert.deepEqual(parseVerdict({ author: bot, body }, bot), { kind: "blocked", reason: "needs #4 first", blockedBy: [4] });
  });

  it("a reason cannot close the HTML comment", () => {
    const marker = formatVerdict({ kind: "giving-up", reason: "weird --> <!-- text" });
    assert.equal(marker.indexOf("-->"), marker.length - 3);
    assert.deepEqual(parseVerdict({ author: bot, body: marker }, bot), { kind: "giving-up", reason: "weird --> <!-- text" });
  });

  const rows: Array<[string, { author: string; body: string }, string | null]> = [
    ["fleet login, any case", { author: "AFK-Bot", body: '<!-- afk:verdict {"kind":"already-satisfied","reason":"done"} -->' }, "already-satisfied"],
    ["another login is ignored", { author: "mallory", body: '<!-- afk:verdict {"kind":"already-satisfied","reason":"x"} -->' }, null],
    ["empty login is ignored", { author: "", body: '<!-- afk:verdict {"kind":"blocked","reason":"x"} -->' }, null],
    ["unknown kind", { author: bot, body: '<!-- afk:verdict {"kind":"done","reason":"x"} -->' }, null],
    ["bad json", { author: bot, body: "<!-- afk:verdict {kind: blocked} -->" }, null],
    ["no marker", { author: bot, body: "all good" }, null],
  ];
  for (const [name, comment, kind] of rows) {
    it(`parseVerdict: ${name}`, () => assert.equal(parseVerdict(comment, bot)?.kind ?? null, kind));
  }

  it("latestVerdict takes the newest honoured one", () => {
    const v = (kind: string): string => `<!-- afk:verdict {"kind":"${kind}","reason":""} -->`;
    const comments = [
      { author: bot, body: v("blocked"), createdAt: "2025-01-02T00:00:00Z", id: 2 },
      { author: "mallory", body: v("already-satisfied"), createdAt: "2025-01-09T00:00:00Z", id: 9 },
      { author: bot, body: v("giving-up"), createdAt: "2025-01-03T00:00:00Z", id: 3 },
      { author: bot, body: v("already-satisfied"), createdAt: "2025-01-01T00:00:00Z", id: 1 },
    ];
    assert.equal(latestVerdict(comments, bot)?.kind, "giving-up");
    assert.equal(latestVerdict([...comments].reverse(), bot)?.kind, "giving-up");
    assert.equal(latestVerdict([], bot), null);
  });

  it("board comments are the fleet's own, marker-tagged", () => {
    assert.equal(isBoardComment({ author: bot, body: `${BOARD_MARKER}\n- [x] claimed` }, bot), true);
    assert.equal(isBoardComment({ author: "mallory", body: BOARD_MARKER }, bot), false);
    assert.equal(isBoardComment({ author: bot, body: "hello" }, bot), false);
  });
});

describe("links in prose", () => {
  const repo = "acme/widgets";
  const closingRows: Array<[string, string, number[]]> = [
    ["closes", "Closes #12", [12]],
    ["several keywords", "fixes #3, resolves #4", [3, 4]],
    ["every keyword form", "close #1 closed #2 fix #3 fixed #4 resolve #5 resolved #6 fixes #7 resolves #8", [1, 2, 3, 4, 5, 6, 7, 8]],
    ["case-insensitive", "FIXES #9", [9]],
    ["colon after the keyword", "Fixes: #10", [10]],
    ["one keyword names one issue (as on GitHub)", "Closes #3, #4", [3]],
    ["word boundary before", "prefixes #5 and unfixes #6", []],
    ["word boundary after", "fixes #5abc", []],
    ["plain mention", "see #5", []],
    ["same repo qualified", "fixes acme/widgets#11", [11]],
    ["same repo, other case", "fixes ACME/Widgets#11", [11]],
    ["other repo ignored", "fixes other/repo#11", []],
    ["issue URL of this repo", "Fixes https://github.com/acme/widgets/issues/13", [13]],
    ["issue URL of another repo", "Fixes https://github.com/other/repo/issues/13", []],
    ["inside a code fence ignored", "```\nfixes #14\n```\ncloses #15", [15]],
    ["duplicates once", "fixes #2\ncloses #2", [2]],
  ];
  for (const [name, text, expected] of closingRows) {
    it(`parseClosingRefs: ${name}`, () => assert.deepEqual(parseClosingRefs(text, repo), expected));
  }

  const blockedRows: Array<[string, string, number[]]> = [
    ["plain items", "## Blocked by\n- #12\n- #3", [3, 12]],
    ["task list items", "## Blocked by\n- [ ] #12\n- [x] #13", [12, 13]],
    ["stops at the next heading", "## Blocked by\n- #1\n## Notes\n- #2", [1]],
    ["any heading level, any case", "### BLOCKED BY:\n* #7 the widget", [7]],
    ["several refs in one item", "## Blocked by\n- #1, #2 and #3", [1, 2, 3]],
    ["prose in the section is ignored", "## Blocked by\nWe need #9 first.\n- #4", [4]],
    ["no section", "Blocked by #4", []],
    ["other repo ignored", "## Blocked by\n- other/repo#4\n- acme/widgets#5", [5]],
    ["two sections", "## Blocked by\n- #1\n## Other\n## Blocked by\n- #2", [1, 2]],
    ["fenced section is ignored", "```\n## Blocked by\n- #1\n```", []],
    ["CRLF line ends", "## Blocked by\r\n- #1\r\n- [ ] #2\r\n## Next\r\n- #3", [1, 2]],
    ["numbered items", "## Blocked by\n1. #8\n2) #9", [8, 9]],
    ["'blocked by' in prose before the heading", "This is blocked by design.\n## Blocked by\n- #6", [6]],
    ["a heading needs a space after the hashes", "##Blocked by\n- #6", []],
    ["a deeply indented heading is not one", "    ## Blocked by\n- #6", []],
    [
      "many items (beyond the small-sort path)",
      `## Blocked by\n${Array.from({ length: 20 }, (_, i) => `- #${40 - i}`).join("\n")}\n- #40`,
      Array.from({ length: 20 }, (_, i) => 21 + i),
    ],
  ];
  for (const [name, body, expected] of blockedRows) {
    it(`parseBlockedBySection: ${name}`, () => assert.deepEqual(parseBlockedBySection(body, repo), expected));
  }

  const prdRows: Array<[string, string, number[]]> = [
    ["prd line", "Intro\nprd: #42\n", [42]],
    ["upper case, bullet", "- PRD: #42", [42]],
    ["bare number", "prd: 42", [42]],
    ["mid-sentence is not a line", "see prd: #42", []],
    ["other repo", "prd: other/repo#42", []],
    ["several lines, CRLF", "prd: #4\r\n* prd:#2\r\nprd: #4", [2, 4]],
    ["in a code fence", "```\nprd: #4\n```", []],
  ];
  for (const [name, body, expected] of prdRows) {
    it(`parsePrdLines: ${name}`, () => assert.deepEqual(parsePrdLines(body, repo), expected));
  }

  it("parsePrdLabel", () => {
    assert.equal(parsePrdLabel("prd:42"), 42);
    assert.equal(parsePrdLabel("PRD:#42"), 42);
    assert.equal(parsePrdLabel("prd: 42"), 42);
    assert.equal(parsePrdLabel("prd"), null);
    assert.equal(parsePrdLabel("prd:x"), null);
  });
});
