// post_verdict: a worker's verdict (no PR: already satisfied, blocked, giving up), one comment
// per attempt: durable state, not a note (a marker a human does not see rendered). A restart or a
// peer that takes the claim over finds no worker and reads the latest verdict back from the
// issue's comments (claim-facts.ts) to close, wait or escalate, instead of continuing a worker
// that had finished.
import { formatVerdict } from "../../state/markers.js";
import { defineSweep } from "./effect.js";

export const postVerdict = defineSweep("post_verdict", async (fleet, _tick, sweep) => {
  fleet.memory.of(sweep.issue).verdictsPosted.add(sweep.attempt);
  fleet.ledger.verdict(sweep.issue, sweep.attempt, sweep.verdict);
  // One request per attempt that ends in a verdict (see above for why it must be durable).
  await fleet.deps.conn.forge.createComment(sweep.issue, formatVerdict(sweep.verdict));
});
