// Branches, classic branch protection and repository rulesets: where a branch's required
// status checks and required approving reviews come from. Both sources are honoured at merge
// time, as on GitHub.
import picomatch from "picomatch";
import type { ForgeEmulator } from "./core.js";
import { HttpError, notFound, validationFailed } from "./http-errors.js";
import { oneOf, optionalString, requiredString } from "./input.js";
import { requireAdmin } from "./issues.js";
import { paginate } from "./paginate.js";
import type { Reply, RequestContext, Router } from "./router.js";
import { isoNow, type ProtectionRecord, type RequiredCheck, type RequiredReviews, type RuleRecord, type RulesetRecord } from "./state.js";

const REPO = "/repos/{owner}/{repo}";

export interface RequiredChecks {
  contexts: string[];
  strict: boolean;
}

function patternMatches(pattern: string, ref: string, defaultBranch: string): boolean {
  if (pattern === "~ALL") return true;
  if (pattern === "~DEFAULT_BRANCH") return ref === `refs/heads/${defaultBranch}`;
  const full = pattern.startsWith("refs/") ? pattern : `refs/heads/${pattern}`;
  // fnmatch-style, as rulesets use them: `*` within a segment, `**` across.
  return picomatch.isMatch(ref, full, { dot: true });
}

/** Active branch rulesets that apply to `branch`. */
export function rulesetsFor(forge: ForgeEmulator, branch: string): RulesetRecord[] {
  const ref = `refs/heads/${branch}`;
  return forge.state
    .rulesets()
    .filter(
      (r) =>
        r.enforcement === "active" &&
        r.target === "branch" &&
        r.include.some((p) => patternMatches(p, ref, forge.defaultBranch)) &&
        !r.exclude.some((p) => patternMatches(p, ref, forge.defaultBranch)),
    );
}

/** GitHub's REST answer for a merge on a branch that requires a merge queue (405). */
export const MERGE_QUEUE_REQUIRED = "Changes must be made through the merge queue";

export interface MergeQueueSettings {
  mergeMethod: "MERGE" | "SQUASH" | "REBASE";
  groupingStrategy: "ALLGREEN" | "HEADGREEN";
  checkResponseTimeoutMinutes: number;
  maxEntriesToBuild: number;
  maxEntriesToMerge: number;
  minEntriesToMerge: number;
  minEntriesToMergeWaitMinutes: number;
}

/** The merge queue a branch requires (its first active `merge_queue` rule), or null. */
export function mergeQueueFor(forge: ForgeEmulator, branch: string): MergeQueueSettings | null {
  for (const r of rulesetsFor(forge, branch)) {
    const rule = r.rules.find((x) => x.type === "merge_queue");
    if (!rule) continue;
    const p = rule.parameters ?? {};
    return {
      mergeMethod: p.merge_method as MergeQueueSettings["mergeMethod"],
      groupingStrategy: p.grouping_strategy as MergeQueueSettings["groupingStrategy"],
      checkResponseTimeoutMinutes: p.check_response_timeout_minutes as number,
      maxEntriesToBuild: p.max_entries_to_build as number,
      maxEntriesToMerge: p.max_entries_to_merge as number,
      minEntriesToMerge: p.min_entries_to_merge as number,
      minEntriesToMergeWaitMinutes: p.min_entries_to_merge_wait_minutes as number,
    };
  }
  return null;
}

/** Everything that requires checks on `branch`: classic protection plus rulesets. */
export function requiredChecksFor(forge: ForgeEmulator, branch: string): RequiredChecks {
  const contexts = new Set<string>();
  let strict = false;
  const rsc = forge.state.protection(branch)?.requiredStatusChecks;
  if (rsc) {
    for (const c of rsc.checks) contexts.add(c.context);
    strict ||= rsc.strict;
  }
  for (const r of rulesetsFor(forge, branch)) {
    for (const rule of r.rules) {
      if (rule.type !== "required_status_checks") continue;
      const p = rule.parameters ?? {};
      for (const c of (p.required_status_checks as { context: string }[] | undefined) ?? []) contexts.add(c.context);
      strict ||= p.strict_required_status_checks_policy === true;
    }
  }
  return { contexts: [...contexts], strict };
}

