// Landing trains against the local forge over real HTTP with real git: trains of 1, 2 and 5
// under required CI (the demo's CI runner tests each train's draft PR) and under the local gate,
// a red train bisected to its one bad PR, a base a human moves while the train is gated, and two
// hosts meeting at one landing lock. After each suite, every commit on the base's first-parent
// line has a tree that passed the gate (the Not Rocket Science Rule), and holds one commit per train.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { startCiRunner, type CiRunner } from "../server/demo/ci-runner.js";
import { landingLockRef } from "../server/landing/land.js";
import { landTrain, TRAIN_BRANCH_PREFIX, type TrainMember, type TrainResult } from "../server/landing/train.js";
import { api, cloneRepo, commitFile, git, protectBranch, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { BASE, NS, fleetPr, gateScript, trainConfig, trainContext, trainHost, type GateScript, type TrainHost } from "./support/train-fixtures.js";
import { waitFor } from "./support/wait.js";

async function mainTip(forge: TestForge): Promise<string> {
  return (await git(forge.bareRepo, "rev-parse", `refs/heads/${BASE}`)).stdout;
}

async function firstParents(forge: TestForge, from: string, to: string): Promise<string[]> {
  return (await git(forge.bareRepo, "rev-list", "--first-parent", `${from}..${to}`)).stdout.split("\n").filter(Boolean);
}

function merged(result: TrainResult): number[] {
  return result.members
    .filter((m) => m.outcome === "merged")
    .map((m) => m.member.issue)
    .sort((a, b) => a - b);
}

/** Asserts every member landed in one train: one first-parent commit, each PR merged, each issue closed. */
async function assertOneTrain(h: TrainHost, members: TrainMember[], result: TrainResult, before: string): Promise<void> {
  assert.equal(result.outcome, "ran", result.why);
  assert.deepEqual(
    merged(result),
    members.map((m) => m.issue).sort((a, b) => a - b),
    JSON.stringify(result.members.map((m) => [m.member.issue, m.outcome, "why" in m ? m.why : ""])),
  );
  assert.equal(result.gateRuns, 1, "one gate run for the whole train");
  assert.equal(result.landings.length, 1);
  const tip = await mainTip(h.forge);
  assert.equal(tip, result.landings[0]!.sha, "the base is exactly the gated train commit");
  assert.deepEqual(await firstParents(h.forge, before, tip), [tip], "one first-parent commit for the train");
  const parents = (await git(h.forge.bareRepo, "rev-list", "--parents", "-n", "1", tip)).stdout.split(" ").slice(1);
  assert.deepEqual(parents, [before, ...members.map((m) => m.head)], "the base, then each PR head in dispatch order");
  for (const m of members) {
    const pull = (await api(h.forge, "GET", repoPath(h.forge, `/pulls/${m.pr}`))).body;
    assert.equal(pull.merged, true, `PR #${m.pr} is marked merged`);
    assert.equal((await h.gh.getIssue(m.issue)).state, "closed", `#${m.issue} is closed`);
  }
  assert.equal(await h.refs.read(landingLockRef(NS)), null, "the landing lock is released");
  assert.equal((await git(h.forge.bareRepo, "for-each-ref", `refs/heads/${TRAIN_BRANCH_PREFIX}`)).stdout, "", "no train branch is left");
}

/** Every commit the base's first-parent line gained has a tree the gate script passed (or a human made). */
async function assertLocalNrsr(forge: TestForge, gate: GateScript, seed: string, human: Set<string>): Promise<number> {
  const passed = new Set((await readFile(gate.trees, "utf8")).split("\n").filter(Boolean));
  const line = (await git(forge.bareRepo, "log", "--first-parent", "--format=%H %T", `${seed}..${BASE}`)).stdout.split("\n").filter(Boolean);
  for (const entry of line) {
    const [sha, tree] = entry.split(" ");
    assert.ok(passed.has(tree!) || human.has(sha!), `commit ${sha} on ${BASE} has a tree no gate passed`);
  }
  return line.length;
}

async function humanPush(forge: TestForge, clone: string, path: string): Promise<string> {
  await git(clone, "fetch", "--quiet", "origin");
  await git(clone, "checkout", "--quiet", "-B", BASE, `origin/${BASE}`);
  const sha = await commitFile(clone, path, "human\n", `human: ${path}`);
  await git(clone, "push", "--quiet", "origin", `HEAD:refs/heads/${BASE}`);
  return sha;
}

async function until(what: string, ok: () => Promise<boolean> | boolean): Promise<void> {
  await waitFor(what, ok, { deadlineMs: 120_000, intervalMs: 50 });
}

function prs(h: TrainHost, n: number, tag: string, bad: number | null = null): Promise<Array<TrainMember & { branch: string }>> {
  return Promise.all(
    Array.from({ length: n }, (_, i) =>
      fleetPr(h, `${tag} ${i + 1}`, i === bad ? { BAD: "bad\n", [`${tag}-${i}.txt`]: "x\n" } : { [`${tag}-${i}.txt`]: `${tag} ${i}\n` }),
    ),
  );
}

describe("landing trains under required CI (the demo's CI runner tests each train's draft PR)", () => {
  let forge: TestForge;
  let h: TrainHost;
  let gate: GateScript;
  let ci: CiRunner;
  let clone: string;
  let seed: string;
  const humans = new Set<string>();

  before(async () => {
    forge = await startTestForge({ users: ["human"] });
    h = await trainHost(forge, "fleet-one");
    gate = await gateScript();
    seed = await mainTip(forge);
    clone = await cloneRepo(forge, forge.users.human);
    ci = startCiRunner({
      apiUrl: forge.apiUrl,
      token: forge.token,
      repo: forge.repo,
      gitUrl: forge.gitUrl,
      workDir: await tempDir("afk-train-ci-"),
      intervalMs: 100,
      testCommand: gate.argv,
    });
    // The base requires the check, for admins too: only a pushed commit CI passed may land.
    await protectBranch(forge, { contexts: ["test"], enforceAdmins: true, branch: BASE });
  });

  after(async () => {
    await ci.stop();
    // The trees CI passed are the ones the gate script recorded when it ran in CI's checkouts.
    assert.ok((await assertLocalNrsr(forge, gate, seed, humans)) >= 5);
    assert.deepEqual(forge.violations(), [], "every forge answer matched GitHub's schemas");
    await forge.dispose();
  });

  const ctx = (): ReturnType<typeof trainContext> => trainContext(h, trainConfig("required"));

  for (const n of [1, 2, 5]) {
    it(`a train of ${n} lands with one CI run, each PR merged`, async () => {
      const members = await prs(h, n, `ci${n}`);
      const before = await mainTip(forge);
      const result = await landTrain(ctx(), members, { pollMs: 100 });
      await assertOneTrain(h, members, result, before);
      const draft = (await api(forge, "GET", repoPath(forge, "/pulls?state=all&per_page=100"))).body.find(
        (p: { head: { ref: string } }) => p.head.ref === result.landings[0]!.train,
      );
      assert.ok(draft, "CI ran on a draft PR of the train branch");
      assert.equal(draft.draft, true);
    });
  }

  it("a red train of 5 is bisected to its one bad PR, which goes back with its own evidence; the four good ones land", async () => {
    const members = await prs(h, 5, "bis", 3);
    const before = await mainTip(forge);
    const result = await landTrain(ctx(), members, { pollMs: 100 });
    const bad = members[3]!;
    assert.deepEqual(
      merged(result),
      members
        .filter((m) => m !== bad)
        .map((m) => m.issue)
        .sort((a, b) => a - b),
    );
    const red = result.members.find((m) => m.outcome === "gate_red");
    assert.ok(red && red.outcome === "gate_red");
    assert.equal(red.member.issue, bad.issue);
    assert.equal(red.evidence.kind, "ci");
    assert.match(red.evidence.excerpt, /the tree holds BAD/, "the bad PR's own CI output is its evidence");
    // 5 red → [3 good, 2 red] → [1 good, 1 bad]: the bad one is found by its own run, the 4th.
    assert.ok(red.gateRuns <= 4, `found after ${red.gateRuns} gate runs`);
    assert.equal((await api(forge, "GET", repoPath(forge, `/pulls/${bad.pr}`))).body.state, "open", "the bad PR stays open for its retry");
    assert.equal((await h.gh.getIssue(bad.issue)).state, "open");
    assert.deepEqual(
      await firstParents(forge, before, await mainTip(forge)),
      result.landings.map((l) => l.sha).reverse(),
      "one first-parent commit per landed train",
    );
  });

  it("a base a human moves while the train's CI runs restarts the train on the new tip", async () => {
    const del = await api(forge, "DELETE", repoPath(forge, `/branches/${BASE}/protection`));
    assert.equal(del.status, 204);
    const members = await prs(h, 2, "moved");
    await writeFile(gate.hold, "1");
    const landing = landTrain(
      trainContext(h, trainConfig("required"), { requiredChecks: { contexts: ["test"], strict: false, source: "protection", readable: true } }),
      members,
      { pollMs: 100 },
    );
    await until(
      "CI to start on the train",
      async () => existsSync(`${gate.hold}.seen`) && (await git(forge.bareRepo, "for-each-ref", `refs/heads/${TRAIN_BRANCH_PREFIX}`)).stdout !== "",
    );
    const human = await humanPush(forge, clone, "human-while-ci.txt");
    await rm(gate.hold);
    const result = await landing;
    assert.equal(result.restarts, 1, "the train was rebuilt once");
    assert.deepEqual(
      merged(result),
      members.map((m) => m.issue).sort((a, b) => a - b),
    );
    const tip = await mainTip(forge);
    assert.equal((await git(forge.bareRepo, "rev-parse", `${tip}^1`)).stdout, human, "the train landed on the human's commit");
    humans.add(human);
  });
});

describe("landing trains under the local gate", () => {
  let forge: TestForge;
  let h: TrainHost;
  let gate: GateScript;
  let seed: string;
  const human = new Set<string>();

  before(async () => {
    forge = await startTestForge({ users: ["human"] });
    h = await trainHost(forge, "fleet-one");
    gate = await gateScript();
    seed = await mainTip(forge);
  });

  after(async () => {
    const checked = await assertLocalNrsr(forge, gate, seed, human);
    assert.ok(checked >= 5);
    assert.deepEqual(forge.violations(), [], "every forge answer matched GitHub's schemas");
    await forge.dispose();
  });

  for (const n of [1, 2, 5]) {
    it(`a train of ${n} lands with one gate run`, async () => {
      const members = await prs(h, n, `local${n}`);
      const before = await mainTip(forge);
      await assertOneTrain(h, members, await landTrain(trainContext(h, trainConfig("local", gate.command)), members), before);
    });
  }

  it("a red train of 8 finds its bad PR in log2(8)+1 runs; the 7 good ones land", async () => {
    const members = await prs(h, 8, "lbis", 5);
    const result = await landTrain(trainContext(h, trainConfig("local", gate.command)), members);
    const red = result.members.find((m) => m.outcome === "gate_red");
    assert.ok(red && red.outcome === "gate_red");
    assert.equal(red.member.issue, members[5]!.issue);
    assert.equal(red.evidence.kind, "local");
    assert.match(red.evidence.excerpt, /the tree holds BAD/);
    assert.equal(red.gateRuns, 4, "8 → 4 → 2 → 1");
    assert.equal(merged(result).length, 7);
  });

  it("a base a human moves while the train is gated restarts it; nothing ungated lands", async () => {
    const members = await prs(h, 3, "lmoved");
    const clone = await cloneRepo(forge, forge.users.human);
    await writeFile(gate.hold, "1");
    const landing = landTrain(trainContext(h, trainConfig("local", gate.command)), members);
    await until("the gate to start", () => existsSync(`${gate.hold}.seen`));
    human.add(await humanPush(forge, clone, "human-while-gated.txt"));
    await rm(gate.hold);
    const result = await landing;
    assert.equal(result.restarts, 1);
    assert.equal(result.gateRuns, 2, "gated again on the new tip");
    assert.equal(merged(result).length, 3);
  });

  it("two hosts, one landing lock: a train waits for the other host's, then lands its own", async () => {
    const two = await trainHost(forge, "fleet-two");
    const mine = await prs(h, 2, "hostA");
    const theirs = await prs(two, 3, "hostB");
    await rm(`${gate.hold}.seen`, { force: true });
    await writeFile(gate.hold, "1");
    const first = landTrain(trainContext(h, trainConfig("local", gate.command)), mine);
    await until("host A's gate to start", () => existsSync(`${gate.hold}.seen`));
    const busy = await landTrain(trainContext(two, trainConfig("local", gate.command)), theirs);
    assert.equal(busy.outcome, "busy", busy.why);
    assert.match(busy.why, /fleet-one/);
    assert.equal(busy.gateRuns, 0);
    await rm(gate.hold);
    assert.deepEqual(
      merged(await first),
      mine.map((m) => m.issue).sort((a, b) => a - b),
    );
    const second = await landTrain(trainContext(two, trainConfig("local", gate.command)), theirs);
    assert.deepEqual(
      merged(second),
      theirs.map((m) => m.issue).sort((a, b) => a - b),
    );
    assert.equal(second.gateRuns, 1);
  });
});

describe("a train whose fleet stops while its CI has not answered", () => {
  it("ends at its next look: its PRs are left to land later, nothing landed, nothing behind", async () => {
    const forge = await startTestForge();
    try {
      const h = await trainHost(forge, "fleet-one");
      const members = await prs(h, 2, "stopping");
      const before = await mainTip(forge);
      let looks = 0;
      // No check ever reports (no CI runner here) and the silence limit is far: only the stop ends the wait.
      const stopping = () => ++looks > 2;
      const result = await landTrain(
        trainContext(h, trainConfig("required"), { requiredChecks: { contexts: ["test"], strict: false, source: "protection", readable: true }, stopping }),
        members,
        { pollMs: 50, silentMs: 3_600_000 },
      );
      assert.equal(looks, 3, "the wait asked whether the fleet stops at each look, and ended at the first yes");
      assert.equal(result.ciSilent, false);
      assert.deepEqual(
        result.members.map((m) => m.outcome),
        ["retry_later", "retry_later"],
      );
      assert.match((result.members[0] as { why: string }).why, /the fleet is stopping/);
      assert.equal(await mainTip(forge), before, "nothing landed");
      const pulls = (await api(forge, "GET", repoPath(forge, "/pulls?state=all&per_page=100"))).body as Array<{ state: string; head: { ref: string } }>;
      assert.ok(
        pulls.filter((p) => p.head.ref.startsWith(TRAIN_BRANCH_PREFIX)).every((p) => p.state === "closed"),
        "the train's draft PR is closed",
      );
      assert.equal(pulls.filter((p) => !p.head.ref.startsWith(TRAIN_BRANCH_PREFIX) && p.state === "open").length, 2, "the members' PRs stay open");
      assert.equal((await git(forge.bareRepo, "for-each-ref", `refs/heads/${TRAIN_BRANCH_PREFIX}`)).stdout, "", "no train branch is left");
      assert.equal(await h.refs.read(landingLockRef(NS)), null, "the landing lock is released");
    } finally {
      await forge.dispose();
    }
  });
});

describe("landing trains where CI does not run on drafts", () => {
  it("a train no check ever reports on is given up, says why, and leaves nothing behind", async () => {
    const forge = await startTestForge();
    try {
      const h = await trainHost(forge, "fleet-one");
      const members = await prs(h, 2, "silent");
      const before = await mainTip(forge);
      const result = await landTrain(
        trainContext(h, trainConfig("required"), { requiredChecks: { contexts: ["test"], strict: false, source: "protection", readable: true } }),
        members,
        { pollMs: 50, silentMs: 500 },
      );
      assert.equal(result.ciSilent, true);
      assert.deepEqual(
        result.members.map((m) => m.outcome),
        ["retry_later", "retry_later"],
      );
      assert.match((result.members[0] as { why: string }).why, /draft pull requests/);
      assert.equal(await mainTip(forge), before, "nothing landed");
      const pulls = (await api(forge, "GET", repoPath(forge, "/pulls?state=all&per_page=100"))).body as Array<{
        state: string;
        draft: boolean;
        head: { ref: string };
      }>;
      const drafts = pulls.filter((p) => p.head.ref.startsWith(TRAIN_BRANCH_PREFIX));
      assert.equal(drafts.length, 1);
      assert.equal(drafts[0]!.state, "closed", "the train's draft PR is closed");
      assert.equal((await git(forge.bareRepo, "for-each-ref", `refs/heads/${TRAIN_BRANCH_PREFIX}`)).stdout, "", "no train branch is left");
      assert.equal(await h.refs.read(landingLockRef(NS)), null, "the landing lock is released");
    } finally {
      await forge.dispose();
    }
  });
});
