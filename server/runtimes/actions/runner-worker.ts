// `afk-mcp worker`: one attempt on a GitHub Actions runner, the job's step that the workflow
// `afk-mcp actions init` writes runs. It checks out the issue branch, runs the engine's command
// with the brief on stdin (the local runtime's spawn, in a process group of its own), and every
// `beat_seconds` pushes the branch's new commits (only that branch, never forced) and a beat on
// the issue's run ref (beat.ts): the output since the last beat, whether the engine is busy, the
// tip it pushed. The last beat carries the engine's exit and its verdict. SIGTERM (a cancelled
// run) ends the engine's group and still pushes what it committed. The host decides everything
// else from those beats and the run's conclusion; this process decides nothing.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { git, gitRaw, assertSafeBranchName } from "../../gh/git.js";
import { assertSafeRefName } from "../../gh/refstore.js";
import { UsageError } from "../../gh/errors.js";
import { startWorker, type WorkerHandle as ProcessHandle } from "../local/spawn.js";
import { BusyTracker } from "../local/proc.js";
import { BEAT_VERDICT_MAX_BYTES, boundLines, writeBeat, type BeatFacts, type BeatLine } from "./beat.js";
import { Serial } from "../../kit/serial.js";

type Env = Readonly<Record<string, string | undefined>>;

/** What the dispatch's inputs say, through the step's `env:` (never spliced into the script). */
export interface RunnerInputs {
  issue: number;
  branch: string;
  base: string;
  attempt: number;
  engine: string | null;
  command: string;
  brief: string;
  runRef: string;
  beatSeconds: number;
  runId: number;
  /** Non-secret variables the host handed over (config `actions.env`, *_BASE_URL). */
  extraEnv: Record<string, string>;
}

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
/** Never handed to the engine: the job's credentials, and the inputs this process consumed. */
const WITHHELD =
  /^(GITHUB_TOKEN|GH_TOKEN|ACTIONS_RUNTIME_TOKEN|ACTIONS_ID_TOKEN_REQUEST_TOKEN|ACTIONS_ID_TOKEN_REQUEST_URL|ACTIONS_CACHE_URL|ACTIONS_RESULTS_URL|AFK_BRIEF_TEXT|AFK_COMMAND|AFK_ENV_JSON|AFK_RUN_REF|AFK_BEAT_SECONDS)$/;
/** What a handed-over variable may not set: the engine's own facts and the basics of the runner. */
const RESERVED = /^(AFK_.*|PATH|HOME|SHELL|USER|GITHUB_.*|RUNNER_.*|ACTIONS_.*|GIT_.*|NODE_OPTIONS|LD_.*)$/;

function positive(env: Env, name: string, min = 1): number {
  const n = Number(env[name]);
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`${name}=${JSON.stringify(env[name] ?? "")}: expected an integer of at least ${min}`);
  return n;
}

/** The inputs from the step's environment; a UsageError naming the variable when one is missing or malformed. */
export function runnerInputs(env: Env): RunnerInputs {
  const need = (name: string): string => {
    const v = env[name];
    if (v === undefined || v === "")
      throw new UsageError(
        `${name} is not set: \`afk-mcp worker\` runs in the workflow \`afk-mcp actions init\` writes, which sets it from the dispatch's inputs`,
      );
    return v;
  };
  const branch = need("AFK_BRANCH");
  assertSafeBranchName(branch);
  const base = need("AFK_BASE");
  assertSafeBranchName(base);
  const runRef = need("AFK_RUN_REF");
  assertSafeRefName(runRef);
  if (runRef.startsWith("refs/heads/") && !runRef.includes("/run/")) throw new UsageError(`AFK_RUN_REF=${runRef}: not a run ref`);
  const extraEnv: Record<string, string> = {};
  if (env.AFK_ENV_JSON) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(env.AFK_ENV_JSON);
    } catch {
      throw new UsageError("AFK_ENV_JSON is not JSON: expected an object of variable names to strings");
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
      throw new UsageError("AFK_ENV_JSON: expected an object of variable names to strings");
    for (const [k, v] of Object.entries(parsed)) if (ENV_NAME.test(k) && !RESERVED.test(k) && typeof v === "string" && !v.includes("\0")) extraEnv[k] = v;
  }
  return {
    issue: positive(env, "AFK_ISSUE"),
    branch,
    base,
    attempt: positive(env, "AFK_ATTEMPT"),
    engine: env.AFK_ENGINE ? env.AFK_ENGINE : null,
    command: need("AFK_COMMAND"),
    brief: need("AFK_BRIEF_TEXT"),
    runRef,
    beatSeconds: env.AFK_BEAT_SECONDS ? positive(env, "AFK_BEAT_SECONDS", 1) : 60,
    runId: positive(env, "GITHUB_RUN_ID"),
    extraEnv,
  };
}

