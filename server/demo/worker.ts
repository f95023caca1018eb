// The demo's scripted worker: a stand-in for a coding agent that follows the issue's recipe
// from the seeded backlog — commit the recipe's files for this attempt, or write its verdict.
// It is a standalone program run by the fleet as the user's worker command, so unlike the rest
// of server/ it prints progress to its own stdout (the fleet reads it as the worker's output).
/* eslint-disable no-console -- standalone program: its stdout is the worker's output, not the MCP stream */
//
//   node dist/server/demo/worker.js [--delay-ms N]
//
// Environment (set by the fleet): AFK_ISSUE, AFK_ATTEMPT (from 1), AFK_WORKTREE (else the
// cwd), AFK_VERDICT_FILE, AFK_BRIEF (the brief's path; the same text arrives on stdin).
// Optional: AFK_DEMO_RECIPES (a JSON file of recipes replacing the built-in backlog),
// AFK_DEMO_DELAY_MS (like --delay-ms: pause before working, so the demo has something to watch).
//
// The recipe is found by the `afk-demo-recipe: <key>` marker of the issue body, which reaches
// the worker inside the brief; failing that by the issue title in the brief's heading. Issue
// numbers are not used: they match seed positions only in a freshly seeded forge.
import { execFile } from "node:child_process";
import { realpathSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, normalize, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { RECIPE_MARKER, RECIPES, stepFor, type Recipe, type RecipeStep } from "./backlog.js";
import { setTimeout as sleep } from "node:timers/promises";

const pexec = promisify(execFile);

/** How long to wait for stdin's end before going on without it (a parent that never closes it). */
const STDIN_WAIT_MS = 3_000;

const GIT_IDENTITY = ["-c", "user.name=afk demo worker", "-c", "user.email=afk-demo-worker@localhost", "-c", "commit.gpgsign=false"];

function say(line: string): void {
  console.log(`afk-demo worker: ${line}`);
}

/** Reads stdin to its end (bounded in time); "" when stdin is a terminal or absent. */
async function drainStdin(): Promise<string> {
  const stdin = process.stdin;
  if (stdin.isTTY) return "";
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stdin.removeAllListeners("data");
      stdin.pause();
      stdin.destroy();
      resolve(Buffer.concat(chunks).toString("utf8"));
    };
    const timer = setTimeout(finish, STDIN_WAIT_MS);
    stdin.on("data", (chunk: Buffer) => chunks.push(chunk));
    stdin.once("end", finish);
    stdin.once("error", finish);
    stdin.once("close", finish);
    stdin.resume();
  });
}

function delayMs(argv: readonly string[], env: NodeJS.ProcessEnv): number {
  let raw: string | undefined = env.AFK_DEMO_DELAY_MS;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--delay-ms") raw = argv[i + 1];
    else if (arg.startsWith("--delay-ms=")) raw = arg.slice("--delay-ms=".length);
  }
  const n = Number(raw ?? 0);
  return Number.isFinite(n) && n > 0 ? Math.min(n, 10 * 60_000) : 0;
}

async function loadRecipes(env: NodeJS.ProcessEnv): Promise<readonly Recipe[]> {
  const path = env.AFK_DEMO_RECIPES;
  if (!path) return RECIPES;
  const data = JSON.parse(await readFile(path, "utf8")) as unknown;
  const list = Array.isArray(data) ? data : (data as { recipes?: unknown }).recipes;
  if (!Array.isArray(list)) throw new Error(`${path}: expected a JSON array of recipes or {"recipes": [...]}`);
  return list as Recipe[];
}

/** The recipe for the brief's issue: by body marker, else by the title in the brief's heading. */
export function findRecipe(brief: string, recipes: readonly Recipe[]): Recipe | null {
  const marker = new RegExp(`${RECIPE_MARKER}:\\s*([A-Za-z0-9._-]+)`).exec(brief);
  if (marker) {
    const byKey = recipes.find((r) => r.key === marker[1]);
    if (byKey) return byKey;
  }
  const heading = /^# Issue #\d+ in \S+: (.+)$/m.exec(brief);
  if (heading) {
    const title = heading[1]!.trim();
    const byTitle = recipes.find((r) => r.title === title);
    if (byTitle) return byTitle;
  }
  return null;
}

