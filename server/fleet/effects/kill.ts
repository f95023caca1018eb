// kill: end a worker that went quiet past the kill threshold with no busy child.
import { defineEffect } from "./effect.js";

export const kill = defineEffect("kill", async (fleet, _tick, action) => {
  const run = fleet.memory.run(action.issue);
  if (!run) return;
  const memory = fleet.memory.of(action.issue);
  memory.kills += 1;
  fleet.deps.lanes.append("liveness", { level: "warn", event: "killed", msg: `#${action.issue}: ${action.why}`, issue: action.issue, ...run.handle.tags });
  await run.handle.stop(action.why);
  await run.settling;
  fleet.memory.endRun(action.issue);
});
