// Which landing keeps the base on gated trees (the Not Rocket Science Rule by default). A fast-
// forward push of the gated head, fenced by a lease on the base tip, cannot land anything else;
// the merge API can, unless the base requires branches to be up to date (GitHub then refuses a
// merge whose head does not contain the base). Pure: facts in, a choice and its words out.
import type { FleetConfig } from "../../schemas/config.js";

export type LandingMethod = "push" | "squash" | "merge";

export interface LandingFacts {
  base: string;
  strategy: FleetConfig["landing"]["strategy"];
  allowUntestedRace: boolean;
  /** May the token fast-forward the base by a push? null: unknown. */
  directPush: { allowed: boolean | null; why: string };
  /** Does the base require branches to be up to date? null: unknown. */
  strict: boolean | null;
  /** Does the base require status checks? A push landing then moves it to the gated head itself. */
  requiresChecks?: boolean;
  /** Does the base require GitHub's merge queue (and the gate is CI)? Then every landing is an enqueue. */
  mergeQueue?: boolean;
}

export interface LandingChoice {
  /** The landing to use; null when none is acceptable (auto-merge must be refused). */
  method: LandingMethod | null;
  severity: "ok" | "warn" | "error";
  message: string;
}

const OPT_OUT = "landing.allow_untested_race: true";

export function chooseLanding(f: LandingFacts): LandingChoice {
  const base = JSON.stringify(f.base);
  const pushRefused = f.directPush.allowed === false ? `the token may not push to ${base} (${f.directPush.why})` : null;
  const race =
    `${base} does not require branches to be up to date, so a commit landing on it inside the merge call would be merged with the PR unseen, ` +
    `putting a tree no gate ran on the base`;
  const requireUpToDate = `require branches to be up to date before merging on ${base} (branch protection or a ruleset)`;
  const mergeApi = (method: "squash" | "merge"): LandingChoice => {
    if (f.strict === true)
      return { method, severity: "ok", message: `${method} through the merge API; ${base} requires up-to-date branches, so only gated trees land` };
    if (f.allowUntestedRace) return { method, severity: "warn", message: `${method} through the merge API although ${race} (accepted by ${OPT_OUT})` };
    return {
      method: null,
      severity: "error",
      message: `${method} through the merge API is refused: ${race}. Fix: ${requireUpToDate}, or use landing.strategy "auto" or "push" where the token may push to ${base}, or accept the race with ${OPT_OUT}`,
    };
  };
  if (f.mergeQueue) {
    // The queue, not the strategy, lands: it tests each merge group and fast-forwards the base to it.
    return {
      method: "merge",
      severity: "ok",
      message: `${base} requires GitHub's merge queue: each gated PR is enqueued, and the queue moves ${base} only to merge groups whose required checks passed`,
    };
  }
  switch (f.strategy) {
    case "push":
      if (pushRefused)
        return {
          method: null,
          severity: "error",
          message: `strategy "push" cannot work: ${pushRefused}. Fix: use landing.strategy "auto" and ${requireUpToDate}`,
        };
      if (f.directPush.allowed === null)
        return {
          method: "push",
          severity: "warn",
          message: `fast-forward push to ${base}, but whether the token may push there is unknown (${f.directPush.why}); a refused push is retried, never forced`,
        };
      return { method: "push", severity: "ok", message: `fast-forward push of each gated head to ${base}, so the base only ever moves to a gated tree` };
    case "squash":
    case "merge":
      return mergeApi(f.strategy);
    case "auto":
      // A push under required checks must move the base to the head itself, whose first-parent
      // line is the branch's: where the merge API is safe too, it keeps one commit per landing.
      if (f.directPush.allowed === true && !f.requiresChecks)
        return {
          method: "push",
          severity: "ok",
          message: `auto: fast-forward push of each gated head to ${base}, so the base only ever moves to a gated tree`,
        };
      if (f.strict === true)
        return {
          method: "squash",
          severity: "ok",
          message: `auto: squash through the merge API; ${base} requires up-to-date branches, so only gated trees land`,
        };
      if (f.directPush.allowed === true)
        return {
          method: "push",
          severity: "ok",
          message: `auto: fast-forward push of each gated head to ${base}, so the base only ever moves to a gated tree`,
        };
      if (f.allowUntestedRace)
        return { method: "squash", severity: "warn", message: `auto: squash through the merge API although ${race} (accepted by ${OPT_OUT})` };
      return {
        method: null,
        severity: "error",
        message:
          `no landing keeps ${base} on gated trees: ${pushRefused ?? `whether the token may push to ${base} is unknown (${f.directPush.why})`}, and ${race}. ` +
          `Fix: ${requireUpToDate}, or let the token push to ${base}; or accept the race with ${OPT_OUT}`,
      };
  }
}
