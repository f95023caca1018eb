// release: let go of a claim (the issue closed, a human took it back, a stop drained it).
import { defineEffect } from "./effect.js";
import { releasedBoard } from "../drain.js";

export const release = defineEffect("release", async (fleet, tick, action) => {
  const run = fleet.memory.run(action.issue);
  if (action.killWorker && run) await run.handle.stop(action.why);
  await fleet.deps.lease.release(action.issue, action.sha);
  fleet.memory.forget(action.issue);
  tick.report.released.push(action.issue);
  fleet.log("info", "released", `#${action.issue}: claim released (${action.why})`, action.issue);
  // Where the issue stands, as the working set shows it: the board must not call a closed issue
  // "back in the backlog", nor one a human took back.
  const claim = tick.set.mine.find((m) => m.issue === action.issue);
  const left = claim === undefined ? undefined : !claim.issueOpen ? "closed" : claim.reservedByHuman ? "reserved" : undefined;
  await releasedBoard(fleet, action.issue, action.why, left);
});
