// wrap_up_recovered: a landing a crash kept from its wrap-up waits to settle like a merge of
// this process (merge-closes.ts), and gets the wrap-up it missed (recovered.ts).
import { defineSweep } from "./effect.js";
import { wrapUpRecovered as wrapUp } from "../recovered.js";

export const wrapUpRecovered = defineSweep("wrap_up_recovered", async (fleet, _tick, sweep) => {
  fleet.closes.recovered(sweep.landed, sweep.claimSha, sweep.mergedAt);
  await wrapUp(fleet, sweep.landed, sweep.attempt);
});
