// A host killed (SIGKILL: nothing stopped, nothing released) while its worker is mid-attempt, and
// a new host on the same state dir, as the same instance, adopting that worker through the
// WorkerRuntime port instead of starting a second one: for the `actions` runtime (the workflow
// run goes on on the local forge's runner; the new host follows it from the beat its record
// says it read, and no second run is dispatched) and for the `sandbox` runtime (the launcher and
// its bubblewrap outlive the host; the new host watches the process group by its pid file and,
// when it exits, takes its commits back from the sandbox's private git dir). Either way the
// worker's later output reaches the new host's worker lane once, and the issue lands with
// attempt 1. Real processes, real git, the local forge over HTTP, real bubblewrap.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runDirFor } from "../server/host/views.js";
import type { FleetHost } from "../server/host/host.js";
import { pidFilePath, readPidFile } from "../server/runtimes/local/pid-files.js";
import { shellQuote } from "../server/runtimes/local/spawn.js";
import { sandboxAvailability } from "../server/runtimes/sandbox/available.js";
import { ACTIONS_CONFIG, actionsWorld, comments, closed, engineByIssue, runLogs, workflowRuns } from "./support/actions-fixtures.js";
import { alive } from "./support/daemon-fixtures.js";
import { git, type TestForge } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetEnv, fleetHost, issueWorld, laneRows, laneText, type LaneRow } from "./support/fleet-fixtures.js";
import { crash, spawnHost } from "./support/host-process.js";
import { ROOT } from "./support/paths.js";
import { waitFor } from "./support/wait.js";

const INSTANCE = "adopter1";
const HELD = join(ROOT, "test", "support", "workers", "held.sh");
const children: ChildProcess[] = [];
const cleanups = cleanupsAfterFile();
cleanups.push(async () => {
  for (const child of children) await crash(child);
});

type StartInput = Parameters<FleetHost["start"]>[0];

/**
 * A host in a process of its own on `input`, killed once `ready` answers; then the next host, on
 * the same state dir as the same instance, started on the same input (made first: `ready` may
 * read the first host's lanes through it). Resolves once it adopted the worker, with its
 * `worker_adopted` record and a failure's story (the first host's stderr, the lanes, `more`).
 */
async function crashMidAttempt(
  world: { forge: TestForge; dir: string; issue: number },
  env: Record<string, string>,
  input: StartInput,
  ready: (next: FleetHost) => Promise<boolean>,
  more: () => Promise<string> = async () => "",
): Promise<{ next: FleetHost; story: () => Promise<string>; adopted: LaneRow }> {
  const { forge, dir, issue } = world;
  const first = spawnHost(children, env, INSTANCE, input, 1);
  let stderr = "";
  first.stderr!.on("data", (text: string) => (stderr = (stderr + text).slice(-4000)));
  const next = fleetHost(forge, dir, cleanups, env, { instance: INSTANCE });
  const story = async () =>
    `===== first host's stderr\n${stderr}\n===== supervisor\n${await laneText(next, forge.repo, "supervisor")}\n===== worker\n${await laneText(next, forge.repo, "worker")}\n${await more()}`;
  await waitFor(`the first host's worker on #${issue} mid-attempt`, () => ready(next), { deadlineMs: 4 * 60_000, intervalMs: 250, explain: story });
  await crash(first);
  await next.start(input);
  const adopted = await waitFor(
    `the new host to adopt #${issue}'s worker`,
    async () => (await laneRows(next, forge.repo, "supervisor")).find((r) => r.event === "worker_adopted" && r.issue === issue),
    { deadlineMs: 3 * 60_000, intervalMs: 250, explain: story },
  );
  return { next, story, adopted };
}

/** A fleet of one worker that lands, held mid-attempt until the test makes `<go>/go-<issue>` (`go`: a directory of `dir`). */
async function heldFleet(
  forge: TestForge,
  dir: string,
  make: (go: string) => Promise<{ command: string; config: StartInput["config"] }>,
): Promise<{ go: string; input: StartInput }> {
  const go = join(dir, "go");
  await mkdir(go);
  const { command, config } = await make(go);
  return { go, input: { repo: forge.repo, worker_command: command, target: 1, auto_merge: true, config } };
}

