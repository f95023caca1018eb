// What the host holds per repository (its connection, this instance's lease there, the probed
// claim namespace) and the dry-run plan made from it: preconditions, one gather, one rebuild.
import type { PlanOutput } from "../../schemas/tools.js";
import { gatherSnapshot } from "../gh/gather.js";
import type { Lease } from "../gh/lease.js";
import { rebuild } from "../state/rebuild.js";
import { knownEngines } from "../agent/engines.js";
import type { RepoConnection } from "../gh/repo-connection.js";
import type { NamespaceProbe } from "./namespace-probe.js";
import { planView } from "./plan.js";
import { chooseLanding, type LandingChoice } from "../state/landing-choice.js";
import { evaluatePreconditions } from "./preconditions.js";
import { effectiveSelectors } from "../state/config.js";
import { namedNumbers, notIssues } from "../state/named.js";
import type { RoutePolicy } from "../state/route.js";
import { lookUpNamed } from "./named-lookup.js";

/** What the host holds per repository: its instance there, its connection, this instance's lease there, and the ref namespace it may write. */
export interface RepoAccess {
  instance: string;
  conn: RepoConnection;
  lease: Lease;
  /** The claim namespace as probed, or null when no call has needed to write yet. */
  namespace: NamespaceProbe | null;
  /** The preconditions of the last full plan (a plan from a fleet tick reuses them). */
  preconditions?: PlanOutput["preconditions"];
  /** Named numbers found not open, by what they are (a kind never changes: read once). */
  numberKinds?: Map<number, "issue" | "pull">;
}

/** The dry-run plan of one repository. Acts on nothing. */
export async function planFor(connected: RepoAccess, clock: () => Date): Promise<PlanOutput> {
  return (await assess(connected, clock, null)).plan;
}

/**
 * The plan, and the landing chosen for the base as it is protected now (autoMerge: null =
 * unknown). `routing`: an engine start's routes, which each dispatched issue then says.
 */
export async function assess(
  connected: RepoAccess,
  clock: () => Date,
  autoMerge: boolean | null,
  routing?: { policy: RoutePolicy; defaultModels: Readonly<Record<string, string | null>> },
): Promise<{ plan: PlanOutput; landing: LandingChoice }> {
  const { conn, namespace, instance } = connected;
  const before = conn.forge.stats();
  const now = clock();
  const [snapshot, labels] = await Promise.all([
    gatherSnapshot(conn.forge, conn.refs, {
      login: conn.login,
      defaultBranch: conn.info.defaultBranch,
      base: conn.base,
      namespace: namespace?.namespace ?? conn.config.namespace,
      gateMode: conn.config.gate.ci,
      branchPrefix: conn.config.worktree.branch_prefix,
      reviews: conn.config.review.command !== null,
      memory: conn.gatherMemory,
      now,
    }),
    // One request per start or plan: which of the fleet's labels exist (those found are never created).
    conn.forge.listLabels(),
  ]);
  // Rules and protection, conditional requests (the gather read them already under required CI),
  // and whether the base takes a plain push: the landing strategy is chosen from them.
  const requiredChecks = conn.config.gate.ci === "local" ? await conn.forge.requiredChecks(conn.base) : snapshot.requiredChecks;
  const directPush = conn.baseSha
    ? await conn.forge.directPush(conn.base).catch((error: unknown) => ({ allowed: null, why: `its rules could not be read: ${(error as Error).message}` }))
    : { allowed: null, why: "the base does not exist" };
  const landing = chooseLanding({
    base: conn.base,
    strategy: conn.config.landing.strategy,
    allowUntestedRace: conn.config.landing.allow_untested_race,
    directPush: conn.info.permissions.push ? directPush : { allowed: false, why: "the token has no push access" },
    strict: requiredChecks.strict ? true : requiredChecks.readable ? false : null,
    requiresChecks: requiredChecks.contexts.length > 0,
    mergeQueue: conn.config.gate.ci !== "local" && requiredChecks.mergeQueue === true,
  });
  // The numbers the selectors name that are not open: closed, a pull request, or no issue at all.
  const named = namedNumbers(effectiveSelectors(conn.config));
  const open = new Set([...snapshot.issues.map((i) => i.number), ...snapshot.pulls.map((p) => p.number)]);
  const kinds = named.length > 0 ? await lookUpNamed(conn.forge, named, open, (connected.numberKinds ??= new Map())) : new Map();
  const namedSet = new Set(named.map((n) => n.number));
  for (const p of snapshot.pulls) if (namedSet.has(p.number)) kinds.set(p.number, "pull");
  const preconditions = evaluatePreconditions({
    repo: conn.repo,
    info: conn.info,
    labels,
    base: conn.base,
    baseSha: conn.baseSha,
    config: conn.config,
    namespace,
    requiredChecks,
    landing,
    autoMerge,
    named: named.length > 0 ? { count: named.length, ...notIssues(named, kinds) } : null,
  });
  connected.preconditions = preconditions;
  // A dry-run plan knows no start: an afk-engine/ label may name any agent CLI the config knows.
  const set = rebuild(snapshot, conn.config, instance, now, { engines: knownEngines(conn.config), kinds, ...(routing ? { policy: routing.policy } : {}) });
  const after = conn.forge.stats();
  const plan = planView({
    set,
    login: conn.login,
    base: conn.base,
    preconditions,
    rateLimit: conn.forge.rateLimit(),
    ...(routing ? { defaultModels: routing.defaultModels } : {}),
    requests: {
      total: after.total - before.total,
      counted: after.counted - before.counted,
      notModified: after.notModified - before.notModified,
    },
  });
  return { plan, landing };
}
