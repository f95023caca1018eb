// A failed attempt's two ways on, as decide chose: the retry ladder (attempt label, PR closed,
// a fresh worker) or, past the retry limit, escalation to a human with the evidence of where it
// got stuck.
import { failureAction, type FailureEvidence } from "../../state/decide.js";
import { attemptFromLabels, attemptLabel, parseAttemptLabel, sameLogin } from "../../state/markers.js";
import type { SnapshotIssue } from "../../state/snapshot.js";
import type { BriefFailure } from "../../agent/brief.js";
import { discussion, type BriefComment } from "../../agent/brief-comments.js";
import { commitWorkInProgress, WIP_SUBJECT, type WipCommit } from "../../worktrees/wip.js";
import { renderEscalation, renderRetryNote } from "../../board/render.js";
import { oneLine } from "../../text/text.js";
import { redactText } from "../../text/redact.js";
import type { ActionOf, FleetRuntime, TickScope } from "./effect.js";

/** Characters of a failure's excerpt kept in the ledger (the brief quotes at most about as many). */
const EXCERPT_KEPT = 2_000;

/** A worker's own last lines, for the board (a log's tail, a conflict listing and review text stay on the PR, the brief, and the escalation). */
function lastLines(brief: BriefFailure): string | undefined {
  return brief.kind === "stalled" || brief.kind === "no-result" || brief.kind === "giving-up" || brief.kind === "blocked" ? brief.excerpt : undefined;
}

export function attemptOf(fleet: FleetRuntime, issue: { labels: string[] } | undefined): number {
  return issue ? attemptFromLabels(issue.labels, fleet.registration.config.labels.attempt_prefix) : 0;
}

/** An attempt an effect found failed (a landing its gate refused, a refuted review): the core says retry or escalate. */
export async function failedAttempt(
  fleet: FleetRuntime,
  tick: TickScope,
  at: { issue: number; sha: string; pr: number },
  evidence: FailureEvidence,
): Promise<void> {
  const claim = tick.set.mine.find((m) => m.issue === at.issue) ?? { ...at, attempt: attemptOf(fleet, tick.issues.get(at.issue)) };
  const policy = { retry: fleet.registration.config.retry, birthsPaused: fleet.birthsHeld(), stopping: false };
  await fleet.apply(tick, failureAction({ ...claim, sha: at.sha, pr: at.pr }, policy, evidence));
}

