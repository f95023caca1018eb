// settle_merged: a merged issue's waiting claim takes the step the core chose: forgotten,
// released (GitHub closed the issue), or the issue closed by us and then released (merge-closes.ts).
import { defineSweep } from "./effect.js";

export const settleMerged = defineSweep("settle_merged", (fleet, _tick, sweep) => fleet.closes.step(sweep));
