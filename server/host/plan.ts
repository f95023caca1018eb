// The dry-run plan: a working set and the preconditions, rendered as the `status` tool and
// `afk-mcp plan` show them. A plan is a tick stopped before act: the same gather and rebuild.
import type { PlanOutput } from "../../schemas/tools.js";
import type { RateLimit } from "../gh/forge.js";
import type { Precondition } from "./preconditions.js";
import { preconditionsPass } from "./preconditions.js";
import type { WorkingSet } from "../state/rebuild.js";
import { UsageError } from "../gh/errors.js";
import { reviewNeed } from "../state/reviews.js";
import type { TickReport } from "../fleet/tick-report.js";

export interface PlanFacts {
  set: WorkingSet;
  /** The running fleet's last pass: issues it started later for overlap, conflict holds and pairs. */
  fleet?: Pick<TickReport, "overlap_held" | "conflict_held" | "conflict_pairs"> | null;
  login: string;
  base: string;
  preconditions: Precondition[];
  rateLimit: RateLimit | null;
  requests: { total: number; counted: number; notModified: number };
  /** Each engine's default model, for a route that names none (an engine start). */
  defaultModels?: Readonly<Record<string, string | null>>;
}

/** What the running fleet's last pass adds to a plan: overlap holds (while the issue still waits), conflict holds, conflicting pairs. */
export function fleetRows(
  fleet: PlanFacts["fleet"] | undefined,
  dispatch: ReadonlyArray<{ number: number }>,
): Pick<PlanOutput, "held_for_overlap" | "conflict_holds" | "conflicting_pairs"> {
  return {
    held_for_overlap: (fleet?.overlap_held ?? []).filter((h) => dispatch.some((d) => d.number === h.issue)),
    conflict_holds: fleet?.conflict_held ?? [],
    conflicting_pairs: fleet?.conflict_pairs ?? [],
  };
}

/** The issues only a human can move: reserved, in a cycle, routed to an unknown engine, or this instance's failed PRs. */
export function needsHumanOf(set: Pick<WorkingSet, "frontier" | "mine">): PlanOutput["needs_human"] {
  return [
    ...set.frontier.excluded
      .filter((e) => e.reason.kind === "human_reserved" || e.reason.kind === "cycle" || e.reason.kind === "engine_unknown")
      .map((e) => ({ number: e.number, why: e.text })),
    ...set.mine
      .filter((m) => m.status === "failure")
      .map((m) => ({ number: m.issue, why: `PR #${m.pr ?? "?"} failed: ${m.failing.join(", ") || "checks failed"}` })),
  ];
}

export function planView(facts: PlanFacts): PlanOutput {
  const { set } = facts;
  const excludedByReason: Record<string, number> = {};
  for (const e of set.frontier.excluded) excludedByReason[e.reason.kind] = (excludedByReason[e.reason.kind] ?? 0) + 1;
  const needsHuman = needsHumanOf(set);
  return {
    repo: set.repo,
    instance: set.instance,
    login: facts.login,
    base: facts.base,
    now: set.now,
    preconditions: facts.preconditions,
    ready: preconditionsPass(facts.preconditions),
    dispatch: set.frontier.dispatch.map((d) => ({
      number: d.number,
      title: d.title,
      selector: d.selector,
      high: d.high,
      attempt: d.attempt,
      ...(d.blocks ? { blocks: d.blocks } : {}),
      ...(d.route ? { route: { engine: d.route.engine, model: d.route.model ?? facts.defaultModels?.[d.route.engine] ?? null, from: d.route.from } } : {}),
    })),
    ...fleetRows(facts.fleet, set.frontier.dispatch),
    excluded: set.frontier.excluded.map((e) => ({ number: e.number, reason: e.reason.kind, text: e.text, ...(e.blocks ? { blocks: e.blocks } : {}) })),
    named: set.named ?? [],
    mine: set.mine.map((m) => ({
      issue: m.issue,
      sha: m.sha,
      status: m.status,
      review: m.status === "awaiting_review" && m.review ? reviewNeed(m.review) : null,
      pr: m.pr,
      attempt: m.attempt,
      failing: m.failing,
      pending: m.pending,
      issue_open: m.issueOpen,
    })),
    peers_live: set.peer_live.map((p) => ({ issue: p.issue, instance: p.instance, host: p.host, sha: p.sha, alive_at: p.aliveAt, stale_reason: null })),
    peers_stale: set.stale.map((s) => ({ issue: s.issue, instance: s.instance, host: s.host, sha: s.sha, alive_at: s.heartbeatAt, stale_reason: s.reason })),
    cycles: set.cycles,
    stragglers: { unlabelled: set.stragglers.unlabelled, needs_triage: set.stragglers.needsTriage, needs_info: set.stragglers.needsInfo },
    rate_limit: facts.rateLimit,
    requests: { total: facts.requests.total, counted: facts.requests.counted, not_modified: facts.requests.notModified },
    fingerprint: set.fingerprint,
    totals: { dispatch: set.frontier.dispatch.length, excluded: set.frontier.excluded.length, needs_human: needsHuman.length, named: set.named?.length ?? 0 },
    excluded_by_reason: excludedByReason,
    needs_human: needsHuman,
    page: { detail: true, offset: 0, next_cursor: null },
  };
}

