// The dry-run plan: a working set and the preconditions, rendered as the `status` tool and
// `afk-mcp plan` show them. A plan is a tick stopped before act: the same gather and rebuild.
import type { PlanOutput } from "../../schemas/tools.js";
import type { RateLimit } from "../gh/forge.js";
import type { Precondition } from "./preconditions.js";
import { preconditionsPass } from "./preconditions.js";
import type { WorkingSet } from "../state/rebuild.js";
import { reviewNeed } from "../state/reviews.js";

export interface PlanFacts {
  set: WorkingSet;
  login: string;
  base: string;
  preconditions: Precondition[];
  rateLimit: RateLimit | null;
  requests: { total: number; counted: number; notModified: number };
}

export function planView(facts: PlanFacts): PlanOutput {
  const { set } = facts;
  return {
    repo: set.repo,
    instance: set.instance,
    login: facts.login,
    base: facts.base,
    now: set.now,
    preconditions: facts.preconditions,
    ready: preconditionsPass(facts.preconditions),
    dispatch: set.frontier.dispatch.map((d) => ({ number: d.number, title: d.title, selector: d.selector, high: d.high, attempt: d.attempt })),
    excluded: set.frontier.excluded.map((e) => ({ number: e.number, reason: e.reason.kind, text: e.text })),
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
  };
}

/** The plan as a terminal reads it. */
export function renderPlan(plan: PlanOutput): string {
  const lines: string[] = [`plan for ${plan.repo} (base ${plan.base}, as ${plan.login}, instance ${plan.instance})`, ""];
  lines.push("preconditions:");
  for (const p of plan.preconditions) lines.push(`  ${p.severity === "ok" ? "ok  " : p.severity === "warn" ? "warn" : "FAIL"}  ${p.name}: ${p.message}`);
  lines.push("", `dispatch (${plan.dispatch.length}, in order):`);
  for (const d of plan.dispatch) {
    lines.push(`  #${d.number}  ${d.title}${d.high ? "  [high]" : ""}${d.selector > 0 ? `  [selector ${d.selector + 1}]` : ""}${d.attempt > 0 ? `  [attempt ${d.attempt}]` : ""}`);
  }
  if (plan.dispatch.length === 0) lines.push("  (nothing to dispatch)");
  lines.push("", `excluded (${plan.excluded.length}):`);
  for (const e of plan.excluded) lines.push(`  #${e.number}  ${e.text}`);
  if (plan.mine.length > 0) {
    lines.push("", `mine (${plan.mine.length}):`);
    for (const m of plan.mine) {
      lines.push(`  #${m.issue}  ${m.status}${m.pr ? `  PR #${m.pr}` : ""}${m.failing.length ? `  failing: ${m.failing.join(", ")}` : ""}${m.review ? `  ${m.review}` : ""}`);
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
  lines.push(`requests: ${plan.requests.total} (${plan.requests.counted} counted, ${plan.requests.not_modified} answered 304)`);
  lines.push(plan.ready ? "ready: a start would be accepted" : "not ready: fix the failed preconditions above");
  return lines.join("\n");
}
