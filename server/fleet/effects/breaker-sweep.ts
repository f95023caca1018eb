// breaker_sweep: the issues a breaker trip owns go back to the backlog, their claims released
// (birth-guard.ts sweeps them; one that fails stays the breaker's for the next tick).
import { defineSweep } from "./effect.js";
import { releasedBoard } from "../drain.js";

export const breakerSweep = defineSweep("breaker_sweep", async (fleet, tick, sweep) => {
  const mine = sweep.claims.flatMap((c) => (c.sha === null ? [] : [{ issue: c.issue, sha: c.sha }]));
  await fleet.guard.sweep(
    { mine },
    { issues: [...tick.issues.values()] },
    {
      forge: fleet.deps.conn.forge,
      lease: fleet.deps.lease,
      config: fleet.registration.config,
      memory: fleet.memory,
      log: fleet.log,
      onReleased: (n) => releasedBoard(fleet, n, fleet.guard.releasedNote(n)),
    },
  );
});