/** Everything that requires approving reviews on `branch`: the strictest of protection and rulesets. */
export function requiredReviewsFor(forge: ForgeEmulator, branch: string): RequiredReviews {
  const out: RequiredReviews = { count: 0, dismissStale: false, codeOwners: false };
  const rr = forge.state.protection(branch)?.requiredReviews;
  if (rr) {
    out.count = Math.max(out.count, rr.count);
    out.dismissStale ||= rr.dismissStale;
    out.codeOwners ||= rr.codeOwners;
  }
  for (const r of rulesetsFor(forge, branch)) {
    for (const rule of r.rules) {
      if (rule.type !== "pull_request") continue;
      const p = rule.parameters ?? {};
      out.count = Math.max(out.count, typeof p.required_approving_review_count === "number" ? p.required_approving_review_count : 0);
      out.dismissStale ||= p.dismiss_stale_reviews_on_push === true;
      out.codeOwners ||= p.require_code_owner_review === true;
    }
  }
  return out;
}

async function branchTip(ctx: RequestContext, branch: string): Promise<string> {
  const sha = (await ctx.memo.branchTips()).get(branch);
  if (!sha) throw new HttpError(404, "Branch not found");
  return sha;
}

async function listBranches(ctx: RequestContext): Promise<Reply> {
  const tips = await ctx.memo.branchTips();
  const wantProtected = ctx.query.get("protected");
  let names = [...tips.keys()].sort();
  if (wantProtected === "true") names = names.filter((n) => ctx.forge.state.protection(n));
  if (wantProtected === "false") names = names.filter((n) => !ctx.forge.state.protection(n));
  const page = paginate(ctx, names);
  const api = ctx.forge.render.repoApi;
  const body = page.items.map((name) => {
    const p = ctx.forge.state.protection(name);
    return {
      name,
      commit: { sha: tips.get(name)!, url: `${api}/commits/${tips.get(name)!}` },
      protected: p !== undefined,
      protection_url: `${api}/branches/${encodeURIComponent(name)}/protection`,
    };
  });
  return { status: 200, body, headers: page.headers };
}

async function getBranch(ctx: RequestContext): Promise<Reply> {
  const name = ctx.params.branch ?? "";
  const sha = await branchTip(ctx, name);
  const info = await ctx.forge.git.commitInfo(sha);
  return { status: 200, body: ctx.forge.render.branch(name, ctx.forge.render.commit(info), ctx.forge.state.protection(name)) };
}

function getProtection(ctx: RequestContext): Reply {
  requireAdmin(ctx);
  const p = ctx.forge.state.protection(ctx.params.branch ?? "");
  if (!p) throw new HttpError(404, "Branch not protected");
  return { status: 200, body: ctx.forge.render.protection(p) };
}

function enabledFlag(v: unknown): boolean {
  if (typeof v === "boolean") return v;
  if (v && typeof v === "object") return (v as { enabled?: unknown }).enabled === true;
  return false;
}

function readRequiredChecks(v: unknown): ProtectionRecord["requiredStatusChecks"] {
  if (v === null || v === undefined) return null;
  if (typeof v !== "object" || Array.isArray(v)) throw validationFailed([{ resource: "ProtectedBranch", field: "required_status_checks", code: "invalid" }]);
  const o = v as Record<string, unknown>;
  const checks: RequiredCheck[] = [];
  if (Array.isArray(o.checks)) {
    for (const c of o.checks as unknown[]) {
      const cc = c as { context?: unknown; app_id?: unknown };
      if (typeof cc?.context !== "string") throw validationFailed([{ resource: "ProtectedBranch", field: "required_status_checks.checks", code: "invalid" }]);
      checks.push({ context: cc.context, appId: typeof cc.app_id === "number" ? cc.app_id : null });
    }
  }
  if (Array.isArray(o.contexts)) {
    for (const c of o.contexts as unknown[]) {
      if (typeof c !== "string") throw validationFailed([{ resource: "ProtectedBranch", field: "required_status_checks.contexts", code: "invalid" }]);
      if (!checks.some((x) => x.context === c)) checks.push({ context: c, appId: null });
    }
  }
  return { strict: o.strict === true, checks };
}

