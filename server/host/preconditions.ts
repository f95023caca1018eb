// The hard preconditions of a fleet, each checked up front and each failing with a message
// that names the fix. `status` shows them in the plan; `project_start` refuses on any error.
import type { FleetConfig } from "../../schemas/config.js";
import type { Label, RepoInfo, RequiredChecks } from "../gh/forge.js";
import { sameLabel } from "../state/markers.js";
import type { LandingChoice } from "../state/landing-choice.js";

export interface Precondition {
  name: string;
  ok: boolean;
  severity: "ok" | "warn" | "error";
  message: string;
}

export interface PreconditionFacts {
  repo: string;
  info: RepoInfo;
  labels: Label[];
  base: string;
  baseSha: string | null;
  config: FleetConfig;
  /** The namespace probe: null when it was not run. */
  namespace: { namespace: string; writable: boolean; fallback: boolean; detail: string } | null;
  requiredChecks: RequiredChecks | null;
  /** The landing chosen for these facts (server/state/landing-choice.ts); null: not assessed. */
  landing?: LandingChoice | null;
  /** Whether landing is asked for (project_start's auto_merge); null: unknown (a plan). */
  autoMerge?: boolean | null;
  /** The numbers the `issues` selectors name: how many, and those that are no issue here (state/named.ts). Absent: none named. */
  named?: { count: number; absent: number[]; pulls: number[] } | null;
}

const ok = (name: string, message: string): Precondition => ({ name, ok: true, severity: "ok", message });
const warn = (name: string, message: string): Precondition => ({ name, ok: true, severity: "warn", message });
const fail = (name: string, message: string): Precondition => ({ name, ok: false, severity: "error", message });

/** Pure: facts in, verdicts out (the facts are gathered by the host). */
export function evaluatePreconditions(facts: PreconditionFacts): Precondition[] {
  const { info, config } = facts;
  const out: Precondition[] = [ok("repository", `${facts.repo} is reachable (default branch ${info.defaultBranch})`)];

  out.push(
    info.permissions.push
      ? ok("permissions", "the token can push branches and merge pull requests")
      : fail(
          "permissions",
          `the token cannot push to ${facts.repo}: use a token with write access (classic: "repo" scope; fine-grained: Contents and Pull requests read/write)`,
        ),
  );

  const ready = config.labels.ready;
  out.push(
    facts.labels.some((l) => sameLabel(l.name, ready))
      ? ok("ready_label", `label "${ready}" exists`)
      : fail(
          "ready_label",
          `label "${ready}" does not exist in ${facts.repo}: create it (gh label create "${ready}") and put it on the issues the fleet may take`,
        ),
  );

  out.push(
    facts.baseSha
      ? ok("base_branch", `base branch "${facts.base}" exists at ${facts.baseSha.slice(0, 12)}`)
      : fail("base_branch", `base branch "${facts.base}" does not exist: push it, or set "base" to an existing branch`),
  );

  const ns = facts.namespace;
  if (ns) {
    if (!ns.writable) {
      out.push(
        fail("claim_namespace", `cannot write refs under ${ns.namespace}/: ${ns.detail}. Allow pushes of refs/afk/* or set "namespace" to "refs/heads/afk"`),
      );
    } else if (ns.fallback) {
      out.push(
        warn(
          "claim_namespace",
          `refs/afk/* is refused (${ns.detail}); claims use ${ns.namespace}/, which are branches: pushes there may trigger "on: push" CI`,
        ),
      );
    } else {
      out.push(ok("claim_namespace", `claim refs can be written under ${ns.namespace}/`));
    }
  }

  const required = facts.requiredChecks;
  if (config.gate.ci === "local") {
    if (required === null || !required.readable) {
      out.push(
        warn(
          "gate",
          `gate.ci is "local" but the protection of "${facts.base}" could not be read (no admin rights?): if it requires status checks, merges will be refused`,
        ),
      );
    } else if (required.contexts.length > 0) {
      out.push(
        fail(
          "gate",
          `gate.ci is "local" but "${facts.base}" requires status checks (${required.contexts.join(", ")}), so GitHub would refuse every merge however green the local gate is: drop the required checks on "${facts.base}" or set gate.ci to "required"`,
        ),
      );
    } else {
      out.push(ok("gate", `local gate: ${config.gate.local_command ?? "(no command)"}`));
    }
  } else if (required && required.readable && required.contexts.length === 0) {
    out.push(ok("gate", `no checks are required on "${facts.base}": every check reported on a PR's head must pass`));
  } else if (required && required.readable) {
    out.push(ok("gate", `required checks on "${facts.base}": ${required.contexts.join(", ")}`));
  } else {
    out.push(warn("gate", `the protection of "${facts.base}" could not be read: every check reported on a PR's head must pass`));
  }
  const landing = facts.landing;
  if (landing) {
    if (landing.severity === "ok") out.push(ok("landing", landing.message));
    else if (landing.severity === "warn") out.push(warn("landing", landing.message));
    else if (facts.autoMerge === true) out.push(fail("landing", landing.message));
    else out.push(warn("landing", `${landing.message} (merges are held, so nothing lands; a start with auto_merge: true is refused until then)`));
  }
  const named = facts.named;
  if (named && named.count > 0) {
    const wrong = namedTypos(facts.repo, named);
    out.push(wrong !== null ? fail("named_issues", wrong) : ok("named_issues", `the ${named.count} number(s) the selectors name are issues of ${facts.repo}`));
  }
  const approvals = required?.approvals ?? 0;
  if (approvals > 0) {
    const needs = `"${facts.base}" requires ${approvals} approving review${approvals === 1 ? "" : "s"}: the fleet never approves its own PRs, so each green PR waits as awaiting_review until a human with write access approves it`;
    if (config.landing.strategy === "push")
      out.push(warn("reviews", `${needs}, and direct pushes to "${facts.base}" are refused: set landing.strategy to "squash" or "merge"`));
    else out.push(ok("reviews", needs));
  }
  return out;
}

/** What is wrong with the numbers the selectors name, or null when each is an issue: a typo must not run the rest silently. */
export function namedTypos(repo: string, named: { absent: readonly number[]; pulls: readonly number[] }): string | null {
  const wrong = [...named.absent.map((n) => `#${n} (no such issue in ${repo})`), ...named.pulls.map((n) => `#${n} (a pull request, not an issue)`)];
  return wrong.length > 0 ? `selectors name ${wrong.join(", ")}: fix selectors[].issues (a typo must not run the rest silently)` : null;
}

export function preconditionsPass(list: readonly Precondition[]): boolean {
  return list.every((p) => p.ok);
}