/** The retry ladder: the attempt label moves on, the PR closes, the next worker starts fresh. */
export async function retryIssue(fleet: FleetRuntime, tick: TickScope, action: ActionOf<"retry">): Promise<void> {
  const { issue: n, sha: claimSha, attempt, pr, evidence } = action;
  const { forge } = fleet.deps.conn;
  const cfg = fleet.registration.config;
  await fleet.deps.lease.fence(n, claimSha);
  // The head the snapshot judged: its checks are the evidence, and it is what the next attempt may replace.
  const head = tick.set.mine.find((m) => m.issue === n && m.pr === pr)?.head ?? null;
  const brief = await evidenceForBrief(fleet, n, evidence, head);
  const memory = fleet.memory.of(n);
  memory.lastFailure = brief;
  const issue = tick.issues.get(n);
  // Requests, each needed: the attempt count is durable state on the issue (a restart or another
  // host reads it from the labels), so the label is made once per client, added, and the previous
  // one removed. GitHub has no add-and-remove in one call; replacing the whole set would drop a
  // label a human added since this tick's listing.
  await forge.ensureLabel({ name: attemptLabel(attempt, cfg.labels.attempt_prefix), color: "fbca04", description: "afk-mcp: retry count" });
  await forge.addLabels(n, [attemptLabel(attempt, cfg.labels.attempt_prefix)]);
  for (const label of issue?.labels ?? []) {
    const k = parseAttemptLabel(label, cfg.labels.attempt_prefix);
    if (k !== null && k !== attempt) await forge.removeLabel(n, label);
  }
  if (pr) {
    const note = renderRetryNote({
      issue: n,
      attempt,
      maxAttempts: cfg.retry + 1,
      why: brief.summary,
      evidence: { kind: brief.kind, summary: brief.summary, excerpt: brief.excerpt },
      fix: action.fix === true,
    });
    if (action.fix) {
      // The PR stays open: the next attempt fixes it forward on its branch (its push is a fast
      // forward of this head). The note says so on the PR: one request, as the close would be.
      await forge.createComment(pr, note);
    } else {
      // A request only when the caller did not know the head (a stall or a worker's verdict): the
      // head is remembered so the next attempt may build on the tested work.
      const sha = head ?? (await forge.getPull(pr).catch(() => null))?.head.sha;
      if (sha) memory.replaceable = sha;
      // The PR closes unmerged, which frees the branch for the next attempt; the note of why heads
      // its description, written by the same request (a comment of its own would be a second one,
      // and a closed PR's subscribers hear of the close either way). The next attempt opens a new PR.
      const opened = tick.pulls?.find((p) => p.number === pr)?.body.trim() ?? "";
      await forge.closePull(pr, opened === "" ? note : `${note}\n\n---\n\n${opened}`);
      fleet.deps.conn.gatherMemory.forgetFleetPull(pr);
    }
  }
  const run = fleet.memory.run(n);
  if (run && !run.exitFacts) await run.handle.stop("retrying");
  fleet.memory.endRun(n);
  tick.events.settled.push(n);
  fleet.board.failed(n, attempt, action.fix ? `${brief.summary}; attempt ${attempt + 1} fixes PR #${pr} forward` : brief.summary, lastLines(brief));
  // The evidence goes to the ledger with the retry: the next attempt's brief reads it back from
  // there when this host forgot it (a daemon restarted before the birth).
  const how = action.fix ? ` fixes PR #${pr} forward` : "";
  fleet.log("info", "retry", `#${n}: attempt ${attempt + 1} of ${cfg.retry + 1}${how} after: ${brief.summary}`, n, {
    attempt: attempt + 1,
    mode: action.fix ? "fix" : action.resume ? "continue" : "fresh",
    evidence_kind: brief.kind,
    summary: brief.summary,
    excerpt: brief.excerpt.slice(-EXCERPT_KEPT),
  });
  if (issue) {
    const withLabel = {
      ...issue,
      labels: [...issue.labels.filter((l) => parseAttemptLabel(l, cfg.labels.attempt_prefix) === null), attemptLabel(attempt, cfg.labels.attempt_prefix)],
    };
    if (action.startWorker) await fleet.birthFor(withLabel, attempt + 1, action.resume ? "continue" : "fresh", claimSha);
  }
}

