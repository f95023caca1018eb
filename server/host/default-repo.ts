// The one rule for a call that names no repository, kept by every door a call comes through (a
// session's client of the daemon, and an in-process host): the repository of the calling
// directory's GitHub `origin` remote; when that directory has none, the host's only running
// project; else none, and a tool that needs one asks for `repo` naming what runs. Acting on
// another repository's fleet because it happens to be the only one is not what a call from this
// directory means, so the origin comes first for every tool, reads and writes alike.
import { formatSlug, parseSlug } from "../gh/slug.js";
import { UsageError } from "../gh/errors.js";

/** Where a call without a repository comes from. */
export interface CallPlace {
  /** The calling directory's origin, null when it has none (or the caller is the daemon, whose directory is nobody's). */
  origin(): Promise<string | null>;
  /** The repositories the host runs now. */
  running(): Promise<readonly string[]> | readonly string[];
}

export type RepoChoice = { repo: string; why: "given" | "origin" | "only" };

/** The repository a call means, or null when the rule names none. */
export async function chooseRepo(given: string | undefined, place: CallPlace): Promise<RepoChoice | null> {
  if (given !== undefined) return { repo: formatSlug(parseSlug(given)), why: "given" };
  const origin = await place.origin();
  if (origin !== null) return { repo: origin, why: "origin" };
  const running = await place.running();
  return running.length === 1 ? { repo: running[0]!, why: "only" } : null;
}

/** As chooseRepo, for a tool that cannot act without one: the refusal names the choices. */
export async function needRepo(tool: string, given: string | undefined, place: CallPlace, where: string): Promise<RepoChoice> {
  const choice = await chooseRepo(given, place);
  if (choice) return choice;
  throw refusal(tool, await place.running(), where);
}

/**
 * `input` with the repository the rule names. When it names none, `input` as it is (the tool
 * says what it lacks, or answers for every registration), except that several running projects
 * make a `tool` that acts on one refuse, naming them; a null tool (status of the whole machine) does not.
 */
export async function withRepo<T extends { repo?: string | undefined }>(input: T, place: CallPlace, tool: string | null, where: string): Promise<T> {
  if (input.repo !== undefined) return input;
  const choice = await chooseRepo(undefined, place);
  if (choice) return { ...input, repo: choice.repo };
  const running = await place.running();
  if (tool !== null && running.length > 1) throw refusal(tool, running, where);
  return input;
}

function refusal(tool: string, running: readonly string[], where: string): UsageError {
  const runs = running.length === 0 ? "no project is running on this host" : `this host runs ${running.join(", ")}`;
  return new UsageError(`${tool}: pass repo ("owner/name"): ${where} has no GitHub "origin" remote, and ${runs}`);
}

/** What a call without a repository was taken to mean, for the answer's text ("" when it named one). */
export function choiceNote(choice: RepoChoice, only = "the host's only project"): string {
  return choice.why === "given" ? "" : `${choice.repo} (${choice.why === "origin" ? "this directory's origin" : only}): `;
}