/** How many issues a summary names: the next to dispatch, and those needing a human. */
export const SUMMARY_ROWS = 10;
export const SUMMARY_NEEDS_HUMAN = 50;
/** Rows (dispatch, then excluded) per detail page: about 20 KB of JSON. */
export const PAGE_ROWS = 150;

/**
 * The plan as status answers it: a summary (the first dispatchable issues, counts per
 * exclusion reason, who needs a human), or with detail one page of the dispatch-then-excluded
 * rows. The cursor is the offset of the next row; an unusable one is refused, never guessed.
 */
export function pagePlan(plan: PlanOutput, detail: boolean, cursor?: string): PlanOutput {
  const needsHuman = plan.needs_human.slice(0, SUMMARY_NEEDS_HUMAN);
  // Up to 20 lists of 1,000 numbers: the first of them (totals.named counts them all).
  plan = { ...plan, named: plan.named.slice(0, SUMMARY_NEEDS_HUMAN) };
  if (!detail) {
    if (cursor !== undefined) throw new UsageError("status: cursor pages the detailed listing: pass detail: true with it");
    return {
      ...plan,
      dispatch: plan.dispatch.slice(0, SUMMARY_ROWS),
      excluded: [],
      needs_human: needsHuman,
      page: { detail: false, offset: 0, next_cursor: null },
    };
  }
  const total = plan.dispatch.length + plan.excluded.length;
  const offset = cursor === undefined ? 0 : Number(cursor);
  if (!/^\d{1,9}$/.test(cursor ?? "0") || offset > total) {
    throw new UsageError(
      `status: cursor ${JSON.stringify(cursor)} is not one this listing gave (rows 0-${total}): pass the next_cursor of the previous answer, or omit cursor to start over`,
    );
  }
  const end = Math.min(total, offset + PAGE_ROWS);
  const d = plan.dispatch.length;
  return {
    ...plan,
    dispatch: plan.dispatch.slice(Math.min(offset, d), Math.min(end, d)),
    excluded: plan.excluded.slice(Math.max(0, offset - d), Math.max(0, end - d)),
    needs_human: needsHuman,
    page: { detail: true, offset, next_cursor: end < total ? String(end) : null },
  };
}

/**
 * The plan as a terminal reads it; says when a list shows only part of its total. `running`: the
 * fleet runs already, so its last line says the preconditions hold rather than what a start would do.
 */