/** A recipe path must stay inside the worktree and out of .git. */
function safePath(root: string, path: string): string {
  const norm = normalize(path);
  if (isAbsolute(norm) || norm === ".." || norm.startsWith(`..${sep}`) || norm.split(sep)[0] === ".git" || norm.startsWith("-")) {
    throw new Error(`recipe path ${JSON.stringify(path)} is not a plain path inside the worktree`);
  }
  return join(root, norm);
}

async function git(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await pexec("git", args, { cwd, maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim();
}

async function hasStagedChanges(cwd: string): Promise<boolean> {
  try {
    await pexec("git", ["diff", "--cached", "--quiet"], { cwd });
    return false;
  } catch (err) {
    if ((err as { code?: unknown }).code === 1) return true;
    throw err;
  }
}

async function writeVerdict(env: NodeJS.ProcessEnv, verdict: string, reason: string): Promise<void> {
  const path = env.AFK_VERDICT_FILE;
  if (!path) throw new Error("AFK_VERDICT_FILE is not set: the fleet sets it; run me through the fleet or set it by hand");
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify({ verdict, reason })}\n`);
  say(`verdict ${verdict} written to ${path}`);
}

async function runStep(step: RecipeStep, cwd: string, attempt: number, env: NodeJS.ProcessEnv, pauseMs: number): Promise<void> {
  if (step.kind === "verdict") {
    await writeVerdict(env, step.verdict, step.reason);
    return;
  }
  await commitFiles(cwd, step.message, step.files, attempt);
  for (const next of step.then ?? []) {
    if (pauseMs > 0) await sleep(pauseMs);
    await commitFiles(cwd, next.message, next.files, attempt);
  }
}

async function commitFiles(cwd: string, message: string, files: Record<string, string>, attempt: number): Promise<void> {
  const paths = Object.keys(files).sort();
  for (const path of paths) {
    const full = safePath(cwd, path);
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, files[path]!.split("{{attempt}}").join(String(attempt)));
    say(`wrote ${path}`);
  }
  await git(cwd, ["add", "--", ...paths]);
  if (!(await hasStagedChanges(cwd))) {
    // A repeated step on a branch that already has it (a continued run): the earlier commit stands.
    say("nothing new to commit: the branch already has this change");
    return;
  }
  await git(cwd, [...GIT_IDENTITY, "commit", "--quiet", "--no-verify", "-m", `${message}\n\nScripted demo worker, attempt ${attempt}.`]);
  say(`committed ${await git(cwd, ["rev-parse", "--short", "HEAD"])}: ${message}`);
}

export async function main(argv: readonly string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const stdinText = await drainStdin();
  const brief = stdinText.trim() !== "" ? stdinText : env.AFK_BRIEF ? await readFile(env.AFK_BRIEF, "utf8").catch(() => "") : "";
  const cwd = env.AFK_WORKTREE || process.cwd();
  const attempt = Math.max(1, Number.parseInt(env.AFK_ATTEMPT ?? "1", 10) || 1);
  const issue = env.AFK_ISSUE ?? "?";

  const recipes = await loadRecipes(env);
  const recipe = findRecipe(brief, recipes);
  if (!recipe) {
    say(`issue #${issue}: no recipe in the demo backlog`);
    await writeVerdict(env, "giving-up", `The scripted demo worker has no recipe for issue #${issue}: it only knows the seeded backlog.`);
    return 0;
  }
  say(`issue #${issue} (${recipe.key}), attempt ${attempt}`);
  const pause = delayMs(argv, env);
  if (pause > 0) {
    say(`thinking for ${pause} ms`);
    await sleep(pause);
  }
  await runStep(stepFor(recipe, attempt), cwd, attempt, env, pause);
  say("done");
  return 0;
}

// Run when executed directly (node worker.js, or node --import tsx worker.ts), not when imported.
function isEntry(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (isEntry()) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      console.error(`afk-demo worker: ${(err as Error).message}`);
      process.exitCode = 1;
    },
  );
}
