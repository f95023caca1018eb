// Verification of an engine at start: its binary resolves in the worker's environment, in the
// same (login) shell the workers get, and answers `--version`. A failure refuses the start with
// the fix, instead of three fast deaths tripping the breaker later.
import { execFile } from "node:child_process";
import { EngineError, type EngineProfile } from "./engines.js";
import { executable, resolveShell } from "./shell.js";

export interface EngineCheck {
  engine: string;
  /** Where the binary resolved. */
  path: string;
  /** Its first line of `--version`. */
  version: string;
  /** Base-URL variables in force (a custom provider), as `NAME=value`. */
  provider: string[];
  /** The PATH the workers' shell has (a login shell's, when the engine needs one): a runtime looks the binary up on it. */
  pathVar: string;
}

const PATH_LINE = "AFK-PATH=";

function run(file: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env, timeout: timeoutMs, maxBuffer: 1024 * 1024, killSignal: "SIGKILL" }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === "number" ? (error as { code: number }).code : null) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** Checks `profile` in `env` (the worker environment). Resolves, or rejects with an EngineError naming the fix. */
export async function checkEngine(profile: EngineProfile, env: Record<string, string>, timeoutMs = 30_000): Promise<EngineCheck> {
  const provider = profile.baseUrlVars.filter((name) => env[name]).map((name) => `${name}=${env[name]}`);
  if (profile.command !== null) return { engine: profile.name, path: "(opaque command)", version: "", provider, pathVar: env.PATH ?? "" };
  const shell = resolveShell(env.SHELL ?? process.env.SHELL);
  // The binary is an argument ($1), never part of the script text.
  const script = `command -v -- "$1" || exit 127; printf '${PATH_LINE}%s\\n' "$PATH"; "$1" --version`;
  const args = profile.loginShell ? ["-l", "-c", script, "afk-engine-check", profile.binary] : ["-c", script, "afk-engine-check", profile.binary];
  const result = await run(shell, args, { ...env, ...profile.env }, timeoutMs);
  const all = result.stdout
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const pathLine = all.find((l) => l.startsWith(PATH_LINE));
  const lines = all.filter((l) => l !== pathLine);
  if (result.code === 127 || lines.length === 0) {
    throw new EngineError(
      `engines.${profile.name}.binary`,
      `${JSON.stringify(profile.binary)} is not found on the workers' PATH (${profile.loginShell ? "login " : ""}${shell}, PATH=${env.PATH ?? ""}): install it (npm i -g ${profile.name === "claude" ? "@anthropic-ai/claude-code" : profile.name === "codex" ? "@openai/codex" : profile.name === "gemini" ? "@google/gemini-cli" : "<its package>"}) or set engines.${profile.name}.binary to its absolute path`,
    );
  }
  if (result.code !== 0) {
    const said = (result.stderr.trim() || lines.slice(1).join(" ")).slice(0, 300);
    throw new EngineError(
      `engines.${profile.name}.binary`,
      `${lines[0]} --version failed (exit ${result.code ?? "killed"}): ${said || "no output"}; check that it runs as the user the fleet runs as`,
    );
  }
  return {
    engine: profile.name,
    path: lines[0]!,
    version: lines.slice(1).join(" ").slice(0, 200) || "unknown",
    provider,
    pathVar: pathLine?.slice(PATH_LINE.length) ?? env.PATH ?? "",
  };
}

/**
 * What a worker command's program is in the workers' shell (`env`): a file (its absolute path
 * and the shell's PATH), a builtin, keyword, function or alias (nothing to find), or not found.
 * A leading `~/` is the user's HOME here, as the shell would expand it.
 */
export async function resolveProgram(
  program: string,
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<{ kind: "file"; path: string; pathVar: string } | { kind: "builtin" } | { kind: "missing"; why: string }> {
  const shell = resolveShell(env.SHELL ?? process.env.SHELL);
  const word = program.startsWith("~/") && env.HOME ? `${env.HOME}${program.slice(1)}` : program;
  const result = await run(shell, ["-c", 'command -v -- "$1" || exit 127', "afk-program-check", word], env, timeoutMs);
  const found = result.stdout.trim().split("\n")[0] ?? "";
  if (result.code !== 0 || found === "") return { kind: "missing", why: `is not found by the workers' shell (${shell}, PATH=${env.PATH ?? ""})` };
  if (!found.startsWith("/")) return { kind: "builtin" };
  // A shell names a file it cannot run too (dash's `command -v`).
  if (!executable(found)) return { kind: "missing", why: `is ${found}, which the user the fleet runs as cannot execute (chmod +x it)` };
  return { kind: "file", path: found, pathVar: env.PATH ?? "" };
}