export function renderPlan(plan: PlanOutput, running = false): string {
  // "none": read with no daemon instance for this repository yet (the first start makes one).
  const instance = plan.instance === "none" ? "no instance on this machine yet" : `instance ${plan.instance}`;
  const lines: string[] = [`plan for ${plan.repo} (base ${plan.base}, as ${plan.login}, ${instance})`, ""];
  if (plan.run) lines.push(...renderRun(plan.run), "");
  lines.push("preconditions:");
  for (const p of plan.preconditions) lines.push(`  ${p.severity === "ok" ? "ok  " : p.severity === "warn" ? "warn" : "FAIL"}  ${p.name}: ${p.message}`);
  const of = (shown: number, total: number) => (shown === total ? `${total}` : `${shown} of ${total}`);
  const pageNote = plan.page.detail ? (plan.page.offset > 0 ? `, from row ${plan.page.offset + 1}` : "") : "";
  lines.push("", `dispatch (${of(plan.dispatch.length, plan.totals.dispatch)}, in order${pageNote}):`);
  for (const d of plan.dispatch) {
    lines.push(
      `  #${d.number}  ${d.title}${d.high ? "  [high]" : ""}${d.selector > 0 ? `  [selector ${d.selector + 1}]` : ""}${d.attempt > 0 ? `  [attempt ${d.attempt}]` : ""}${d.blocks ? `  [an open blocker of ${d.blocks.map((n) => `#${n}`).join(", ")}]` : ""}${d.route ? `  -> ${d.route.engine}${d.route.model ? ` ${d.route.model}` : " (default model)"} (${d.route.from})` : ""}`,
    );
  }
  if (plan.totals.dispatch === 0) lines.push("  (nothing to dispatch)");
  for (const h of plan.held_for_overlap)
    lines.push(`  held back for overlap: #${h.issue} (in-flight work changes ${h.paths.join(", ")}); #${h.instead} started first`);
  for (const h of plan.conflict_holds)
    lines.push(
      `  conflict retry waiting: #${h.issue} (PR #${h.pr} conflicts in ${h.files.join(", ")}) until ${h.waiting_for.map((n) => `#${n}`).join(", ")} landed, at most ${h.max_seconds} s (${h.held_seconds} s so far)`,
    );
  for (const p of plan.conflicting_pairs) lines.push(`  conflicting pair: #${p.a} and #${p.b} in ${p.files.join(", ")}`);
  const reasons = Object.entries(plan.excluded_by_reason).map(([k, n]) => `${n} ${k}`);
  lines.push("", `excluded (${plan.totals.excluded}${reasons.length ? `: ${reasons.join(", ")}` : ""}):`);
  for (const e of plan.excluded)
    lines.push(`  #${e.number}  ${e.text}${e.blocks && e.reason !== "not_ready" ? `  [an open blocker of ${e.blocks.map((n) => `#${n}`).join(", ")}]` : ""}`);
  if (!plan.page.detail && plan.totals.excluded > 0) lines.push("  (status {detail: true} lists them)");
  if (plan.totals.named > 0) {
    lines.push("", `named but not run now (${of(plan.named.length, plan.totals.named)}, in the selectors' order):`);
    for (const n of plan.named) lines.push(`  #${n.number}  ${n.text}${n.blocks ? "" : `  [selector ${n.selector + 1}]`}`);
  }
  if (plan.needs_human.length > 0) {
    lines.push("", `needs a human (${of(plan.needs_human.length, plan.totals.needs_human)}):`);
    for (const h of plan.needs_human) lines.push(`  #${h.number}  ${h.why}`);
    // The list is capped; every row of it is also an excluded row (paged by detail) or in mine.
    if (plan.needs_human.length < plan.totals.needs_human)
      lines.push("  (the rest: the human_reserved and cycle rows of status {detail: true}, and the failed PRs under mine)");
  }
  if (plan.mine.length > 0) {
    lines.push("", `mine (${plan.mine.length}):`);
    for (const m of plan.mine) {
      lines.push(
        `  #${m.issue}  ${m.status}${m.pr ? `  PR #${m.pr}` : ""}${m.failing.length ? `  failing: ${m.failing.join(", ")}` : ""}${waitingFor(m)}${m.review ? `  ${m.review}` : ""}`,
      );
    }
  }
  if (plan.peers_live.length + plan.peers_stale.length > 0) {
    lines.push("", "peers:");
    for (const p of plan.peers_live) lines.push(`  #${p.issue}  live  ${p.instance ?? "?"}@${p.host ?? "?"}`);
    for (const p of plan.peers_stale) lines.push(`  #${p.issue}  stale (${p.stale_reason})  ${p.instance ?? "?"}@${p.host ?? "?"}`);
  }
  for (const cycle of plan.cycles) lines.push(`cycle: ${cycle.map((n) => `#${n}`).join(" -> ")}`);
  const s = plan.stragglers;
  if (s.unlabelled + s.needs_triage + s.needs_info > 0) {
    lines.push("", `stragglers: ${s.unlabelled} unlabelled, ${s.needs_triage} needs-triage, ${s.needs_info} needs-info`);
  }
  if (plan.rate_limit) lines.push("", `rate limit: ${plan.rate_limit.remaining}/${plan.rate_limit.limit} remaining`);
  lines.push(`requests for this answer: ${plan.requests.total} (${plan.requests.counted} counted, ${plan.requests.not_modified} answered 304)`);
  if (plan.page.next_cursor !== null) lines.push(`more rows: status {detail: true, cursor: "${plan.page.next_cursor}"}`);
  lines.push(plan.ready ? (running ? "ready: every precondition holds" : "ready: a start would be accepted") : "not ready: fix the failed preconditions above");
  return lines.join("\n");
}

/** What will run: the command, each engine, the runtime and what it lets through. */
export function renderRun(run: NonNullable<PlanOutput["run"]>): string[] {
  const lines = ["will run:"];
  if (run.command !== null) lines.push(`  command: ${run.command}`);
  for (const e of run.engines)
    lines.push(
      `  engine ${e.name}: ${e.path}, version ${e.version}, model ${e.model ?? "(its default)"}, provider ${e.provider.length > 0 ? e.provider.join(" ") : "its own API"}, budget ${e.budget}`,
    );
  const r = run.runtime;
  lines.push(`  ${r.text}`);
  if (r.writable.length > 0) lines.push(`    writable: ${r.writable.join(", ")}`);
  if (r.read_only.length > 0) lines.push(`    read-only: ${r.read_only.join(", ")}`);
  if (r.hidden.length > 0) lines.push(`    hidden: ${r.hidden.join(", ")}`);
  if (!r.unconfined && r.name === "sandbox") lines.push(`    hosts: ${r.hosts.length > 0 ? r.hosts.join(", ") : "none"}`);
  return lines;
}

/** What a claim waiting for CI waits for, as the structured `pending` says (a few names at most). */
export function waitingFor(m: { status: string; pending: readonly string[] }, separator = "  "): string {
  if (m.status !== "awaiting_ci" || m.pending.length === 0) return "";
  const shown = m.pending.slice(0, 5);
  return `${separator}waiting for: ${shown.join(", ")}${m.pending.length > shown.length ? ` and ${m.pending.length - shown.length} more` : ""}`;
}
