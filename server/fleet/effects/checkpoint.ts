// checkpoint: a running worker's periodic checkpoint the core found due (births.ts pushes it).
import { defineSweep } from "./effect.js";

export const checkpoint = defineSweep("checkpoint", (fleet, _tick, sweep) => fleet.checkpoint(sweep.issue, sweep.sha));
