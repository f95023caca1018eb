// The shell an agent's command line runs in, and its quoting: every runtime hands the user's
// opaque command to a POSIX shell as its one `-c` argument (never `shell: true`), with the brief's
// path quoted in where the command says `{brief}`.
import { accessSync, constants as fsConstants } from "node:fs";
import { basename, isAbsolute } from "node:path";

/** Shells that take `-c <command>` and POSIX single quotes; anything else falls back to /bin/sh. */
const POSIX_SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "oksh", "ash", "yash", "posh"]);

/** Whether `path` may be executed by us. */
export function executable(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `$SHELL` when it is an absolute path to an executable POSIX shell, else /bin/sh. */
export function resolveShell(candidate: string | undefined): string {
  if (candidate && isAbsolute(candidate) && POSIX_SHELLS.has(basename(candidate)) && executable(candidate)) {
    return candidate;
  }
  return "/bin/sh";
}

/** POSIX single-quoting: safe for any string without NUL, newlines included. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command with every `{brief}` replaced by the quoted brief path. A placeholder the user
 * already wrapped in quotes ("{brief}" or '{brief}') is replaced quotes and all, so the path is
 * quoted exactly once.
 */
export function expandCommand(command: string, briefPath: string): string {
  const quoted = shellQuote(briefPath);
  return command.split('"{brief}"').join(quoted).split("'{brief}'").join(quoted).split("{brief}").join(quoted);
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
const PLAIN = /^[A-Za-z0-9_@%+=:,./~-]+$/;

/**
 * The program a command line runs: its first word after any `NAME=value` assignments, when that
 * word is plain or single-quoted (what an engine's command line is made of, and most worker
 * commands); null for anything a shell would expand or that is not one word.
 */
export function programOf(command: string): string | null {
  let rest = command.trimStart();
  for (;;) {
    const word = /^(?:'[^']*'|[^\s'"\\$`;&|<>()]+)+/.exec(rest)?.[0];
    if (word === undefined) return null;
    const after = rest.slice(word.length);
    if (after !== "" && !/^\s/.test(after)) return null;
    if (ASSIGNMENT.test(word)) {
      rest = after.trimStart();
      continue;
    }
    const text = word.startsWith("'") && word.endsWith("'") && word.length >= 2 && !word.slice(1, -1).includes("'") ? word.slice(1, -1) : word;
    return text !== "" && (text === word ? PLAIN.test(text) : !text.includes("\n")) ? text : null;
  }
}
