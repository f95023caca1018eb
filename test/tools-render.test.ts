// The text a client shows of status (several show the model only the text): one renderer from
// the structured result, its head held to an exact snapshot, and each field that matters to a
// human or a model said in it — registration, births paused and why, merges, last and next
// tick, where the plan comes from; and logs' lines.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { renderStatusHead } from "../server/tools/render.js";
import { renderTakeover } from "../server/tools/takeover.js";
import { renderLogs } from "../server/tools/logs.js";
import { renderBoard } from "../server/tools/resources.js";
import { renderStatus } from "../server/tools/status.js";
import { locateIssue, overview } from "../server/host/views.js";
import type { StatusResult } from "../server/host/api.js";
import { pagePlan, renderPlan } from "../server/host/plan.js";
import type { PlanOutput } from "../schemas/tools.js";

const paused: StatusResult = {
  scope: "worker",
  registration: {
    repo: "afk/demo",
    instance: "23xrntgsfx9t",
    target: 3,
    worker_command: "exit 3",
    engine: null,
    base: "main",
    auto_merge: false,
    merges: "held",
    started_at: "2026-12-01T18:57:24.643Z",
  },
  plan: null,
  issue: null,
  workers: [],
  births: { paused: true, reason: "circuit breaker tripped after 3 fast worker deaths: fix the worker command, then project_reset", until: null },
  spend: null,
  eta: null,
  last_tick: "2026-12-01T18:57:29.279Z: 0 in flight; 0 worker(s); 8 ready; births held: births are paused",
  registrations: [],
  daemon: null,
  next_tick: "2026-12-01T19:22:29.499Z",
  source: { from: "fleet_tick", at: "2026-12-01T18:57:29.279Z", age_seconds: 15.6 },
};

describe("status text", () => {
  it("a paused fleet: the snapshot of its head", () => {
    assert.equal(
      renderStatusHead(paused).join("\n"),
      [
        "running: afk/demo, instance 23xrntgsfx9t, target 3 worker(s), base main, since 2026-12-01T18:57:24.643Z",
        "merges: HELD (started without auto_merge: green PRs wait for a human)",
        "births: PAUSED: circuit breaker tripped after 3 fast worker deaths: fix the worker command, then project_reset",
        "last tick: 2026-12-01T18:57:29.279Z: 0 in flight; 0 worker(s); 8 ready; births held: births are paused",
        "next tick: 2026-12-01T19:22:29.499Z",
        "plan: from the fleet's last tick, 15.6s old",
      ].join("\n"),
    );
  });

  it("says each state the structured content can hold: a usage-limit pause with its end, merges authorized, births open, a plan read now, no fleet", () => {
    const quota = renderStatusHead({ ...paused, births: { paused: true, reason: "usage limit reached", until: "2026-12-01T20:00:00.000Z" } }).join("\n");
    assert.match(quota, /^births: PAUSED: usage limit reached \(until 2026-12-01T20:00:00.000Z\)$/m);
    const authorized = renderStatusHead({
      ...paused,
      registration: { ...paused.registration!, auto_merge: true, merges: "authorized" },
      births: { paused: false, reason: null, until: null },
    }).join("\n");
    assert.match(authorized, /^merges: authorized/m);
    assert.match(authorized, /^births: open$/m);
    const gathered = renderStatusHead({ ...paused, source: { from: "gathered", at: "2026-12-01T19:00:00.000Z", age_seconds: 0 } }).join("\n");
    assert.match(gathered, /^plan: read from GitHub now \(2026-12-01T19:00:00.000Z\)$/m);
    const none = renderStatusHead({ ...paused, registration: null, births: null, last_tick: null, next_tick: null, source: null });
    assert.deepEqual(none, ["not running on this host (project_start starts it)"]);
  });
});

