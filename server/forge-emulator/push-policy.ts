// Branch protection on git pushes, as GitHub's "protected branch hook" applies it: a push
// that updates a protected branch must carry a commit whose required checks passed (and is
// refused outright when the branch requires approving reviews, or a ruleset demands a pull
// request: those need a PR; a required merge queue: only the queue moves it), and a protected
// branch may not be deleted. Admins bypass classic
// protection unless it enforces admins; rulesets here have no bypass actors. Decided from the
// push's command list, before git receives anything, so a refused push changes nothing.
import { ZERO_SHA } from "./bare-git.js";
import { checkOutcomes } from "./checks.js";
import type { ForgeEmulator } from "./core.js";
import type { RefCommand } from "./pkt-line.js";
import { MERGE_QUEUE_REQUIRED, mergeQueueFor, requiredChecksFor, requiredReviewsFor, rulesetsFor } from "./protection.js";
import type { UserRecord } from "./state.js";

export interface PushRefusal {
  /** ref -> the short reason git prints in parentheses. */
  reasons: Map<string, string>;
  /** Lines git prints as "remote: ...". */
  message: string;
}

export function pushRefusal(forge: ForgeEmulator, user: UserRecord, commands: RefCommand[]): PushRefusal | null {
  const problems: string[] = [];
  const reasons = new Map<string, string>();
  for (const c of commands) {
    if (!c.ref.startsWith("refs/heads/")) continue;
    const branch = c.ref.slice("refs/heads/".length);
    const protection = forge.state.protection(branch);
    const rulesets = rulesetsFor(forge, branch);
    if (!protection && rulesets.length === 0) continue;
    const bypass = user.admin && protection !== undefined && !protection.enforceAdmins && rulesets.length === 0;
    if (bypass) continue;
    const why: string[] = [];
    if (c.new === ZERO_SHA) {
      const rulesetForbids = rulesets.some((r) => r.rules.some((rule) => rule.type === "deletion"));
      if ((protection && !protection.allowDeletions) || rulesetForbids) why.push("Cannot delete this protected branch.");
    } else if (c.old !== ZERO_SHA) {
      // As on GitHub, a ruleset demanding a pull request or restricting updates refuses a plain push.
      const refusing = rulesets.flatMap((r) => r.rules).find((rule) => rule.type === "pull_request" || rule.type === "update");
      if (refusing?.type === "update") why.push("Cannot update this protected ref.");
      else if (refusing || requiredReviewsFor(forge, branch).count > 0) why.push("Changes must be made through a pull request.");
      if (mergeQueueFor(forge, branch)) why.push(`${MERGE_QUEUE_REQUIRED}.`);
      const required = requiredChecksFor(forge, branch);
      const outcomes = checkOutcomes(forge, c.new);
      for (const context of required.contexts) {
        const o = outcomes.get(context);
        if (o === "failure") why.push(`Required status check "${context}" is failing.`);
        else if (o !== "success") why.push(`Required status check "${context}" is expected.`);
      }
    }
    if (why.length > 0) {
      reasons.set(c.ref, "protected branch hook declined");
      problems.push(`error: GH006: Protected branch update failed for ${c.ref}.`, ...why.map((w) => `error: ${w}`));
    }
  }
  return problems.length === 0 ? null : { reasons, message: problems.join("\n") };
}
