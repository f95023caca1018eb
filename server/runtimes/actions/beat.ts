// The heartbeat a runner pushes and the host reads: one commit per beat on the issue's run ref
// (`<namespace>/run/<issue>`), parented on the run's previous beat, whose tree holds
// `beat.json` (who, when, busy or not, the branch tip it pushed, the exit once it ended),
// `output.jsonl` (the lines printed since the previous beat) and, on the last beat,
// `verdict.json`. Both sides speak it through git alone: a beat is a push for the runner and a
// fetch for the host, never a REST request, so it costs no rate limit.
import { git } from "../../gh/git.js";

/** Bounds on one beat: a chatty agent's output between two beats is cut (oldest first), a verdict is never more than the host reads. */
export const BEAT_OUTPUT_MAX_BYTES = 256 * 1024;
export const BEAT_VERDICT_MAX_BYTES = 64 * 1024;

export interface BeatFacts {
  v: 1;
  /** The workflow run this beat is from (GITHUB_RUN_ID): the host ignores beats of any other run. */
  run_id: number;
  issue: number;
  attempt: number;
  /** 1, 2, … within the run. */
  seq: number;
  /** ISO: when the beat was made. */
  at: string;
  /** ISO: the newest sign of life on the runner (output, a file written, a commit). */
  activity_at: string;
  /** Whether the engine's process tree was using CPU since the last beat ("unknown": the first look). */
  busy: boolean | "unknown";
  why: string;
  /** The branch tip the runner has pushed, if any. */
  pushed: string | null;
  /** Set on the last beat: the engine's exit. */
  exit: { code: number | null; signal: string | null; duration_ms: number } | null;
  /** Lines in this beat's output.jsonl, and lines the cap dropped before them. */
  lines: number;
  dropped: number;
}

export interface BeatLine {
  /** "o": stdout, "e": stderr. */
  s: "o" | "e";
  l: string;
  /** Epoch ms. */
  t: number;
}

export interface Beat {
  sha: string;
  facts: BeatFacts;
  output: BeatLine[];
  verdict: string | null;
}

const IDENTITY = {
  GIT_AUTHOR_NAME: "afk-mcp runner",
  GIT_AUTHOR_EMAIL: "afk-mcp@users.noreply.github.com",
  GIT_COMMITTER_NAME: "afk-mcp runner",
  GIT_COMMITTER_EMAIL: "afk-mcp@users.noreply.github.com",
};

/** Keeps the newest lines within `maxBytes`; returns them and how many were dropped. */
export function boundLines(lines: readonly BeatLine[], maxBytes = BEAT_OUTPUT_MAX_BYTES): { kept: BeatLine[]; dropped: number } {
  let bytes = 0;
  let i = lines.length;
  while (i > 0) {
    const size = Buffer.byteLength(JSON.stringify(lines[i - 1])) + 1;
    if (bytes + size > maxBytes) break;
    bytes += size;
    i--;
  }
  return { kept: lines.slice(i), dropped: i };
}

/** Writes one beat commit in the repository at `cwd` (objects only: no ref, no index, no work tree touched); returns its sha. */
export async function writeBeat(
  cwd: string,
  input: { facts: BeatFacts; output: readonly BeatLine[]; verdict: string | null; parent: string | null },
): Promise<string> {
  const blob = async (text: string): Promise<string> => (await git(["hash-object", "-w", "--stdin"], { cwd, input: text })).stdout.trim();
  const entries = [`100644 blob ${await blob(`${JSON.stringify(input.facts, null, 1)}\n`)}\tbeat.json`];
  entries.push(`100644 blob ${await blob(input.output.map((l) => JSON.stringify(l)).join("\n") + (input.output.length ? "\n" : ""))}\toutput.jsonl`);
  if (input.verdict !== null) entries.push(`100644 blob ${await blob(input.verdict.slice(0, BEAT_VERDICT_MAX_BYTES))}\tverdict.json`);
  const tree = (await git(["mktree"], { cwd, input: `${entries.join("\n")}\n` })).stdout.trim();
  const message = `afk run #${input.facts.issue} attempt ${input.facts.attempt} beat ${input.facts.seq}${input.facts.exit ? " (final)" : ""}\n`;
  const args = ["commit-tree", tree, ...(input.parent ? ["-p", input.parent] : []), "-F", "-"];
  return (await git(args, { cwd, input: message, env: IDENTITY })).stdout.trim();
}

/** Parses beat.json; null when it is not a beat of the expected shape (a stale or foreign ref). */
export function parseFacts(text: string): BeatFacts | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  if (raw === null || typeof raw !== "object") return null;
  const f = raw as Record<string, unknown>;
  const int = (v: unknown): boolean => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
  if (f.v !== 1 || !int(f.run_id) || !int(f.issue) || !int(f.attempt) || !int(f.seq) || typeof f.at !== "string") return null;
  const exit = f.exit as BeatFacts["exit"] | undefined;
  return {
    v: 1,
    run_id: f.run_id as number,
    issue: f.issue as number,
    attempt: f.attempt as number,
    seq: f.seq as number,
    at: f.at,
    activity_at: typeof f.activity_at === "string" ? f.activity_at : f.at,
    busy: f.busy === true || f.busy === false ? f.busy : "unknown",
    why: typeof f.why === "string" ? f.why.slice(0, 500) : "",
    pushed: typeof f.pushed === "string" && /^[0-9a-f]{40,64}$/.test(f.pushed) ? f.pushed : null,
    exit:
      exit && typeof exit === "object"
        ? {
            code: typeof exit.code === "number" ? exit.code : null,
            signal: typeof exit.signal === "string" ? exit.signal.slice(0, 20) : null,
            duration_ms: typeof exit.duration_ms === "number" ? exit.duration_ms : 0,
          }
        : null,
    lines: int(f.lines) ? (f.lines as number) : 0,
    dropped: int(f.dropped) ? (f.dropped as number) : 0,
  };
}

