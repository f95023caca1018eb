// collect_garbage: the sweep of dead refs the core found due (garbage.ts deletes them).
import { defineSweep } from "./effect.js";
import { errorData, errorText } from "../supervisor-log.js";

export const collectGarbage = defineSweep("collect_garbage", async (fleet) => {
  await fleet.garbage
    .collect()
    .catch((error: unknown) =>
      fleet.log("warn", "garbage_failed", `garbage sweep failed (tried again later): ${errorText(error)}`, undefined, errorData(error)),
    );
});
