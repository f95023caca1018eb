// drop_worker: a worker whose claim is no longer ours (taken over by another instance, or gone)
// must not work on: the issue may already have its next worker elsewhere (one worker per issue).
import { defineSweep } from "./effect.js";

export const dropWorker = defineSweep("drop_worker", async (fleet, _tick, sweep) => {
  const n = sweep.issue;
  const run = fleet.memory.run(n);
  if (sweep.kill && run) {
    fleet.log("warn", "claim_lost", `#${n}: our claim is gone (taken over or deleted); ending its worker`, n);
    await run.handle.kill("the claim was lost");
  }
  fleet.memory.forget(n);
});
