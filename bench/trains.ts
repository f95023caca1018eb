// Landing trains against serial landing: 12 green PRs waiting at once, a simulated CI that takes
// `ciSeconds` per run (the demo's CI runner running a script that sleeps, time scale 1), required
// checks, push landings. Three scenarios, each on its own local forge, run side by side:
//   serial — each PR through landPull as the fleet lands it today: the first lands, each next one
//            is synced with the moved base and lands once CI passed on the synced head;
//   train  — the same 12 through landTrain (landing.train.max 12): one candidate, one CI run;
//   bad    — a train of 12 where one PR breaks the tests: bisected; the 11 good ones land.
// The landing layer is driven directly (what the fleet's land and land_train effects call), with
// CI watched every second in both modes, so the fleet's tick cadence is not in the figures.
import { setTimeout as sleep } from "node:timers/promises";
import { startCiRunner } from "../server/demo/ci-runner.js";
import { landPull, type LandResult } from "../server/landing/land.js";
import { landTrain, type TrainMember } from "../server/landing/train.js";
import { evaluateGate } from "../server/state/gate.js";
import { api, repoPath, startTestForge, type TestForge } from "../test/support/forge-fixtures.js";
import { fleetPr, gateScript, trainConfig, trainContext, trainHost, type TrainHost } from "../test/support/train-fixtures.js";
import { round, type BenchContext, type Figure, type Section, type SectionResult } from "./section.js";

const REQUIRED = { contexts: ["test"], strict: false, source: "protection" as const, readable: true };

interface Outcome {
  seconds: number;
  landed: number;
  ciRuns: number;
  /** Gate runs when the bad PR was identified (bad scenario). */
  foundAfter: number | null;
  badFound: boolean;
}

async function world(
  ctx: BenchContext,
  prs: number,
  bad: number | null,
  ciSeconds: number,
  tag: string,
): Promise<{ forge: TestForge; h: TrainHost; members: TrainMember[]; stopCi: () => Promise<number> }> {
  const forge = await startTestForge();
  ctx.defer(() => forge.dispose());
  // One instance per scenario: landings are serialized per repository and instance in a process.
  const h = await trainHost(forge, `bench-${tag}`);
  const members: TrainMember[] = [];
  for (let i = 0; i < prs; i++) {
    const m = await fleetPr(h, `${tag} ${i + 1}`, i === bad ? { BAD: "bad\n", [`${tag}-${i}.txt`]: "x\n" } : { [`${tag}-${i}.txt`]: `${tag} ${i}\n` });
    // Green at once: each head passed its own CI already.
    await api(forge, "POST", repoPath(forge, "/check-runs"), { name: "test", head_sha: m.head, status: "completed", conclusion: "success" });
    members.push(m);
  }
  const gate = await gateScript(ciSeconds * 1000);
  const ci = startCiRunner({
    apiUrl: forge.apiUrl,
    token: forge.token,
    repo: forge.repo,
    gitUrl: forge.gitUrl,
    workDir: await ctx.tempDir(`afk-bench-ci-${tag}-`),
    intervalMs: 500,
    testCommand: gate.argv,
    timeoutMs: (ciSeconds + 120) * 1000,
  });
  let stopped = false;
  const stopCi = async (): Promise<number> => {
    if (!stopped) await ci.stop();
    stopped = true;
    return ci.stats().runs;
  };
  ctx.defer(async () => void (await stopCi()));
  return { forge, h, members, stopCi };
}

async function serial(ctx: BenchContext, prs: number, ciSeconds: number): Promise<Outcome> {
  const { h, members, stopCi } = await world(ctx, prs, null, ciSeconds, "serial");
  const lctx = trainContext(h, trainConfig("required"), { requiredChecks: REQUIRED });
  const t0 = performance.now();
  let landed = 0;
  for (const member of members) {
    let head = member.head;
    for (let pass = 0; pass < 20; pass++) {
      const r: LandResult = await landPull(lctx, { ...member, head });
      if (r.outcome === "merged") {
        landed += 1;
        break;
      }
      if (r.outcome === "synced") head = r.head;
      else if (r.outcome !== "retry_later") break;
      // Watch the head's checks every second, as the fleet's event-driven wait does at best.
      while (evaluateGate(await h.gh.checksFor(head), REQUIRED).state === "pending") await sleep(1000);
    }
    ctx.log(`trains bench: serial ${landed}/${members.length} landed after ${round((performance.now() - t0) / 1000, 0)} s`);
  }
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, landed, ciRuns: await stopCi(), foundAfter: null, badFound: false };
}