/** What every adoption must leave: one attempt, started once, adopted once, never retried or ended as an orphan, its lines delivered once each. */
async function assertAdoptedOnce(host: FleetHost, forge: TestForge, n: number, lines: string[]): Promise<void> {
  const starts = (await laneRows(host, forge.repo, "ledger")).filter((r) => r.event === "attempt_start" && r.issue === n);
  assert.deepEqual(
    starts.map((r) => r.attempt),
    [1],
    "one birth, before the crash: the new host started no worker",
  );
  const supervisor = (await laneRows(host, forge.repo, "supervisor")).filter((r) => r.issue === n);
  const count = (event: string) => supervisor.filter((r) => r.event === event).length;
  assert.deepEqual(
    { worker_born: count("worker_born"), worker_adopted: count("worker_adopted"), retry: count("retry"), orphan_ended: count("orphan_ended") },
    { worker_born: 1, worker_adopted: 1, retry: 0, orphan_ended: 0 },
    await laneText(host, forge.repo, "supervisor"),
  );
  const exited = supervisor.filter((r) => r.event === "worker_exited");
  assert.equal(exited.length, 1);
  assert.equal(exited[0]!.attempt, 1);
  assert.equal((exited[0]!.data as { kill_reason?: unknown }).kill_reason, null, "it ended on its own");
  const worker = (await laneRows(host, forge.repo, "worker")).filter((r) => r.issue === n).map((r) => String(r.msg));
  for (const line of lines) assert.equal(worker.filter((l) => l === line).length, 1, `"${line}" once in the worker lane:\n${worker.join("\n")}`);
  assert.doesNotMatch(await comments(forge, n), /failed:/, "no attempt failed");
  const refs = (await git(forge.bareRepo, "for-each-ref", "--format=%(refname)", "refs/afk/")).stdout;
  assert.doesNotMatch(refs, /\/claim\//, "the claim is released");
}

describe("a worker adopted by the next host after a crash", () => {
  it(
    "actions: the run goes on without its host; the next host adopts it from its record — no second dispatch, the output after the crash in its worker lane — and attempt 1 lands",
    { timeout: 600_000 },
    async () => {
      const { forge, dir, issues } = await actionsWorld(cleanups, ["Outlives its host"], "afk-adopt-act-");
      const [n] = issues as [number];
      const { go, input } = await heldFleet(forge, dir, async (go) => ({ command: await engineByIssue(dir, { [n]: "hold" }, go), config: ACTIONS_CONFIG }));
      const record = join(runDirFor(join(dir, "state"), forge.repo), `issue-${n}`, "actions-run.json");
      const title = `afk #${n} attempt 1`;
      const env = fleetEnv(forge, dir, { AFK_RUNTIME: "actions" });
      const { next, story, adopted } = await crashMidAttempt(
        { forge, dir, issue: n },
        env,
        input,
        async () => {
          // The run is on the runner, its partial work pushed, and the first host has read (and
          // recorded reading) the beat that carried "partial work is on origin": it is in its lane.
          if (!(await workflowRuns(forge, "in_progress")).some((r) => r.display_title === title)) return false;
          const seen = await readFile(record, "utf8").then(
            (t) => (JSON.parse(t) as { seen: string | null }).seen,
            () => null,
          );
          if (!seen) return false;
          const beats = (await git(forge.bareRepo, "rev-list", seen)).stdout.split("\n").filter(Boolean);
          for (const beat of beats) {
            const out = await git(forge.bareRepo, "show", `${beat}:output.jsonl`).catch(() => ({ stdout: "" }));
            if (out.stdout.includes("partial work is on origin")) return true;
          }
          return false;
        },
        () => runLogs(forge),
      );
      const [run] = await workflowRuns(forge);
      assert.equal(run?.display_title, title);
      assert.equal(run?.status, "in_progress", "the run went on without its host");
      assert.equal(adopted.run, run.id, "the new host adopted that run");
      assert.equal(adopted.attempt, 1);
      await writeFile(join(go, `go-${n}`), "");
      await waitFor(`#${n} landed and closed`, () => closed(forge, n), { deadlineMs: 4 * 60_000, intervalMs: 500, explain: story });
      await next.stop({ repo: forge.repo, stop_workers: true });

      assert.deepEqual(
        (await workflowRuns(forge)).map((r) => `${r.display_title}: ${r.conclusion}`),
        [`${title}: success`],
        "one workflow run for the attempt: the new host dispatched none",
      );
      await assertAdoptedOnce(next, forge, n, [
        `engine on the runner: issue ${n} attempt 1 mode hold`,
        "partial work is on origin",
        // Printed only after the crash: the new host read it from the run's beats.
        `released: issue ${n} goes on`,
      ]);
      for (const [file, text] of [
        [`partial-${n}.txt`, `partial for ${n}`],
        [`work-${n}.txt`, `work for ${n}`],
      ]) {
        assert.equal((await git(forge.bareRepo, "show", `main:${file}`)).stdout.trim(), text);
      }
    },
  );

  it(
    "sandbox: the launcher and its bubblewrap outlive their host; the next host adopts the process group by its pid file, takes its commits back from the private git dir when it exits, and attempt 1 lands",
    { timeout: 600_000 },
    async () => {
      const available = await sandboxAvailability();
      assert.ok(available.ok, `the sandbox must run on this machine for this test (.ci/run installs bubblewrap and socat): ${available.detail}`);
      const { forge, dir, issues } = await issueWorld(cleanups, ["Outlives its host in a sandbox"], "afk-adopt-sbx-");
      const [n] = issues as [number];
      // The sandbox hides the host's /tmp: the test's signal directory is shown to it read-only.
      const { go, input } = await heldFleet(forge, dir, async (go) => ({
        command: ["sh", HELD, go].map(shellQuote).join(" "),
        config: {
          retry: 1,
          sandbox: { allow_read: [go] },
          gate: { ci: "local", local_command: "true" },
          landing: { strategy: "push" },
          pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 },
        },
      }));
      const pidFile = pidFilePath(join(runDirFor(join(dir, "state"), forge.repo), `issue-${n}`));
      const env = fleetEnv(forge, dir, { AFK_RUNTIME: "sandbox" });
      const { next, story, adopted } = await crashMidAttempt({ forge, dir, issue: n }, env, input, async (next) => {
        // The first half committed inside the sandbox, and the first host has the line in its lane.
        const worker = await laneRows(next, forge.repo, "worker");
        return worker.some((r) => r.msg === `waiting for go-${n}`);
      });
      const launcher = await readPidFile(pidFile);
      assert.ok(launcher && alive(launcher.pid), "the sandbox's launcher outlived its host");
      assert.equal(adopted.pid, launcher.pid, "the new host adopted that process");
      assert.equal(adopted.attempt, 1);
      await writeFile(join(go, `go-${n}`), "");
      await waitFor(`#${n} landed and closed`, () => closed(forge, n), { deadlineMs: 4 * 60_000, intervalMs: 500, explain: story });
      await next.stop({ repo: forge.repo, stop_workers: true });

      assert.equal(alive(launcher.pid), false, "the launcher is gone");
      await assertAdoptedOnce(next, forge, n, [
        `first half of ${n}, attempt 1`,
        // Printed only after the crash: the new host followed the worker's output files.
        `released: issue ${n} goes on`,
      ]);
      const lines = (await laneRows(next, forge.repo, "worker")).map((r) => String(r.msg));
      assert.equal(lines.filter((l) => l.startsWith("afk-mcp sandbox: bubblewrap;")).length, 1, "one sandbox, started once");
      // Both halves came home from the sandbox's private git dir, the second after the crash.
      for (const [file, text] of [
        [`first-${n}.txt`, `first half for ${n}`],
        [`work-${n}.txt`, `work for ${n}`],
      ]) {
        assert.equal((await git(forge.bareRepo, "show", `main:${file}`)).stdout.trim(), text);
      }
      const subjects = (await git(forge.bareRepo, "log", "--format=%s", "main")).stdout.split("\n");
      assert.deepEqual(
        subjects.filter((s) => s.endsWith(`#${n}`)),
        [`work for #${n}`, `first half of #${n}`],
      );
    },
  );
});
