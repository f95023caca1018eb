// The review stage's pieces without a fleet: the review marker's round trip (only the fleet's
// login speaks), the pin checked in a real git repository (a clean sync of the reviewed head
// holds it; a commit pushed after the review, or a merge that sneaks in a change, does not),
// the reviewer's verdict file, and decide's table for a green PR under review.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { PullReview } from "../server/gh/forge.js";
import { isCleanSyncOf } from "../server/landing/review-pin.js";
import { decide, type DecideInput, type ClaimFacts } from "../server/state/decide.js";
import type { MineClaim } from "../server/state/inflight.js";
import type { WorkingSet } from "../server/state/rebuild.js";
import { formatReviewMark, parseReviewMark, pinnedHead, reviewMarks, type ReviewMark } from "../server/state/review-stage.js";
import { readReviewVerdict } from "../server/agent/review-brief.js";
import { commitFile, git, tempDir } from "./support/forge-fixtures.js";
import { mineClaim } from "./support/snapshots.js";

const A = "a".repeat(40);
const B = "b".repeat(40);

function review(author: string, body: string): PullReview {
  return { id: 1, author, association: "OWNER", state: "COMMENTED", body, commitId: A, submittedAt: null };
}

describe("review marks", () => {
  it("round-trip, and only the fleet's own login's marks count", () => {
    const mark: ReviewMark = { verdict: "fix", head: A, round: 2 };
    const body = `${formatReviewMark(mark)}\n**afk-mcp review**`;
    assert.deepEqual(parseReviewMark(body), mark);
    assert.deepEqual(reviewMarks([review("afk-bot", body), review("mallory", formatReviewMark({ verdict: "approve", head: B, round: 3 }))], "afk-bot"), [mark]);
    assert.equal(parseReviewMark('<!-- afk:review {"verdict":"ship-it","head":"x","round":1} -->'), null);
    assert.equal(pinnedHead([mark]), A);
    assert.equal(pinnedHead([mark, { verdict: "none", head: B, round: 3 }]), null, "a later round without a pass unpins");
  });
});

describe("the pin, in a real repository", () => {
  it("holds for a clean sync merge of the reviewed head, not for a later commit or an evil merge", async () => {
    const dir = await tempDir("afk-pin-");
    await git(dir, "init", "--quiet", "-b", "main");
    await commitFile(dir, "base.txt", "base\n");
    await git(dir, "checkout", "--quiet", "-b", "pr");
    const reviewed = await commitFile(dir, "pr.txt", "reviewed\n");
    await git(dir, "checkout", "--quiet", "main");
    await commitFile(dir, "other.txt", "landed meanwhile\n");
    await git(dir, "update-ref", "refs/remotes/origin/main", "main");
    // A clean sync: merge the base into the reviewed head.
    await git(dir, "checkout", "--quiet", "pr");
    await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "merge", "--quiet", "--no-edit", "main");
    const synced = (await git(dir, "rev-parse", "HEAD")).stdout;
    assert.equal(await isCleanSyncOf(dir, reviewed, synced, "main"), true);
    // A commit pushed after the review.
    const later = await commitFile(dir, "sneaky.txt", "not reviewed\n");
    assert.equal(await isCleanSyncOf(dir, reviewed, later, "main"), false);
    // A merge whose tree carries a change nobody reviewed.
    await git(dir, "reset", "--quiet", "--hard", reviewed);
    await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "merge", "--quiet", "--no-commit", "main");
    await writeFile(join(dir, "pr.txt"), "changed inside the merge\n");
    await git(dir, "add", "pr.txt");
    await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "--no-edit");
    const evil = (await git(dir, "rev-parse", "HEAD")).stdout;
    assert.equal(await isCleanSyncOf(dir, reviewed, evil, "main"), false);
    assert.equal(await isCleanSyncOf(dir, reviewed, "f".repeat(40), "main"), false, "an unknown head never holds the pin");
  });
});

