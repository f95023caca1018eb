// What a finished worker left behind, judged by the branch and the verdict file — never by its
// exit code (docs/architecture.md, runtime lesson 2) — and the strict reader for that verdict file, which the
// agent writes and therefore may have written badly, hugely, or as a symlink to a secret.
import { constants as fsConstants } from "node:fs";
import { open } from "node:fs/promises";
import { VERDICT_KINDS, type Verdict, type VerdictKind } from "../state/markers.js";
import { clean } from "../text/fenced.js";

export type WorkerOutcomeKind =
  /** Push the branch and open (or keep) the PR. */
  | "commits"
  /** Post the verdict marker; the issue is classified by it (idle_done, idle_blocked, idle_failed). */
  | "verdict"
  /** No commits and no verdict: idle_failed (a failed attempt). */
  | "nothing";

export interface WorkerOutcomeInput {
  /** Commits on the worker branch that are not on base. */
  commitsAhead: number;
  /** Uncommitted changes in the worktree. */
  dirty: boolean;
  verdict: Verdict | null;
  /** The worker opened a PR itself (it was told it need not). */
  prOpened: boolean;
}

export interface WorkerOutcome {
  kind: WorkerOutcomeKind;
  /** The verdict to post, for kind "verdict". */
  verdict: Verdict | null;
  /** Facts worth a line in the lane or the board (a refuted verdict, work left uncommitted). */
  notes: string[];
}

/**
 * Precedence:
 * 1. `blocked` / `giving-up` win over commits: the worker itself says the work is not done, so
 *    it must not be proposed for landing. The commits stay on the branch for the next attempt.
 * 2. Commits (or a PR the worker opened) → "commits". An `already-satisfied` verdict next to
 *    commits is refuted by them (docs/architecture.md, "no-PR outcomes": changes refute already-satisfied); the commits are the
 *    result, and they face the gate like any other PR.
 * 3. `already-satisfied` with no commits → "verdict" (the fleet still verifies the empty diff).
 * 4. Else "nothing". Uncommitted changes are noted, never committed for the worker.
 */
export function workerOutcome(input: WorkerOutcomeInput): WorkerOutcome {
  const notes: string[] = [];
  const ahead = Math.max(0, Math.floor(input.commitsAhead));
  const hasWork = ahead > 0 || input.prOpened;
  const verdict = input.verdict;
  if (input.dirty) notes.push("uncommitted changes were left in the worktree; they are not part of the result");
  if (verdict && (verdict.kind === "blocked" || verdict.kind === "giving-up")) {
    if (hasWork) notes.push(`verdict ${verdict.kind} wins over ${ahead} commit(s) on the branch; they are kept for the next attempt, not landed`);
    if (input.prOpened) notes.push("the worker opened a PR although its verdict says the work is not done");
    return { kind: "verdict", verdict, notes };
  }
  if (hasWork) {
    if (verdict?.kind === "already-satisfied") {
      notes.push(`verdict already-satisfied is refuted by ${ahead} commit(s) on the branch; the commits are proposed instead`);
    }
    if (ahead === 0) notes.push("the worker opened a PR but the branch has no commits ahead of base");
    return { kind: "commits", verdict: null, notes };
  }
  if (verdict) return { kind: "verdict", verdict, notes };
  return { kind: "nothing", verdict: null, notes };
}

// ---- the verdict file --------------------------------------------------------------------------

/** The file is read up to this size; a bigger one is refused. */
export const VERDICT_FILE_MAX_BYTES = 16 * 1024;
/** The reason is what humans read on the issue: a few paragraphs at most. */
export const VERDICT_REASON_MAX_CHARS = 4_000;
const BLOCKED_BY_MAX = 50;

export type VerdictFileProblem = "unreadable" | "not_a_file" | "too_large" | "not_json" | "bad_shape" | "unknown_kind" | "bad_reason" | "bad_blocked_by";

/**
 * A verdict file that exists but cannot be honoured. Treated as no verdict, with this as a note.
 * The message never quotes the file's content: it may be anything, a secret included.
 */