async function trains(ctx: BenchContext, prs: number, bad: number | null, ciSeconds: number, tag: string): Promise<Outcome> {
  const { h, members, stopCi } = await world(ctx, prs, bad, ciSeconds, tag);
  const lctx = trainContext(h, trainConfig("required", null, prs), { requiredChecks: REQUIRED });
  const t0 = performance.now();
  let waiting = members;
  let landed = 0;
  let foundAfter: number | null = null;
  let badFound = false;
  for (let pass = 0; pass < 5 && waiting.length > 0; pass++) {
    const r = await landTrain(lctx, waiting, { pollMs: 1000 });
    landed += r.members.filter((m) => m.outcome === "merged").length;
    const red = r.members.find((m) => m.outcome === "gate_red");
    if (red && red.outcome === "gate_red") {
      foundAfter = red.gateRuns;
      badFound = bad !== null && red.member.issue === members[bad]!.issue;
    }
    const decided = new Set(r.members.filter((m) => m.outcome !== "retry_later").map((m) => m.member.issue));
    waiting = waiting.filter((m) => !decided.has(m.issue));
    ctx.log(`trains bench: ${tag} ${landed}/${members.length} landed, ${r.gateRuns} gate run(s) after ${round((performance.now() - t0) / 1000, 0)} s`);
  }
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, landed, ciRuns: await stopCi(), foundAfter, badFound };
}

export const trainsSection: Section = {
  name: "trains",
  summary: "12 green PRs at once, CI 60 s (simulated, time scale 1): serial landing vs one train, and a train with 1 bad PR",
  async run(ctx: BenchContext): Promise<SectionResult> {
    const prs = 12;
    const ciSeconds = Number(process.env.AFK_BENCH_TRAIN_CI_SECONDS ?? 60);
    const [s, t, b] = await Promise.all([serial(ctx, prs, ciSeconds), trains(ctx, prs, null, ciSeconds, "train"), trains(ctx, prs, 5, ciSeconds, "bad")]);
    const ratio = s.seconds > 0 ? t.seconds / s.seconds : null;
    const figures: Figure[] = [
      { key: "ci_seconds", label: "simulated CI per run", value: ciSeconds, unit: "s" },
      { key: "serial_seconds", label: `serial: time to land all ${prs}`, value: round(s.seconds, 0), unit: "s" },
      { key: "serial_landed", label: "serial: landed", value: s.landed },
      { key: "serial_ci_runs", label: "serial: CI runs", value: s.ciRuns },
      { key: "train_seconds", label: `train: time to land all ${prs}`, value: round(t.seconds, 0), unit: "s" },
      { key: "train_landed", label: "train: landed", value: t.landed },
      { key: "train_ci_runs", label: "train: CI runs", value: t.ciRuns },
      {
        key: "train_vs_serial",
        label: "train time / serial time",
        value: ratio === null ? null : round(ratio, 2),
        goal: "≤ 0.33",
        ok: ratio !== null && ratio <= 1 / 3 && t.landed === prs,
      },
      { key: "bad_seconds", label: "1 bad of 12: time to land the good ones", value: round(b.seconds, 0), unit: "s" },
      { key: "bad_good_landed", label: "1 bad of 12: good ones landed", value: b.landed, goal: "11", ok: b.landed === prs - 1 },
      {
        key: "bad_found_after",
        label: "1 bad of 12: gate runs until the bad one was found",
        value: b.foundAfter,
        goal: "≤ 5",
        ok: b.badFound && b.foundAfter !== null && b.foundAfter <= 5,
      },
      { key: "bad_ci_runs", label: "1 bad of 12: CI runs in all", value: b.ciRuns },
    ];
    return { figures, notes: [`CI watched every 1 s in both modes; AFK_BENCH_TRAIN_CI_SECONDS=${ciSeconds}`] };
  },
};