/** The engine's environment: the runner's, without the job's credentials, plus the issue's facts. */
export function engineEnv(env: Env, inputs: RunnerInputs, paths: { brief: string; verdict: string; worktree: string }): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !WITHHELD.test(k)) out[k] = v;
  Object.assign(out, inputs.extraEnv, {
    AFK_ISSUE: String(inputs.issue),
    AFK_BRANCH: inputs.branch,
    AFK_BASE: inputs.base,
    AFK_ATTEMPT: String(inputs.attempt),
    AFK_BRIEF: paths.brief,
    AFK_VERDICT_FILE: paths.verdict,
    AFK_WORKTREE: paths.worktree,
    AFK_REPO: env.GITHUB_REPOSITORY ?? "",
    AFK_RUNTIME: "actions",
  });
  out.GIT_AUTHOR_NAME ??= "afk-mcp worker";
  out.GIT_AUTHOR_EMAIL ??= "afk-mcp@users.noreply.github.com";
  out.GIT_COMMITTER_NAME ??= out.GIT_AUTHOR_NAME;
  out.GIT_COMMITTER_EMAIL ??= out.GIT_AUTHOR_EMAIL;
  return out;
}

/** Prints to the job's log (stderr): what this process did, never a secret. */
function say(text: string): void {
  process.stderr.write(`afk worker: ${text}\n`);
}

