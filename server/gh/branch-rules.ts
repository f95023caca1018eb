// What a branch's rules and protection say, read through GitHub's REST API: the checks a landing
// must pass (rulesets and branch protection together, with strictness, required approvals and
// the merge queue), and whether the fleet's token may push to the branch directly. Each read is
// one request (GET rules/branches, GET branches, GET branches/protection), conditional like all.
import { ForgeError } from "./errors.js";
import type { DirectPush, RequiredChecks } from "./forge.js";
import type { RawBranch, RawProtection, RawRule } from "./github-wire.js";

type Params = Record<string, unknown>;

/** The reads these take, as the forge makes them (its throttling, retries, ETags, error mapping). */
export interface BranchIo {
  get<T>(route: string, params: Params, what: string): Promise<T>;
  all<T>(route: string, params: Params, what: string): Promise<T[]>;
}

/** Ruleset rules that refuse a plain push to a branch (GitHub's rule types). */
const PUSH_REFUSING_RULES = new Set(["pull_request", "update", "required_deployments", "required_signatures", "merge_queue"]);

/**
 * `protectionAnswers`: the branches whose protection endpoint answered last time (the forge
 * keeps it): their protection alone is read, 304 while unchanged.
 */
export async function readRequiredChecks(io: BranchIo, branch: string, protectionAnswers: Set<string>): Promise<RequiredChecks> {
  const fromRules = new Set<string>();
  let strict = false;
  let approvals = 0;
  let dismissStale = false;
  let rulesReadable = true;
  let mergeQueue = false;
  try {
    const rules = await io.all<RawRule>("GET /repos/{owner}/{repo}/rules/branches/{branch}", { branch }, `read the rules of branch ${branch}`);
    for (const rule of rules) {
      if (rule.type === "merge_queue") mergeQueue = true;
      if (rule.type === "pull_request") {
        approvals = Math.max(approvals, rule.parameters?.required_approving_review_count ?? 0);
        dismissStale ||= rule.parameters?.dismiss_stale_reviews_on_push === true;
      }
      if (rule.type !== "required_status_checks") continue;
      for (const check of rule.parameters?.required_status_checks ?? []) if (check.context) fromRules.add(check.context);
      if (rule.parameters?.strict_required_status_checks_policy) strict = true;
    }
  } catch (error) {
    if (!(error instanceof ForgeError) || (error.kind !== "not_found" && error.kind !== "forbidden")) throw error;
    rulesReadable = false;
  }

  const fromProtection = new Set<string>();
  let protectionReadable = true;
  const readProtection = (): Promise<RawProtection | null> =>
    io
      .get<RawProtection>("GET /repos/{owner}/{repo}/branches/{branch}/protection", { branch }, `read the protection of branch ${branch}`)
      .catch((error: unknown) => {
        if (error instanceof ForgeError && (error.kind === "not_found" || error.kind === "forbidden")) return null;
        throw error;
      });
  const useDetail = (detail: RawProtection, withContexts: boolean): void => {
    const required = detail.required_status_checks;
    if (withContexts) {
      for (const context of required?.contexts ?? []) fromProtection.add(context);
      for (const check of required?.checks ?? []) if (check.context) fromProtection.add(check.context);
    }
    strict ||= required?.strict ?? false;
    const reviews = detail.required_pull_request_reviews;
    if (reviews) {
      approvals = Math.max(approvals, reviews.required_approving_review_count ?? 1);
      dismissStale ||= reviews.dismiss_stale_reviews === true;
    }
  };
  // The branch summary changes with every commit on the branch (one more request per landing),
  // the protection only when the protection does: once the protection answered (admin rights),
  // it alone is read, 304 while unchanged; the summary again only when it stops answering.
  const first = protectionAnswers.has(branch) ? await readProtection() : null;
  if (first) useDetail(first, true);
  else {
    protectionAnswers.delete(branch);
    try {
      const raw = await io.get<RawBranch>("GET /repos/{owner}/{repo}/branches/{branch}", { branch }, `read branch ${branch}`);
      const required = raw.protection?.required_status_checks;
      if (raw.protected && required && required.enforcement_level !== "off") {
        for (const context of required.contexts ?? []) fromProtection.add(context);
        for (const check of required.checks ?? []) if (check.context) fromProtection.add(check.context);
        if (required.strict !== undefined) strict ||= required.strict;
      }
      if (raw.protected) {
        // The summary shows neither `strict` nor required reviews; the protection endpoint has
        // both but needs admin rights (without them, say protection is unreadable).
        const detail = await readProtection();
        if (detail) {
          useDetail(detail, false);
          protectionAnswers.add(branch);
        } else protectionReadable = false;
      }
    } catch (error) {
      if (!(error instanceof ForgeError) || error.kind !== "forbidden") throw error;
      protectionReadable = false;
    }
  }

  const contexts = [...new Set([...fromRules, ...fromProtection])].sort();
  const source = fromRules.size > 0 && fromProtection.size > 0 ? "both" : fromRules.size > 0 ? "rulesets" : fromProtection.size > 0 ? "protection" : "none";
  return {
    contexts,
    strict,
    source,
    readable: rulesReadable && protectionReadable,
    approvals,
    dismissStaleApprovals: dismissStale,
    ...(mergeQueue ? { mergeQueue } : {}),
  };
}

export async function readDirectPush(io: BranchIo, branch: string): Promise<DirectPush> {
  const refusing: string[] = [];
  try {
    const rules = await io.all<RawRule>("GET /repos/{owner}/{repo}/rules/branches/{branch}", { branch }, `read the rules of branch ${branch}`);
    for (const rule of rules) if (rule.type && PUSH_REFUSING_RULES.has(rule.type)) refusing.push(`a ruleset's "${rule.type}" rule`);
  } catch (error) {
    if (!(error instanceof ForgeError) || (error.kind !== "not_found" && error.kind !== "forbidden")) throw error;
    return { allowed: null, why: `the rules of ${branch} could not be read` };
  }
  const raw = await io.get<RawBranch>("GET /repos/{owner}/{repo}/branches/{branch}", { branch }, `read branch ${branch}`);
  if (raw.protected) {
    try {
      const detail = await io.get<RawProtection>(
        "GET /repos/{owner}/{repo}/branches/{branch}/protection",
        { branch },
        `read the protection of branch ${branch}`,
      );
      if (detail.required_pull_request_reviews) refusing.push("branch protection requiring pull request reviews");
      if (detail.restrictions) refusing.push("branch protection restricting who may push");
    } catch (error) {
      if (!(error instanceof ForgeError) || (error.kind !== "not_found" && error.kind !== "forbidden")) throw error;
      if (refusing.length === 0) return { allowed: null, why: `${branch} is protected and its protection could not be read (no admin rights)` };
    }
  }
  return refusing.length > 0 ? { allowed: false, why: refusing.join(" and ") } : { allowed: true, why: "" };
}
