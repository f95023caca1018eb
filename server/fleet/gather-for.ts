// One snapshot of a repository for the fleet's tick: the registration's base, namespace and
// gate mode handed to the one gatherer in server/gh.
import type { Snapshot } from "../state/snapshot.js";
import { gatherSnapshot } from "../gh/gather.js";
import type { FleetConfig } from "../../schemas/config.js";
import type { FleetDeps } from "./registration.js";

export function gatherFor(
  deps: Pick<FleetDeps, "conn" | "namespace" | "lease">,
  registration: { base: string; config: FleetConfig },
  now: Date,
  expectClosed?: ReadonlySet<number>,
): Promise<Snapshot> {
  const { conn } = deps;
  return gatherSnapshot(conn.forge, conn.refs, {
    login: conn.login,
    defaultBranch: conn.info.defaultBranch,
    base: registration.base,
    namespace: deps.namespace,
    gateMode: registration.config.gate.ci,
    branchPrefix: registration.config.worktree.branch_prefix,
    reviews: registration.config.review.command !== null,
    ...(expectClosed && expectClosed.size > 0 ? { expectClosed } : {}),
    instance: deps.lease.instance,
    memory: conn.gatherMemory,
    now,
  });
}