/** Runs one attempt; resolves with the exit code the step ends with (the engine's). */
export async function runWorker(env: Env = process.env): Promise<number> {
  const inputs = runnerInputs(env);
  const cwd = env.GITHUB_WORKSPACE ?? process.cwd();
  const temp = join(env.RUNNER_TEMP ?? join(cwd, ".."), "afk");
  await mkdir(temp, { recursive: true, mode: 0o700 });
  const brief = join(temp, "brief.md");
  const verdict = join(temp, "verdict.json");
  await writeFile(brief, inputs.brief, { mode: 0o600 });

  // The issue branch where origin has it (a continuation), else a new one from the dispatched base.
  const fetched = await gitRaw(["fetch", "--no-tags", "--quiet", "origin", `+refs/heads/${inputs.branch}:refs/remotes/origin/${inputs.branch}`], { cwd });
  await git(["checkout", "-q", "-B", inputs.branch, ...(fetched.exitCode === 0 ? [`refs/remotes/origin/${inputs.branch}`] : [])], { cwd });
  const startHead = (await git(["rev-parse", "HEAD"], { cwd })).stdout.trim();
  say(`issue #${inputs.issue} attempt ${inputs.attempt}: branch ${inputs.branch} at ${startHead.slice(0, 12)}${fetched.exitCode === 0 ? "" : " (new)"}`);

  const state = { seq: 0, parent: null as string | null, pushed: fetched.exitCode === 0 ? startHead : null, lines: [] as BeatLine[], activity: Date.now() };
  const started = Date.now();
  const busy = new BusyTracker();
  const beats = new Serial();
  let engine: ProcessHandle | null = null;

  /** Pushes the branch's new commits (only the issue's branch, never forced); false when origin refused them as not a fast-forward. */
  const pushBranch = async (): Promise<boolean> => {
    const head = (await gitRaw(["rev-parse", "HEAD"], { cwd })).stdout.trim();
    if (!/^[0-9a-f]{40,64}$/.test(head) || head === state.pushed || head === startHead) return true;
    // A push origin refuses is reported, not retried over.
    const push = await gitRaw(["push", "--quiet", "origin", `HEAD:refs/heads/${inputs.branch}`], { cwd });
    if (push.exitCode === 0) {
      state.pushed = head;
      state.activity = Date.now();
      return true;
    }
    state.lines.push({ s: "e", l: `afk worker: origin refused the push of ${inputs.branch}: ${push.stderr.trim().slice(0, 500)}`, t: Date.now() });
    return !/non-fast-forward|fetch first|\[rejected\]/i.test(push.stderr);
  };

  /** Writes and pushes one beat: the lines since the last, the tip pushed, the exit on the last. */
  const emit = async (exit: BeatFacts["exit"], why?: string): Promise<void> => {
    const reading = engine && exit === null && why === undefined ? await busy.sample(engine.pid) : { busy: "unknown" as const, why: why ?? "ended" };
    const { kept, dropped } = boundLines(state.lines);
    const verdictText = exit
      ? await readFile(verdict, "utf8").then(
          (t) => t.slice(0, BEAT_VERDICT_MAX_BYTES),
          () => null,
        )
      : null;
    const facts: BeatFacts = {
      v: 1,
      run_id: inputs.runId,
      issue: inputs.issue,
      attempt: inputs.attempt,
      seq: state.seq + 1,
      at: new Date().toISOString(),
      activity_at: new Date(Math.max(state.activity, engine?.lastOutputAt() ?? 0)).toISOString(),
      busy: reading.busy,
      why: reading.why,
      pushed: state.pushed,
      exit,
      lines: kept.length,
      dropped,
    };
    const sha = await writeBeat(cwd, { facts, output: kept, verdict: verdictText, parent: state.parent });
    const push = await gitRaw(["push", "--quiet", "--force", "origin", `${sha}:${inputs.runRef}`], { cwd });
    if (push.exitCode !== 0) {
      say(`beat ${facts.seq} not pushed (kept for the next): ${push.stderr.trim().slice(0, 300)}`);
      return;
    }
    state.seq = facts.seq;
    state.parent = sha;
    state.lines = state.lines.slice(kept.length + dropped);
  };

  const beat = (exit: BeatFacts["exit"]): Promise<void> => {
    const run = beats.run(async () => {
      let pushed = await pushBranch();
      // The last beat, with the branch moved under this run by a push it did not make: a beat says
      // so first (the host judges the tip no beat reported and puts the branch back), then the
      // push is tried again for a few beats before the run ends with it; never forced.
      for (let i = 0; exit !== null && !pushed && i < 3; i++) {
        await emit(null, "origin's branch moved under the run: waiting for the host to put it back");
        await sleep(inputs.beatSeconds * 1000);
        pushed = await pushBranch();
      }
      await emit(exit);
    });
    return run.catch((error: unknown) => say(`beat failed: ${(error as Error).message}`));
  };

  const onLine = (stream: "stdout" | "stderr", line: string): void => {
    state.lines.push({ s: stream === "stdout" ? "o" : "e", l: line, t: Date.now() });
    // Into the job's log (stderr for both: this process prints nothing else anywhere).
    process.stderr.write(`${line}\n`);
  };
  engine = await startWorker({
    command: inputs.command,
    cwd,
    env: engineEnv(env, inputs, { brief, verdict, worktree: cwd }),
    briefPath: brief,
    onLine,
    killGraceMs: 4_000,
  });
  const stopping = (signal: NodeJS.Signals): void => {
    say(`${signal}: ending the engine, then pushing what it committed`);
    void engine?.kill(`the run was cancelled (${signal})`);
  };
  process.once("SIGTERM", stopping);
  process.once("SIGINT", stopping);
  await beat(null);
  const timer = setInterval(() => void beat(null), inputs.beatSeconds * 1000);
  const exit = await engine.exited;
  clearInterval(timer);
  await beat({ code: exit.code, signal: exit.signal, duration_ms: Date.now() - started });
  say(`engine exited (code ${exit.code ?? "none"}${exit.signal ? `, ${exit.signal}` : ""}); ${state.seq} beats pushed`);
  return exit.code ?? 1;
}
