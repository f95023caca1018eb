// A landed PR's validation note: one comment on the PR listing what the gate checked, the
// commits that landed and the files they touched, under a marker by the fleet's login. A
// landing's wrap-up is its only writer, once per merged PR, right after a merge this process
// made: a note follows a merge and only one merge of a PR succeeds, so there is none yet, and a
// restart's recovery of a landed PR writes none. The wrap-up posts it without reading the PR's
// comments first (a 200 on every landed PR, that never found a note). A caller that may come
// twice (`mayExist`) looks first and edits the one comment, never adds another.
import { latestRuns } from "../../state/gate.js";
import type { Checks, Forge } from "../../gh/forge.js";
import { neutralizeMarkers } from "../../board/render.js";
import { sameLogin } from "../../state/markers.js";
import { oneLine } from "../../text/text.js";
import type { WorkRepo } from "../../worktrees/worktrees.js";

export const VALIDATION_MARKER = "<!-- afk:validation -->";
const MAX_COMMITS = 50;
const MAX_FILES = 100;

export interface Validation {
  pr: number;
  head: string;
  mergeSha: string;
  /** "name: result" per check; for a local gate, the command. */
  checks: string[];
  commits: Array<{ sha: string; subject: string }>;
  files: string[];
}

const safe = (text: string, max = 200): string => neutralizeMarkers(oneLine(text, max)).replace(/`/g, "'");

/** The gate's checks as the tick read them on the landed head, or the local gate's command. */
export function checkLines(checks: Checks | undefined, gateCommand: string | null): string[] {
  if (gateCommand !== null) return [`local gate \`${safe(gateCommand)}\`: passed`];
  if (!checks) return [];
  return [
    // The newest run of each name: an earlier attempt that a re-run replaced is not what passed.
    ...[...latestRuns(checks.checkRuns).values()].map((r) => `${safe(r.name, 100)}: ${r.conclusion ?? r.status}`),
    ...checks.statuses.map((s) => `${safe(s.context, 100)}: ${s.state}`),
  ];
}

export function renderValidation(v: Validation): string {
  const list = <T>(items: readonly T[], max: number, line: (item: T) => string, more: string): string[] => [
    ...items.slice(0, max).map(line),
    ...(items.length > max ? [`- … and ${items.length - max} more ${more}`] : []),
  ];
  return [
    VALIDATION_MARKER,
    `**afk-mcp landed this PR** at \`${v.head.slice(0, 12)}\` (base now \`${v.mergeSha.slice(0, 12)}\`).`,
    "",
    `Checks (${v.checks.length}):`,
    ...(v.checks.length > 0 ? v.checks.map((c) => `- ${c}`) : ["- none reported"]),
    "",
    `Commits (${v.commits.length}):`,
    ...list(v.commits, MAX_COMMITS, (c) => `- \`${c.sha.slice(0, 12)}\` ${safe(c.subject)}`, "commits"),
    "",
    `Files touched (${v.files.length}):`,
    ...list(v.files, MAX_FILES, (f) => `- \`${safe(f, 300)}\``, "files"),
    "",
  ].join("\n");
}

/** The commits and files the head adds to `baseBefore`, read in the work repository (no request). */
export async function landedChanges(workRepo: WorkRepo, baseBefore: string, head: string): Promise<Pick<Validation, "commits" | "files">> {
  const log = await workRepo.git.run(["log", "--no-merges", "--format=%H%x00%s", `${baseBefore}..${head}`]);
  const commits = log.stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [sha = "", subject = ""] = line.split("\0");
      return { sha, subject };
    });
  const diff = await workRepo.git.run(["diff", "--name-only", "-z", `${baseBefore}...${head}`]);
  return { commits, files: diff.stdout.split("\0").filter(Boolean) };
}

/**
 * Creates the PR's validation comment; with `mayExist`, edits the one there instead. Returns what
 * it did.
 */
export async function upsertValidation(
  forge: Forge,
  login: string,
  pr: number,
  body: string,
  { mayExist = false }: { mayExist?: boolean } = {},
): Promise<"created" | "updated" | "unchanged"> {
  // One request, only for a caller that may come twice (see above): the comment may exist then.
  const existing = mayExist ? (await forge.listComments(pr)).find((c) => sameLogin(c.author, login) && c.body.includes(VALIDATION_MARKER)) : undefined;
  if (existing && existing.body.trim() === body.trim()) return "unchanged";
  // One request either way: the note edited in place, or posted once.
  if (existing) await forge.updateComment(existing.id, body);
  else await forge.createComment(pr, body);
  return existing ? "updated" : "created";
}
