// What the host holds per repository (its connection, this instance's lease there, the probed
// claim namespace) and the dry-run plan made from it: preconditions, one gather, one rebuild.
import type { PlanOutput } from "../../schemas/tools.js";
import { gatherSnapshot } from "../gh/gather.js";
import type { Lease } from "../gh/lease.js";
import { rebuild } from "../state/rebuild.js";
import type { Connection } from "./connection.js";
import type { NamespaceProbe } from "./namespace-probe.js";
import { planView } from "./plan.js";
import { evaluatePreconditions } from "./preconditions.js";

/** What the host holds per repository: its instance there, its connection, this instance's lease there, and the ref namespace it may write. */
export interface RepoAccess {
  instance: string;
  conn: Connection;
  lease: Lease;
  /** The claim namespace as probed, or null when no call has needed to write yet. */
  namespace: NamespaceProbe | null;
  /** The preconditions of the last full plan (a plan from a fleet tick reuses them). */
  preconditions?: PlanOutput["preconditions"];
}

/** The dry-run plan of one repository. Acts on nothing. */
export async function planFor(connected: RepoAccess, clock: () => Date): Promise<PlanOutput> {
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
      now,
    }),
    conn.forge.listLabels(),
  ]);
  const preconditions = evaluatePreconditions({
    repo: conn.repo,
    info: conn.info,
    labels,
    base: conn.base,
    baseSha: conn.baseSha,
    config: conn.config,
    namespace,
    requiredChecks: conn.config.gate.ci === "local" ? await conn.forge.requiredChecks(conn.base) : snapshot.requiredChecks,
  });
  connected.preconditions = preconditions;
  const set = rebuild(snapshot, conn.config, instance, now);
  const after = conn.forge.stats();
  return planView({
    set,
    login: conn.login,
    base: conn.base,
    preconditions,
    rateLimit: conn.forge.rateLimit(),
    requests: {
      total: after.total - before.total,
      counted: after.counted - before.counted,
      notModified: after.notModified - before.notModified,
    },
  });
}
