// hold: a green PR waits because the project was started without auto_merge.
import { defineEffect } from "./effect.js";

export const hold = defineEffect("hold", async (_fleet, tick, action) => {
  tick.report.merges_held.push(action.issue);
});