describe("the reviewer's verdict file", () => {
  it("reads approve, fix, refute; refuses the rest with a reason", async () => {
    const dir = await tempDir("afk-verdict-");
    const file = join(dir, "verdict.json");
    const read = async (text: string | null) => {
      if (text !== null) await writeFile(file, text);
      return readReviewVerdict(text === null ? join(dir, "absent.json") : file);
    };
    assert.deepEqual(await read('{"verdict":"approve"}'), { verdict: "approve", findings: "" });
    assert.deepEqual(await read('{"verdict":"refute","findings":"wrong case"}'), { verdict: "refute", findings: "wrong case" });
    assert.match(String(await read('{"verdict":"refute"}')), /without findings/);
    assert.match(String(await read('{"verdict":"lgtm"}')), /none of approve, fix, refute/);
    assert.match(String(await read("not json")), /not JSON/);
    assert.match(String(await read(null)), /no verdict file/);
  });
});

// ---- decide ---------------------------------------------------------------------------------

function green(marks: ReviewMark[], head = A): MineClaim {
  return mineClaim(1, { sha: "c".repeat(40), status: "awaiting_merge", pr: 10, head, headRef: "afk/1-x", reviewMarks: marks });
}

function input(claim: MineClaim, local: ClaimFacts = { worker: "none" }, over: Partial<DecideInput> = {}): DecideInput {
  const set = {
    repo: "o/r",
    instance: "me",
    now: "",
    frontier: { dispatch: [], excluded: [] },
    mine: [claim],
    peer_live: [],
    stale: [],
    lease: { fresh: true, heartbeatAt: null },
    cycles: [],
  } as unknown as WorkingSet;
  return {
    set,
    local: new Map([[1, local]]),
    target: 2,
    retry: 1,
    autoMerge: true,
    birthsPaused: false,
    stopping: false,
    idleGraceSeconds: 60,
    review: { maxRounds: 2 },
    ...over,
  };
}

const approveA: ReviewMark = { verdict: "approve", head: A, round: 1 };
const rows: { name: string; in: DecideInput; kinds: string[] }[] = [
  { name: "no review yet: start round 1", in: input(green([])), kinds: ["review"] },
  { name: "review stage off: lands as before", in: input(green([]), { worker: "none" }, { review: null }), kinds: ["land"] },
  { name: "approved at this head: land", in: input(green([approveA])), kinds: ["land"] },
  { name: "approved, the head is a clean sync of it: land", in: input(green([approveA], B), { worker: "none", pinHolds: true }), kinds: ["land"] },
  { name: "approved, a head pushed after the review: review again", in: input(green([approveA], B), { worker: "none", pinHolds: false }), kinds: ["review"] },
  { name: "fixed at this head: land", in: input(green([{ verdict: "fix", head: A, round: 1 }])), kinds: ["land"] },
  {
    name: "max rounds spent without a pass at this head: escalate",
    in: input(green([approveA, { verdict: "none", head: B, round: 2 }], B)),
    kinds: ["escalate"],
  },
  { name: "reviewer running: wait", in: input(green([]), { worker: "running", reviewer: "running", liveness: "active" }), kinds: [] },
  {
    name: "reviewer hung: kill it (and review again next pass)",
    in: input(green([]), { worker: "running", reviewer: "running", liveness: "kill" }),
    kinds: ["kill"],
  },
  {
    name: "reviewer hung again: kill, and the attempt fails",
    in: input(green([]), { worker: "running", reviewer: "running", liveness: "kill", kills: 1 }),
    kinds: ["kill", "retry"],
  },
  { name: "reviewer exited: take its result", in: input(green([]), { worker: "exited", reviewer: "exited" }), kinds: ["review_result"] },
  { name: "births paused: the review waits", in: input(green([]), { worker: "none" }, { birthsPaused: true }), kinds: [] },
];

describe("decide with the review stage", () => {
  for (const row of rows) {
    it(row.name, () => {
      assert.deepEqual(
        decide(row.in).actions.map((a) => a.kind),
        row.kinds,
      );
    });
  }
});
