// retry: a failed attempt with retries left starts over on a fresh worker.
import { defineEffect } from "./effect.js";
import { retryIssue } from "./failure.js";

export const retry = defineEffect("retry", async (fleet, tick, action) => {
  await retryIssue(fleet, tick, action);
});