describe("takeover text", () => {
  const row = {
    instance: "abc123",
    host: "laptop",
    claims: [3, 7],
    claim_count: 2,
    heartbeat_at: "2026-12-01T19:00:00.000Z",
    heartbeat_age_seconds: 12,
    fresh: true,
    is_me: true,
    this_daemon: true,
  };
  it("marks this machine's daemon and lists each instance's claims, as the structured rows do", () => {
    const text = renderTakeover({
      action: "list",
      instances: [
        row,
        { ...row, instance: "peer9", host: null, claims: [], claim_count: 0, heartbeat_age_seconds: null, fresh: false, is_me: false, this_daemon: false },
      ],
      from: null,
      taken: [],
      lost: [],
      message: "2 instance(s)",
    });
    assert.equal(
      text,
      [
        "2 instance(s)",
        "  abc123 (this machine's daemon)  host laptop  claims 2 (#3, #7)  heartbeat 12s ago  fresh",
        "  peer9  host ?  claims 0  heartbeat none  stale",
      ].join("\n"),
    );
    const mine = renderTakeover({ action: "list", instances: [{ ...row, this_daemon: false }], from: null, taken: [], lost: [], message: "1 instance(s)" });
    assert.match(mine, /abc123 \(this instance\)/);
  });
  it("names the issues taken, and cuts a long list with a count", () => {
    const taken = Array.from({ length: 25 }, (_, i) => ({ issue: i + 1, sha: "0".repeat(40) }));
    const text = renderTakeover({ action: "taken", instances: [], from: "peer9", taken, lost: [], message: "took 25 claim(s) from peer9" });
    assert.match(text, /^taken: #1, #2, .*#20 and 5 more$/m);
  });
});

describe("plan text: every section", () => {
  // A running fleet's plan with something in every list: the text says each row the structured
  // content holds (a summary page: 2 of 3 dispatchable, the excluded rows counted by reason).
  const plan: PlanOutput = {
    repo: "afk/demo",
    instance: "i1",
    login: "afk-bot",
    base: "main",
    now: "2026-12-02T00:00:00.000Z",
    preconditions: [
      { name: "repository", ok: true, severity: "ok", message: "afk/demo is reachable (default branch main)" },
      { name: "gate", ok: true, severity: "warn", message: 'no checks are required on "main"' },
      { name: "ready_label", ok: false, severity: "error", message: 'label "ready-for-agent" is missing: create it' },
    ],
    ready: false,
    dispatch: [
      { number: 7, title: "Fix the parser", selector: 0, high: true, attempt: 0 },
      { number: 9, title: "Add a flag", selector: 1, high: false, attempt: 2, route: { engine: "claude", model: "opus", from: "ladder rung 1" } },
    ],
    held_for_overlap: [{ issue: 11, paths: ["src/a.ts", "src/b.ts"], instead: 7 }],
    conflict_holds: [{ issue: 12, pr: 40, files: ["src/a.ts"], waiting_for: [13, 14], held_seconds: 30, max_seconds: 600 }],
    conflicting_pairs: [{ a: 13, b: 14, pr_a: 41, pr_b: null, files: ["README.md"] }],
    excluded: [],
    named: [
      { number: 99, selector: 0, reason: "closed", text: "closed" },
      { number: 5, selector: 0, reason: "not_ready", text: "not ready: no label ready-for-agent; an open blocker of #3", blocks: [3] },
    ],
    run: {
      command: "claude -p",
      engines: [
        { name: "claude", path: "/usr/bin/claude", version: "2.1.0", provider: [], model: "sonnet", budget: "$2 per attempt, passed as --max-budget-usd" },
      ],
      runtime: {
        name: "sandbox",
        unconfined: false,
        writable: ["the issue's worktree"],
        hidden: ["/home/u"],
        read_only: ["/ (everything not hidden)"],
        hosts: ["api.anthropic.com"],
        text: "runtime sandbox (bubblewrap)",
      },
    },
    mine: [
      { issue: 13, sha: "a1", status: "awaiting_ci", review: null, pr: 41, attempt: 1, failing: [], pending: ["build", "test"], issue_open: true },
      { issue: 15, sha: "a2", status: "failure", review: null, pr: 43, attempt: 3, failing: ["test"], pending: [], issue_open: true },
      {
        issue: 16,
        sha: "a3",
        status: "awaiting_review",
        review: "a human must approve PR #44",
        pr: 44,
        attempt: 1,
        failing: [],
        pending: [],
        issue_open: true,
      },
    ],
    peers_live: [{ issue: 20, instance: "peer1", host: "box", sha: "b1", alive_at: "2026-12-02T00:00:00.000Z", stale_reason: null }],
    peers_stale: [{ issue: 21, instance: "peer2", host: null, sha: "b2", alive_at: null, stale_reason: "no heartbeat for 2h" }],
    cycles: [[30, 31]],
    stragglers: { unlabelled: 4, needs_triage: 1, needs_info: 0 },
    rate_limit: { limit: 5000, remaining: 4990, reset: 0, used: 10 },
    requests: { total: 12, counted: 9, not_modified: 3 },
    fingerprint: "f",
    totals: { dispatch: 3, excluded: 5, needs_human: 3, named: 2 },
    excluded_by_reason: { epic: 2, human_reserved: 1, cycle: 2 },
    needs_human: [
      { number: 22, why: "reserved for humans: labelled ready-for-human" },
      { number: 30, why: "in a dependency cycle: #30 -> #31 -> #30" },
      { number: 15, why: "PR #43 failed: test" },
    ],
    page: { detail: false, offset: 0, next_cursor: null },
  };
  it("the snapshot of a running fleet's plan", () => {
    assert.equal(
      renderPlan(plan, true),
      [
        "plan for afk/demo (base main, as afk-bot, instance i1)",
        "",
        "will run:",
        "  command: claude -p",
        "  engine claude: /usr/bin/claude, version 2.1.0, model sonnet, provider its own API, budget $2 per attempt, passed as --max-budget-usd",
        "  runtime sandbox (bubblewrap)",
        "    writable: the issue's worktree",
        "    read-only: / (everything not hidden)",
        "    hidden: /home/u",
        "    hosts: api.anthropic.com",
        "",
        "preconditions:",
        "  ok    repository: afk/demo is reachable (default branch main)",
        '  warn  gate: no checks are required on "main"',
        '  FAIL  ready_label: label "ready-for-agent" is missing: create it',
        "",
        "dispatch (2 of 3, in order):",
        "  #7  Fix the parser  [high]",
        "  #9  Add a flag  [selector 2]  [attempt 2]  -> claude opus (ladder rung 1)",
        "  held back for overlap: #11 (in-flight work changes src/a.ts, src/b.ts); #7 started first",
        "  conflict retry waiting: #12 (PR #40 conflicts in src/a.ts) until #13, #14 landed, at most 600 s (30 s so far)",
        "  conflicting pair: #13 and #14 in README.md",
        "",
        "excluded (5: 2 epic, 1 human_reserved, 2 cycle):",
        "  (status {detail: true} lists them)",
        "",
        "named but not run now (2, in the selectors' order):",
        "  #99  closed  [selector 1]",
        "  #5  not ready: no label ready-for-agent; an open blocker of #3",
        "",
        "needs a human (3):",
        "  #22  reserved for humans: labelled ready-for-human",
        "  #30  in a dependency cycle: #30 -> #31 -> #30",
        "  #15  PR #43 failed: test",
        "",
        "mine (3):",
        "  #13  awaiting_ci  PR #41  waiting for: build, test",
        "  #15  failure  PR #43  failing: test",
        "  #16  awaiting_review  PR #44  a human must approve PR #44",
        "",
        "peers:",
        "  #20  live  peer1@box",
        "  #21  stale (no heartbeat for 2h)  peer2@?",
        "cycle: #30 -> #31",
        "",
        "stragglers: 4 unlabelled, 1 needs-triage, 0 needs-info",
        "",
        "rate limit: 4990/5000 remaining",
        "requests for this answer: 12 (9 counted, 3 answered 304)",
        "not ready: fix the failed preconditions above",
      ].join("\n"),
    );
  });
  it("where one issue stands: a claim says its failure and its note; then peers, dispatch, named, not open", () => {
    const where = (n: number, failed: { summary: string } | null = null, notice: string | null = null) => {
      const at = locateIssue(plan, n, failed, notice);
      return `${at.where}: ${at.detail}`;
    };
    assert.equal(where(13), "mine: claimed by this instance: awaiting_ci (PR #41); waiting for: build, test");
    assert.equal(
      where(13, { summary: "test failed: 1 of 9" }, "a workflow run's job token pushed abc onto afk/13"),
      "mine: claimed by this instance: awaiting_ci (PR #41); waiting for: build, test; the last attempt failed: test failed: 1 of 9; note: a workflow run's job token pushed abc onto afk/13",
    );
    assert.match(where(13, null, "n".repeat(2_000)), /; note: n{500}$/);
    assert.equal(where(20), "peer_live: claimed by live instance peer1 on box");
    assert.equal(where(21), "stale: claimed by peer2, whose lease lapsed (no heartbeat for 2h)");
    assert.equal(where(9), "dispatch: next to dispatch at position 2 of 2; runs claude opus (ladder rung 1)");
    assert.equal(where(99), "not_open: #99, named by selector 1: closed");
    assert.equal(where(1234, null, "a note of a forgotten issue"), "not_open: #1234 is not an open issue of afk/demo");
  });
});

describe("plan text: the needs-a-human list", () => {
  // 60 reserved issues: the summary names the first 50 and says where the other 10 are; the
  // detailed pages reach every one of them as an excluded row.
  const reserved = Array.from({ length: 60 }, (_, i) => ({ number: i + 1, reason: "human_reserved", text: "labelled ready-for-human" }));
  const plan: PlanOutput = {
    repo: "afk/demo",
    instance: "i1",
    login: "afk-bot",
    base: "main",
    now: "2026-12-02T00:00:00.000Z",
    preconditions: [],
    ready: true,
    dispatch: [],
    held_for_overlap: [],
    conflict_holds: [],
    conflicting_pairs: [],
    excluded: reserved,
    named: [],
    mine: [],
    peers_live: [],
    peers_stale: [],
    cycles: [],
    stragglers: { unlabelled: 0, needs_triage: 0, needs_info: 0 },
    rate_limit: null,
    requests: { total: 0, counted: 0, not_modified: 0 },
    fingerprint: "f",
    totals: { dispatch: 0, excluded: 60, needs_human: 60, named: 0 },
    excluded_by_reason: { human_reserved: 60 },
    needs_human: reserved.map((r) => ({ number: r.number, why: r.text })),
    page: { detail: true, offset: 0, next_cursor: null },
  };
  it("a capped summary says where the rest are, and the pages reach all of them", () => {
    const text = renderPlan(pagePlan(plan, false));
    assert.match(text, /^needs a human \(50 of 60\):$/m);
    assert.match(text, /the rest: the human_reserved and cycle rows of status \{detail: true\}/);
    const seen = new Set<number>();
    let cursor: string | undefined;
    do {
      const page = pagePlan(plan, true, cursor);
      for (const e of page.excluded) if (e.reason === "human_reserved") seen.add(e.number);
      cursor = page.page.next_cursor ?? undefined;
    } while (cursor);
    assert.equal(seen.size, 60);
    const whole = renderPlan(pagePlan({ ...plan, needs_human: plan.needs_human.slice(0, 5), totals: { ...plan.totals, needs_human: 5 } }, false));
    assert.doesNotMatch(whole, /the rest:/, "a list shown whole has no pointer");
  });
  it("logs: one line per record, the issue tagged once (a message that opens with it is not tagged again)", () => {
    const records = [
      { ts: "2026-12-02T03:57:47.963Z", level: "info", issue: 2, msg: "#2: attempt 3 of 3 after: the worker exited with no commits" },
      { ts: "2026-12-02T03:57:48.000Z", level: "warn", issue: 2, msg: "#21 is its blocker" },
      { ts: "2026-12-02T03:57:49.000Z", level: "info", issue: 3, msg: "worker output line" },
      { ts: "2026-12-02T03:57:50.000Z", msg: "tick: 2 in flight" },
    ];
    assert.equal(
      renderLogs({ lane: "supervisor", records, held_back: 0, next_cursor: "c1" }),
      [
        '(older records: logs {cursor: "c1"})',
        "2026-12-02T03:57:47.963Z info #2: attempt 3 of 3 after: the worker exited with no commits",
        "2026-12-02T03:57:48.000Z warn #2 #21 is its blocker",
        "2026-12-02T03:57:49.000Z info #3 worker output line",
        "2026-12-02T03:57:50.000Z info tick: 2 in flight",
      ].join("\n"),
    );
    assert.equal(renderLogs({ lane: "worker", records: [], held_back: 0, next_cursor: null }), "no worker records");
    // The byte budget stopped the answer short of tail_lines: the text says how many wait behind the cursor.
    assert.equal(
      renderLogs({ lane: "worker", records: records.slice(2), held_back: 4987, next_cursor: "c2" }).split("\n")[0],
      '(2 of the records asked for fit in about 48 KB; the other 4987 and any older: logs {cursor: "c2"})',
    );
  });
  it("status without a repository the host can name: every registration on a line, or that none is", () => {
    assert.equal(
      renderStatus(overview([])),
      'daemon: none running\n\nno project is registered on this machine: pass repo ("owner/name") for a repository\'s plan, or project_start one',
    );
    const row = {
      repo: "afk/demo",
      instance: "i1",
      state: "running" as const,
      target: 3,
      selectors: [{ label: "ready-for-agent" }],
      sessions: ["s1"],
      sessions_gone: 0,
      ttl_seconds: null,
      renew_by: null,
      last_poll: "2026-12-01T18:57:29.279Z",
      workers: 2,
      in_flight: 4,
      landed_today: 7,
      needs_human: 1,
    };
    const daemon = { pid: 42, version: "1.0.0", session_version: "1.0.0", skew: null };
    const text = renderStatus({ ...overview([row, { ...row, repo: "afk/other", in_flight: null, needs_human: null, landed_today: 0 }]), daemon });
    assert.deepEqual(
      text
        .split("\n")
        .filter((l) => l.startsWith("registration "))
        .map((l) => l.split(", selectors")[0]),
      [
        "registration afk/demo: running, target 3 (1 slot(s) free), 2 worker(s), 4 in flight, 7 landed today, 1 needing a human",
        "registration afk/other: running, target 3 (1 slot(s) free), 2 worker(s), - in flight, 0 landed today, - needing a human",
      ],
    );
    assert.match(text, /^daemon: pid 42, afk-mcp 1\.0\.0\n/);
    assert.match(text, /pass repo \("owner\/name"\) for one registration's plan, workers or issue$/);
  });

  it("the board resource: its workers with their timelines, or that none runs", () => {
    const head = renderStatusHead(paused).join("\n");
    const links = "\n\ntimelines: afk://afk/demo/issue/{n}/timeline · final report: afk://afk/demo/report";
    const workerLinks = "\n\ntimelines: afk://afk/demo/issue/12/timeline afk://afk/demo/issue/15/timeline · final report: afk://afk/demo/report";
    assert.equal(renderBoard(paused, paused), `${head}\n\nworkers: none running${links}`);
    const two = {
      ...paused,
      workers: [12, 15].map((issue) => ({
        issue,
        state: "running",
        pid: 100 + issue,
        attempt: 1,
        started_at: "2026-12-01T18:57:30.000Z",
        engine: "command",
        model: null,
        // What each is doing: a plain worker's last line, an agent's tool (its last words apart).
        ...(issue === 12
          ? { stage: "stage: compiling widgets", last_line: "stage: compiling widgets", quiet_seconds: 12 }
          : { stage: "Bash: npm test", last_line: "Running the tests", quiet_seconds: 300 }),
      })),
    } as unknown as StatusResult;
    // Each worker's issue has its timeline linked (afk://{owner}/{repo}/issue/{n}/timeline).
    assert.equal(
      renderBoard(paused, two),
      `${head}\n\nworkers (2):\n  #12  running  pid 112  attempt 1\n      doing: stage: compiling widgets (quiet 12 s)\n  #15  running  pid 115  attempt 1\n      doing: Bash: npm test (quiet 5 min)\n      last line: Running the tests${workerLinks}`,
    );
    // An engine's workers say which engine and model run the attempt.
    const routed = {
      ...paused,
      workers: [
        {
          issue: 12,
          state: "running",
          pid: 112,
          attempt: 2,
          started_at: "2026-12-01T18:57:30.000Z",
          engine: "claude",
          model: "claude-opus-4-1",
          stage: null,
          last_line: null,
          quiet_seconds: 0,
        },
      ],
    } as unknown as StatusResult;
    assert.equal(
      renderBoard(paused, routed),
      `${head}\n\nworkers (1):\n  #12  running  pid 112  attempt 2  claude claude-opus-4-1\n      doing: nothing printed yet (quiet 0 s)\n\ntimelines: afk://afk/demo/issue/12/timeline · final report: afk://afk/demo/report`,
    );
  });
});