/** Parses output.jsonl: malformed lines are skipped, every line is bounded. */
export function parseOutput(text: string): BeatLine[] {
  const out: BeatLine[] = [];
  for (const raw of text.split("\n")) {
    if (raw === "") continue;
    try {
      const l = JSON.parse(raw) as Partial<BeatLine>;
      if ((l.s === "o" || l.s === "e") && typeof l.l === "string") out.push({ s: l.s, l: l.l.slice(0, 64 * 1024), t: typeof l.t === "number" ? l.t : 0 });
    } catch {
      // A line that is not JSON is not ours.
    }
  }
  return out;
}

const BEAT_FILES = ["beat.json", "output.jsonl", "verdict.json"] as const;

/** A beat commit as `cat-file --batch` read it: its name, its parent when it has exactly one, and its files. */
export interface BeatObject {
  sha: string;
  parent: string | null;
  files: Array<string | null>;
}

/**
 * The beat commits `names` (shas, or the host's local run refs) of the repository at `cwd`, in one
 * git call: a listing reads the newest beat of every run in flight together (RunRefReader), so
 * twenty runs in flight cost the host one spawn a listing, not one each (every git call is a
 * spawn the host pays for). A name that resolves to nothing is absent from the answer. A ref is
 * resolved once per line, so its writer must not move it during the read (the reader is its only
 * writer, and waits).
 */
export async function readBeatObjects(cwd: string, names: readonly string[]): Promise<Map<string, BeatObject>> {
  const out = new Map<string, BeatObject>();
  if (names.length === 0) return out;
  const input = names.flatMap((name) => [name, ...BEAT_FILES.map((n) => `${name}:${n}`)]).join("\n") + "\n";
  const { stdout } = await git(["cat-file", "--batch"], { cwd, input });
  const answers = parseBatch(stdout);
  const per = 1 + BEAT_FILES.length;
  names.forEach((name, i) => {
    const [commit, ...files] = answers.slice(i * per, (i + 1) * per);
    if (!commit || commit.type !== "commit") return;
    const header = commit.body.split("\n\n", 1)[0] ?? "";
    const parents = [...header.matchAll(/^parent ([0-9a-f]{40,64})$/gm)].map((m) => m[1]!);
    out.set(name, { sha: commit.sha, parent: parents.length === 1 ? parents[0]! : null, files: files.map((f) => (f ? f.body : null)) });
  });
  return out;
}

/**
 * The beats after `seen` up to `tip`, oldest first, read from the objects of the repository at
 * `cwd`. The usual read, one beat since the last (the tip's one parent is `seen`), takes one git
 * call, or none when `known` brings the tip as read with others; a catch-up lists the range first.
 */
export async function readBeats(cwd: string, tip: string, seen: string | null, known?: BeatObject): Promise<Beat[]> {
  if (seen) {
    const object = known ?? (await readBeatObjects(cwd, [tip])).get(tip);
    if (object && object.parent === seen) {
      const [beat, output, verdict] = object.files;
      const facts = parseFacts(beat ?? "");
      return facts ? [{ sha: tip, facts, output: parseOutput(output ?? ""), verdict: verdict ?? null }] : [];
    }
  }
  const range = seen ? [tip, `^${seen}`] : [tip];
  const listed = await git(["rev-list", "--reverse", "--max-count=10000", ...range, "--"], { cwd }).catch(() =>
    git(["rev-list", "--reverse", "--max-count=10000", tip, "--"], { cwd }),
  );
  const shas = listed.stdout.split("\n").filter((s) => /^[0-9a-f]{40,64}$/.test(s));
  if (shas.length === 0) return [];
  const input = shas.flatMap((sha) => BEAT_FILES.map((n) => `${sha}:${n}`)).join("\n") + "\n";
  const { stdout } = await git(["cat-file", "--batch"], { cwd, input });
  const files = parseBatch(stdout).map((f) => f?.body ?? null);
  const beats: Beat[] = [];
  shas.forEach((sha, i) => {
    const facts = parseFacts(files[i * 3] ?? "");
    if (facts) beats.push({ sha, facts, output: parseOutput(files[i * 3 + 1] ?? ""), verdict: files[i * 3 + 2] ?? null });
  });
  return beats;
}

interface BatchAnswer {
  sha: string;
  type: string;
  body: string;
}

/** `cat-file --batch` answers, in order: each object's name, type and content, or null when missing. */
function parseBatch(stdout: string): Array<BatchAnswer | null> {
  const out: Array<BatchAnswer | null> = [];
  const buf = Buffer.from(stdout, "utf8");
  let at = 0;
  while (at < buf.length) {
    const nl = buf.indexOf(0x0a, at);
    if (nl === -1) break;
    const header = buf.subarray(at, nl).toString("utf8");
    at = nl + 1;
    if (header.endsWith(" missing") || header.endsWith(" ambiguous")) {
      out.push(null);
      continue;
    }
    const [sha = "", type = "", size = "0"] = header.split(" ");
    const body = buf.subarray(at, at + Number(size)).toString("utf8");
    out.push({ sha, type, body });
    at += Number(size) + 1;
  }
  return out;
}