export class VerdictFileError extends Error {
  constructor(
    readonly problem: VerdictFileProblem,
    readonly path: string,
    detail: string,
  ) {
    super(`verdict file ${path}: ${detail}`);
    this.name = "VerdictFileError";
  }
}

const EXPECTED = 'expected {"verdict": "already-satisfied" | "blocked" | "giving-up", "reason": "..."}';

/** Validates a parsed verdict object. Unknown extra keys are ignored; everything named is strict. */
export function parseVerdictObject(value: unknown, path = "(verdict)"): Verdict | VerdictFileError {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return new VerdictFileError("bad_shape", path, `not a JSON object; ${EXPECTED}`);
  }
  const record = value as Record<string, unknown>;
  // "kind" is what the fleet's own marker calls it; accept it when "verdict" is absent.
  const kind = "verdict" in record ? record.verdict : record.kind;
  if (typeof kind !== "string") return new VerdictFileError("bad_shape", path, `no "verdict" string; ${EXPECTED}`);
  if (!(VERDICT_KINDS as readonly string[]).includes(kind)) {
    return new VerdictFileError("unknown_kind", path, `unknown verdict kind; ${EXPECTED}`);
  }
  if (typeof record.reason !== "string") return new VerdictFileError("bad_reason", path, `"reason" must be a string; ${EXPECTED}`);
  const reason = clean(record.reason).trim();
  if (reason === "") return new VerdictFileError("bad_reason", path, '"reason" is empty: say why, for the humans and the next attempt');
  if (reason.length > VERDICT_REASON_MAX_CHARS) {
    return new VerdictFileError("bad_reason", path, `"reason" is ${reason.length} characters; at most ${VERDICT_REASON_MAX_CHARS}`);
  }
  const verdict: Verdict = { kind: kind as VerdictKind, reason };
  const blocked = record.blocked_by ?? record.blockedBy;
  if (blocked !== undefined && blocked !== null) {
    if (!Array.isArray(blocked) || blocked.length > BLOCKED_BY_MAX || !blocked.every((n) => typeof n === "number" && Number.isSafeInteger(n) && n > 0)) {
      return new VerdictFileError("bad_blocked_by", path, `"blocked_by" must be a list of at most ${BLOCKED_BY_MAX} issue numbers`);
    }
    if (blocked.length > 0) verdict.blockedBy = [...new Set(blocked as number[])].sort((a, b) => a - b);
  }
  return verdict;
}

/**
 * Reads the worker's verdict file: null when there is none, the verdict when it is valid, a
 * VerdictFileError when it is not. Refuses symlinks (a link to ~/.ssh/id_rsa must not end up in
 * a comment), FIFOs and devices (which could block the host), and anything over 16 KiB.
 */
export async function readVerdictFile(path: string): Promise<Verdict | null | VerdictFileError> {
  let handle;
  try {
    handle = await open(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    if (code === "ELOOP") return new VerdictFileError("not_a_file", path, "is a symbolic link; write the JSON to the file itself");
    return new VerdictFileError("unreadable", path, `cannot be opened (${code ?? "error"})`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return new VerdictFileError("not_a_file", path, "is not a regular file");
    if (info.size > VERDICT_FILE_MAX_BYTES) {
      return new VerdictFileError("too_large", path, `is ${info.size} bytes; at most ${VERDICT_FILE_MAX_BYTES}`);
    }
    // Read one byte more than allowed: the file may grow between stat and read.
    const buf = Buffer.alloc(VERDICT_FILE_MAX_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, length, buf.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length >= buf.length) break;
    }
    if (length > VERDICT_FILE_MAX_BYTES) {
      return new VerdictFileError("too_large", path, `is over ${VERDICT_FILE_MAX_BYTES} bytes`);
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(buf.subarray(0, length));
    } catch {
      return new VerdictFileError("not_json", path, "is not UTF-8 text");
    }
    let value: unknown;
    try {
      value = JSON.parse(text.replace(/^\uFEFF/, ""));
    } catch {
      return new VerdictFileError("not_json", path, `is not valid JSON; ${EXPECTED}`);
    }
    return parseVerdictObject(value, path);
  } catch (err) {
    return new VerdictFileError("unreadable", path, `cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  } finally {
    await handle.close();
  }
}
