// The applier: every action kind decide can return, and every housekeeping sweep
// (state/decide/sweeps.ts), mapped to its one handler.
import type { Action } from "../../state/decide.js";
import type { Sweep, SweepKind } from "../../state/decide/sweeps.js";
import { breakerSweep } from "./breaker-sweep.js";
import { checkpoint } from "./checkpoint.js";
import { collectGarbage } from "./collect-garbage.js";
import { dropWorker } from "./drop-worker.js";
import { postVerdict } from "./post-verdict.js";
import { settleMerged } from "./settle-merged.js";
import { wrapUpRecovered } from "./wrap-up-recovered.js";
import { adopt } from "./adopt-pr.js";
import { awaitReview } from "./await-review.js";
import { review } from "./review.js";
import { reviewResult } from "./review-result.js";
import { closeDone } from "./close-done.js";
import { closeEpic } from "./close-epic.js";
import { dispatch } from "./dispatch.js";
import type { ActionKind, Effect, FleetRuntime, SweepEffect, TickScope } from "./effect.js";
import { escalate } from "./escalate.js";
import { hold } from "./hold.js";
import { kill } from "./kill.js";
import { land } from "./land.js";
import { landTrain } from "./land-train.js";
import { openPr } from "./open-pr.js";
import { reclaim } from "./reclaim.js";
import { recover } from "./recover.js";
import { redispatch } from "./redispatch.js";
import { release } from "./release.js";
import { retry } from "./retry.js";
import { rerunChecks } from "./rerun-checks.js";

const effects: { [K in ActionKind]: Effect<K> } = {
  release,
  kill,
  hold,
  await_review: awaitReview,
  review,
  review_result: reviewResult,
  land,
  land_train: landTrain,
  retry,
  rerun_checks: rerunChecks,
  escalate,
  open_pr: openPr,
  close_done: closeDone,
  close_epic: closeEpic,
  redispatch,
  recover,
  reclaim,
  adopt,
  dispatch,
};

const sweeps: { [K in SweepKind]: SweepEffect<K> } = {
  collect_garbage: collectGarbage,
  breaker_sweep: breakerSweep,
  wrap_up_recovered: wrapUpRecovered,
  settle_merged: settleMerged,
  drop_worker: dropWorker,
  checkpoint,
  post_verdict: postVerdict,
};

export function applySweep(fleet: FleetRuntime, tick: TickScope, sweep: Sweep): Promise<void> {
  const effect = sweeps[sweep.kind] as SweepEffect<SweepKind>;
  return effect.apply(fleet, tick, sweep as never);
}

export function applyAction(fleet: FleetRuntime, tick: TickScope, action: Action): Promise<void> {
  const effect = effects[action.kind] as Effect<ActionKind>;
  return effect.apply(fleet, tick, action as never);
}

export type { FleetRuntime, TickScope } from "./effect.js";