export async function escalateIssue(
  fleet: FleetRuntime,
  n: number,
  claimSha: string,
  pr: number | null,
  why: string,
  evidence: FailureEvidence | null,
  issue: SnapshotIssue | undefined,
  head: string | null = null,
): Promise<void> {
  const { forge } = fleet.deps.conn;
  const cfg = fleet.registration.config;
  const run = fleet.memory.run(n);
  if (run && !run.exitFacts) await run.handle.stop("escalated");
  const brief = evidence ? await evidenceForBrief(fleet, n, evidence, head) : null;
  // Before the claim goes: what the worker left uncommitted is committed and pushed, fenced.
  const kept = await keepWorkInProgress(fleet, n, claimSha, why);
  // With an escalation comment (below: the record and the notification), a board is edited where
  // one was opened (it must stop saying "Coding") and not made only to be finished at once.
  await fleet.board.terminal(n, "escalated", attemptOf(fleet, issue), cfg.retry + 1, { note: why, ifShown: cfg.board.escalate_comment });
  await fleet.deps.lease.release(n, claimSha);
  // The issue leaves the backlog for a human: ready off (the fleet must not pick it again), the
  // attempt count off (a human's re-queue starts afresh), the escalate label on, one request each
  // for the reason given at the retry's labels above.
  await forge.removeLabel(n, cfg.labels.ready);
  for (const label of issue?.labels ?? []) if (parseAttemptLabel(label, cfg.labels.attempt_prefix) !== null) await forge.removeLabel(n, label);
  await forge.ensureLabel({ name: cfg.labels.escalate, color: "d93f0b", description: "afk-mcp: needs a human" });
  await forge.addLabels(n, [cfg.labels.escalate]);
  // A new comment, not only the board's edit: a human is notified of a comment, never of an edit.
  if (cfg.board.escalate_comment) {
    // Rendered by board/render.ts, which neutralizes markers: quoted CI output must never read
    // as a verdict or a board written by the fleet's own login.
    const body = renderEscalation({
      issue: n,
      why,
      attempts: attemptOf(fleet, issue) + 1,
      evidence: brief ? { kind: brief.kind, summary: brief.summary, excerpt: brief.excerpt } : null,
      pr: pr ? { number: pr, url: `${fleet.deps.conn.info.htmlUrl.replace(/\/$/, "")}/pull/${pr}` } : null,
      links: [],
      labels: { ready: cfg.labels.ready, escalate: cfg.labels.escalate },
    });
    // One request, once per escalation: the human's notification.
    const branch = kept.branch ?? fleet.deps.workRepo.branchName(n, issue?.title ?? "");
    await forge.createComment(
      n,
      `${body}\n\nBranch \`${branch}\` keeps the last attempt's work${kept.note}; logs: \`afk-mcp logs --lane supervisor --issue ${n}\` in a terminal, the logs tool (\`{lane: "supervisor", issue: ${n}}\`) in an MCP session.${fleet.notifier.escalationMention(n)}`,
    );
  }
  fleet.memory.forget(n);
  fleet.log("warn", "escalated", `#${n}: escalated to ${cfg.labels.escalate}: ${why}`, n);
}

interface KeptWork {
  /** The issue branch as the worktree has it (null: no worktree, the name is derived). */
  branch: string | null;
  /** A sentence for the escalation comment ("" when there was nothing uncommitted). */
  note: string;
}

/**
 * The worker's uncommitted files (modified and untracked) as a marked work-in-progress commit on
 * the issue branch, pushed while the claim still holds our sha. A failure is logged and said in
 * the comment; it never stops the escalation (the worktree stays where it is either way).
 */
async function keepWorkInProgress(fleet: FleetRuntime, n: number, claimSha: string, why: string): Promise<KeptWork> {
  const { workRepo, lease } = fleet.deps;
  let wip: WipCommit | null = null;
  try {
    wip = await commitWorkInProgress(workRepo, n, `Escalated: ${oneLine(why, 300)}`);
    const progress = await workRepo.progress(n, fleet.registration.base);
    if (progress.commitsAhead === 0) return { branch: progress.branch, note: "" };
    await lease.fence(n, claimSha);
    const pushed = await workRepo.push(n);
    if (wip)
      fleet.log(
        "info",
        "wip_checkpoint",
        `#${n}: committed ${wip.files.length} uncommitted file(s) as ${wip.sha.slice(0, 12)} and pushed ${pushed.branch}`,
        n,
        { sha: wip.sha, branch: pushed.branch, files: wip.files.length },
      );
    return {
      branch: pushed.branch,
      note: wip
        ? `, including what the worker left uncommitted (${wip.files.length} file${wip.files.length === 1 ? "" : "s"}, committed as \`${wip.sha.slice(0, 12)}\` "${WIP_SUBJECT}", untested)`
        : "",
    };
  } catch (error) {
    fleet.log("warn", "wip_checkpoint_failed", `#${n}: the last attempt's work was not pushed: ${(error as Error).message}`, n);
    const where = `\`${workRepo.worktreePath(n)}\` on this host`;
    return {
      branch: null,
      note: wip
        ? ` in ${where} (its uncommitted files committed as \`${wip.sha.slice(0, 12)}\`, not pushed: ${oneLine((error as Error).message, 200)})`
        : ` in ${where} (not pushed: ${oneLine((error as Error).message, 200)})`,
    };
  }
}