function readRequiredReviews(v: unknown): RequiredReviews | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== "object" || Array.isArray(v))
    throw validationFailed([{ resource: "ProtectedBranch", field: "required_pull_request_reviews", code: "invalid" }]);
  const o = v as Record<string, unknown>;
  const count = o.required_approving_review_count ?? 1;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 0 || count > 6) {
    throw validationFailed([{ resource: "ProtectedBranch", field: "required_pull_request_reviews.required_approving_review_count", code: "invalid" }]);
  }
  return { count, dismissStale: o.dismiss_stale_reviews === true, codeOwners: o.require_code_owner_reviews === true };
}

async function putProtection(ctx: RequestContext): Promise<Reply> {
  requireAdmin(ctx);
  const branch = ctx.params.branch ?? "";
  await branchTip(ctx, branch);
  // GitHub requires all four top-level keys; the forge accepts a missing key as null so that
  // test setups can say only what they care about.
  const p: ProtectionRecord = {
    branch,
    requiredStatusChecks: readRequiredChecks(ctx.body.required_status_checks),
    requiredReviews: readRequiredReviews(ctx.body.required_pull_request_reviews),
    enforceAdmins: enabledFlag(ctx.body.enforce_admins),
    requiredLinearHistory: enabledFlag(ctx.body.required_linear_history),
    allowForcePushes: enabledFlag(ctx.body.allow_force_pushes),
    allowDeletions: enabledFlag(ctx.body.allow_deletions),
  };
  ctx.forge.state.setProtection(p);
  return { status: 200, body: ctx.forge.render.protection(p) };
}

function deleteProtection(ctx: RequestContext): Reply {
  requireAdmin(ctx);
  const branch = ctx.params.branch ?? "";
  if (!ctx.forge.state.protection(branch)) throw new HttpError(404, "Branch not protected");
  ctx.forge.state.deleteProtection(branch);
  return { status: 204 };
}

function readRules(v: unknown): RuleRecord[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw validationFailed([{ resource: "Ruleset", field: "rules", code: "invalid" }]);
  return v.map((r: unknown) => {
    const rule = r as { type?: unknown; parameters?: unknown };
    if (typeof rule?.type !== "string") throw validationFailed([{ resource: "Ruleset", field: "rules.type", code: "missing_field" }]);
    if (rule.type === "required_status_checks") {
      const p = (rule.parameters ?? {}) as Record<string, unknown>;
      const list = p.required_status_checks;
      if (!Array.isArray(list) || list.some((c) => typeof (c as { context?: unknown })?.context !== "string")) {
        throw new HttpError(422, "Invalid rule 'required_status_checks': required_status_checks must be a list of {context}");
      }
      return {
        type: rule.type,
        parameters: {
          ...p,
          required_status_checks: list.map((c) => {
            const cc = c as { context: string; integration_id?: unknown };
            return typeof cc.integration_id === "number" ? { context: cc.context, integration_id: cc.integration_id } : { context: cc.context };
          }),
          strict_required_status_checks_policy: p.strict_required_status_checks_policy === true,
        },
      };
    }
    if (rule.type === "pull_request") return { type: rule.type, parameters: readPullRequestRule(rule.parameters) };
    if (rule.type === "merge_queue") return { type: rule.type, parameters: readMergeQueueRule(rule.parameters) };
    return rule.parameters === undefined ? { type: rule.type } : { type: rule.type, parameters: rule.parameters as Record<string, unknown> };
  });
}

/** A ruleset's `pull_request` rule: every parameter GitHub marks required, defaults filled in. */
function readPullRequestRule(v: unknown): Record<string, unknown> {
  const p = (v ?? {}) as Record<string, unknown>;
  const count = p.required_approving_review_count ?? 0;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 0 || count > 10) {
    throw new HttpError(422, "Invalid rule 'pull_request': required_approving_review_count must be an integer from 0 to 10");
  }
  return {
    ...p,
    required_approving_review_count: count,
    dismiss_stale_reviews_on_push: p.dismiss_stale_reviews_on_push === true,
    require_code_owner_review: p.require_code_owner_review === true,
    require_last_push_approval: p.require_last_push_approval === true,
    required_review_thread_resolution: p.required_review_thread_resolution === true,
  };
}

