// chooseLanding, table-tested: which landing keeps the base on gated trees, and what is refused.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { chooseLanding, type LandingFacts } from "../server/state/landing-choice.js";

const facts = (over: Partial<LandingFacts>): LandingFacts => ({
  base: "main",
  strategy: "auto",
  allowUntestedRace: false,
  directPush: { allowed: true, why: "" },
  strict: false,
  ...over,
});
const refused = { allowed: false, why: `a ruleset's "pull_request" rule` };
const unknown = { allowed: null, why: "main is protected and its protection could not be read (no admin rights)" };

const rows: { name: string; in: LandingFacts; method: string | null; severity: string; says?: RegExp }[] = [
  { name: "auto, the token may push: a fast-forward push", in: facts({}), method: "push", severity: "ok" },
  {
    name: "auto, the base requires checks and up-to-date branches: squash keeps one commit per landing",
    in: facts({ requiresChecks: true, strict: true }),
    method: "squash",
    severity: "ok",
  },
  {
    name: "auto, the base requires checks but not up to date, the token may push: push the gated head",
    in: facts({ requiresChecks: true }),
    method: "push",
    severity: "ok",
  },
  { name: "auto, push refused, base requires up-to-date branches: squash", in: facts({ directPush: refused, strict: true }), method: "squash", severity: "ok" },
  {
    name: "auto, push refused, no up-to-date rule: refused with the fix",
    in: facts({ directPush: refused }),
    method: null,
    severity: "error",
    says: /pull_request.*require branches to be up to date.*landing\.allow_untested_race: true/,
  },
  {
    name: "auto, push unknown, no up-to-date rule: refused (unknown is not allowed)",
    in: facts({ directPush: unknown }),
    method: null,
    severity: "error",
    says: /is unknown/,
  },
  {
    name: "auto, push refused, the user accepts the race: squash with a warning",
    in: facts({ directPush: refused, allowUntestedRace: true }),
    method: "squash",
    severity: "warn",
  },
  { name: "squash on a strict base: ok", in: facts({ strategy: "squash", strict: true }), method: "squash", severity: "ok" },
  {
    name: "squash on a base without the up-to-date rule: refused, even when push would work",
    in: facts({ strategy: "squash" }),
    method: null,
    severity: "error",
    says: /"auto" or "push"/,
  },
  { name: "merge with the race accepted: merge, warned", in: facts({ strategy: "merge", allowUntestedRace: true }), method: "merge", severity: "warn" },
  { name: "squash, strictness unknown: refused", in: facts({ strategy: "squash", strict: null }), method: null, severity: "error" },
  {
    name: "push where pushing is refused: refused with the fix",
    in: facts({ strategy: "push", directPush: refused }),
    method: null,
    severity: "error",
    says: /cannot work/,
  },
  { name: "push where it is unknown: push, warned", in: facts({ strategy: "push", directPush: unknown }), method: "push", severity: "warn" },
  {
    name: "auto, a required merge queue (push refused, no up-to-date rule): the queue lands, ok",
    in: facts({ mergeQueue: true, directPush: { allowed: false, why: `a ruleset's "merge_queue" rule` }, requiresChecks: true }),
    method: "merge",
    severity: "ok",
    says: /requires GitHub's merge queue: each gated PR is enqueued/,
  },
];

describe("chooseLanding", () => {
  for (const row of rows) {
    it(row.name, () => {
      const choice = chooseLanding(row.in);
      assert.equal(choice.method, row.method);
      assert.equal(choice.severity, row.severity);
      if (row.says) assert.match(choice.message, row.says);
    });
  }
});