/**
 * The last lines the issue's worker printed, redacted, for a failure that is the worker's own end
 * (a stall kill, a crash, a stop past its budget, a verdict): the words that say where it was.
 */
function lastWords(fleet: FleetRuntime, n: number): string {
  return fleet.memory
    .lastWords(n)
    .map((line) => redactText(line, [fleet.deps.conn.token]))
    .join("\n");
}

async function evidenceForBrief(fleet: FleetRuntime, n: number, evidence: FailureEvidence, head: string | null = null): Promise<BriefFailure> {
  switch (evidence.kind) {
    case "ci":
      return fleet.landing.ciEvidence(evidence.pr, evidence.failing, head);
    case "verdict":
      return {
        kind: evidence.verdict === "giving-up" ? "giving-up" : evidence.verdict,
        summary: `the worker's verdict was ${evidence.verdict}: ${oneLine(evidence.reason)}`,
        excerpt: lastWords(fleet, n),
      };
    case "no_result":
      return { kind: "no-result", summary: evidence.why, excerpt: lastWords(fleet, n) };
    case "hung":
      return { kind: "stalled", summary: `the worker went quiet past the kill threshold ${evidence.kills} time(s)`, excerpt: lastWords(fleet, n) };
    case "gate":
      return { kind: "gate", summary: evidence.summary, excerpt: evidence.excerpt };
    case "review_findings":
      return { kind: "review-findings", summary: `the reviewer refuted PR #${evidence.pr}`, excerpt: evidence.findings };
    case "review":
      return {
        kind: "review",
        summary: `${evidence.changes.map((c) => c.by).join(", ") || "a reviewer"} requested changes on PR #${evidence.pr}`,
        excerpt: evidence.changes.map((c) => `${c.by}:\n${c.body}`).join("\n\n"),
        reviewComments: await reviewLineComments(
          fleet,
          evidence.pr,
          evidence.changes.map((c) => c.by),
        ),
      };
  }
}

/** The line comments of the reviewers who requested changes, for the next attempt's brief. */
async function reviewLineComments(fleet: FleetRuntime, pr: number, reviewers: readonly string[]): Promise<BriefComment[]> {
  if (pr <= 0) return [];
  try {
    // One request per changes-requested review that sends an attempt back: the summary says what
    // the reviewer wants in general, the line comments say where.
    const all = await fleet.deps.conn.forge.listReviewComments(pr);
    return discussion(all, fleet.deps.conn.login)
      .filter((c) => reviewers.some((r) => sameLogin(r, c.author)))
      .map((c) => ({ author: c.author, createdAt: c.createdAt, body: c.body, path: c.path, line: c.line }));
  } catch (error) {
    fleet.log("warn", "review_comments_unreadable", `PR #${pr}: the brief goes without the review's line comments: ${(error as Error).message}`);
    return [];
  }
}

/**
 * A settled issue's worktree and local branches go. A failure (git busy, a file held open) leaves
 * them, said in the supervisor lane: nothing is lost, and the garbage is the user's to see.
 */
export async function removeWorktree(fleet: FleetRuntime, n: number): Promise<void> {
  try {
    await fleet.deps.workRepo.remove(n, { deleteBranch: true });
  } catch (error) {
    fleet.log("warn", "worktree_left", `#${n}: its worktree was not removed: ${error instanceof Error ? error.message : String(error)}`, n, {
      path: fleet.deps.workRepo.worktreePath(n),
    });
  }
}

/** A breaker sweep's runner-error label is stale once the issue got done after all. */
export async function clearRunnerError(fleet: FleetRuntime, tick: TickScope, n: number): Promise<void> {
  const label = fleet.registration.config.labels.runner_error;
  // The tick's listing, else the last one that showed the issue (a train's rider is closed by now).
  const labels = tick.issues.get(n)?.labels ?? fleet.memory.get(n)?.labels ?? [];
  if (labels.some((l) => l.toLowerCase() === label.toLowerCase())) {
    // One request, only when the label is there (the listing says so).
    await fleet.deps.conn.forge.removeLabel(n, label).catch(() => undefined);
  }
}