const MERGE_QUEUE_INTS: Array<[string, number, number]> = [
  ["check_response_timeout_minutes", 1, 360],
  ["max_entries_to_build", 0, 100],
  ["max_entries_to_merge", 0, 100],
  ["min_entries_to_merge", 0, 100],
  ["min_entries_to_merge_wait_minutes", 0, 360],
];

/** A ruleset's `merge_queue` rule: GitHub requires all seven parameters. */
function readMergeQueueRule(v: unknown): Record<string, unknown> {
  const p = (v ?? {}) as Record<string, unknown>;
  const bad = (why: string): HttpError => new HttpError(422, `Invalid rule 'merge_queue': ${why}`);
  for (const [name, min, max] of MERGE_QUEUE_INTS) {
    const n = p[name];
    if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > max) throw bad(`${name} must be an integer from ${min} to ${max}`);
  }
  if (!["MERGE", "SQUASH", "REBASE"].includes(p.merge_method as string)) throw bad("merge_method must be MERGE, SQUASH or REBASE");
  if (!["ALLGREEN", "HEADGREEN"].includes(p.grouping_strategy as string)) throw bad("grouping_strategy must be ALLGREEN or HEADGREEN");
  return { ...p };
}

function createRuleset(ctx: RequestContext): Reply {
  requireAdmin(ctx);
  const name = requiredString(ctx.body, "name", "Ruleset");
  const enforcement = oneOf(requiredString(ctx.body, "enforcement", "Ruleset"), ["disabled", "active", "evaluate"] as const, "Ruleset", "enforcement")!;
  const target = oneOf(optionalString(ctx.body, "target", "Ruleset"), ["branch", "tag", "push"] as const, "Ruleset", "target") ?? "branch";
  const cond = (ctx.body.conditions as { ref_name?: { include?: unknown; exclude?: unknown } } | undefined)?.ref_name;
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
  if (ctx.forge.state.rulesets().some((r) => r.name === name)) {
    throw validationFailed([{ resource: "Ruleset", field: "name", code: "already_exists" }], "Name must be unique");
  }
  const now = isoNow();
  const r: RulesetRecord = {
    id: ctx.forge.state.nextId(),
    name,
    target,
    enforcement,
    include: strings(cond?.include),
    exclude: strings(cond?.exclude),
    rules: readRules(ctx.body.rules),
    createdAt: now,
    updatedAt: now,
  };
  ctx.forge.state.addRuleset(r);
  return { status: 201, body: ctx.forge.render.ruleset(r) };
}

function listRulesets(ctx: RequestContext): Reply {
  const page = paginate(ctx, ctx.forge.state.rulesets());
  const body = page.items.map((r) => {
    const full = ctx.forge.render.ruleset(r);
    delete full.conditions;
    delete full.rules;
    return full;
  });
  return { status: 200, body, headers: page.headers };
}

function getRuleset(ctx: RequestContext): Reply {
  const r = ctx.forge.state.rulesets().find((x) => x.id === Number(ctx.params.ruleset_id));
  if (!r) throw notFound();
  return { status: 200, body: ctx.forge.render.ruleset(r) };
}

function rulesForBranch(ctx: RequestContext): Reply {
  const out: unknown[] = [];
  for (const r of rulesetsFor(ctx.forge, ctx.params.branch ?? "")) {
    for (const rule of r.rules) out.push(ctx.forge.render.ruleDetailed(rule, r));
  }
  const page = paginate(ctx, out);
  return { status: 200, body: page.items, headers: page.headers };
}

export function registerProtectionRoutes(router: Router): void {
  router
    .add("GET", `${REPO}/branches`, listBranches)
    .add("GET", `${REPO}/branches/{branch}/protection`, getProtection)
    .add("PUT", `${REPO}/branches/{branch}/protection`, putProtection)
    .add("DELETE", `${REPO}/branches/{branch}/protection`, deleteProtection)
    .add("GET", `${REPO}/branches/{branch}`, getBranch)
    .add("GET", `${REPO}/rulesets`, listRulesets)
    .add("POST", `${REPO}/rulesets`, createRuleset)
    .add("GET", `${REPO}/rulesets/{ruleset_id}`, getRuleset)
    .add("GET", `${REPO}/rules/branches/{branch}`, rulesForBranch);
}
