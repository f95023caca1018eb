// What the `actions` runtime needs of the repository a fleet works on, handed over by the fleet
// (server/fleet/births.ts): the Actions REST calls, git in the fleet's work repository (for the
// beats and the issue branch), the ref namespace, the base. And the one reader of the run refs
// all of a repository's runs share: one `ls-remote` a beat for the whole fleet, then one fetch of
// the refs that moved, so twenty runs in flight cost the host what one does.
import type { ActionsApi } from "../../gh/actions-api.js";
import type { GitResult } from "../../gh/git.js";
import { readBeatObjects, type BeatObject } from "./beat.js";

/** The work repository's git, as the fleet's RepoGit offers it (server/worktrees/work-repo.ts). */
export interface RemoteGit {
  readonly dir: string;
  run(args: string[], cwd?: string, input?: string): Promise<GitResult>;
  runRaw(args: string[], cwd?: string): Promise<GitResult>;
  network(args: string[]): Promise<GitResult>;
  fetchRaw(args: string[]): Promise<GitResult>;
}

export interface ActionsReach {
  /** "owner/name": the runtime keeps one reader per repository. */
  repo: string;
  api: ActionsApi;
  git: RemoteGit;
  /** The fleet's ref namespace (config `namespace`): run refs are `<namespace>/run/<issue>`. */
  namespace: string;
  base: string;
}

/** Where the host keeps its copy of a run ref (never fetched into the namespace the fleet's claims live in). */
export function localRunRef(issue: number): string {
  return `refs/afk-actions/run/${issue}`;
}

export function runRefOf(namespace: string, issue: number): string {
  return `${namespace}/run/${issue}`;
}

/**
 * One listing of the repository's run refs, and of the issue branches runs in flight watch. The
 * branches are listed first, in a call of their own: a branch tip seen here was pushed before
 * any beat this listing shows was read (the order a branch guard's judgement rests on, guard.ts).
 */
export interface RunListing {
  /** When it was taken (host clock, ms). */
  at: number;
  tips: Map<number, string>;
  /** Watched branch → its tip on origin (absent: gone); a branch watched only since is not in it. */
  branches: Map<string, string | null>;
}

export class RunRefReader {
  private listed: RunListing | null = null;
  private listing: Promise<RunListing> | null = null;
  private readonly fetched = new Map<number, string>();
  /** Each run ref's newest beat, read with the fetch that brought it (one git call for all). */
  private readonly beats = new Map<number, { tip: string; object: BeatObject }>();
  /** Branches runs in flight watch (a count each: two runs of one branch never overlap, but an adopter may). */
  private readonly watched = new Map<string, number>();

  constructor(
    private readonly reach: ActionsReach,
    /** A listing younger than this is the answer (ms): the beat period, halved. */
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The listing (run refs and watched branches), taken at most once per `maxAgeMs` for every run of the repository (`fresh`: now). */
  async current(fresh = false): Promise<RunListing> {
    if (!fresh && this.listed && this.now() - this.listed.at < this.maxAgeMs) return this.listed;
    this.listing ??= this.list().finally(() => (this.listing = null));
    return this.listing;
  }

  /** Lists `branch` (an issue branch a run pushes) with the run refs from now on, until `unwatch`. */
  watch(branch: string): void {
    this.watched.set(branch, (this.watched.get(branch) ?? 0) + 1);
  }

  unwatch(branch: string): void {
    const n = (this.watched.get(branch) ?? 0) - 1;
    if (n > 0) this.watched.set(branch, n);
    else this.watched.delete(branch);
  }

  /** The local copy of `issue`'s run ref at `tip`, fetched if it is not here yet; false when the fetch failed. */
  async fetch(issue: number, tip: string): Promise<boolean> {
    if (this.fetched.get(issue) === tip) return true;
    const prefix = this.reach.namespace;
    // Every moved ref of the repository in one fetch: the others' handles find theirs here.
    const moved = [...(this.listed?.tips ?? new Map([[issue, tip]])).entries()].filter(([n, sha]) => this.fetched.get(n) !== sha || n === issue);
    const specs = moved.map(([n]) => `+${runRefOf(prefix, n)}:${localRunRef(n)}`);
    const result = await this.reach.git.fetchRaw(["fetch", "--no-tags", "--quiet", "--no-write-fetch-head", "origin", ...specs]);
    if (result.exitCode !== 0) return false;
    for (const [n, sha] of moved) this.fetched.set(n, sha);
    // And every moved ref's newest beat in one read: each handle takes its own from here (`known`).
    const objects = await readBeatObjects(this.reach.git.dir, [...new Set(moved.map(([, sha]) => sha))]).catch(() => null);
    for (const [n, sha] of moved) {
      const object = objects?.get(sha);
      if (object) this.beats.set(n, { tip: sha, object });
      else this.beats.delete(n);
    }
    return true;
  }

  /** The newest beat of `issue`'s run ref as the last fetch read it, if `tip` is that one. */
  known(issue: number, tip: string): BeatObject | undefined {
    const read = this.beats.get(issue);
    return read?.tip === tip ? read.object : undefined;
  }

  private async list(): Promise<RunListing> {
    const at = this.now();
    // The watched branches before the run refs (see RunListing): one call more per listing, for all runs.
    const watched = [...this.watched.keys()];
    const branches = new Map<string, string | null>(watched.map((b) => [b, null]));
    if (watched.length > 0) {
      const { stdout } = await this.reach.git.network(["ls-remote", "--refs", "origin", ...watched.map((b) => `refs/heads/${b}`)]);
      for (const [sha, ref] of refLines(stdout)) if (branches.has(ref.slice("refs/heads/".length))) branches.set(ref.slice("refs/heads/".length), sha);
    }
    const prefix = `${this.reach.namespace}/run/`;
    const { stdout } = await this.reach.git.network(["ls-remote", "--refs", "origin", `${prefix}*`]);
    const tips = new Map<number, string>();
    for (const [sha, ref] of refLines(stdout)) {
      if (!ref.startsWith(prefix)) continue;
      const n = Number(ref.slice(prefix.length));
      if (Number.isSafeInteger(n) && n > 0) tips.set(n, sha);
    }
    this.listed = { at, tips, branches };
    return this.listed;
  }
}

/** `ls-remote`'s lines as [sha, ref]. */
function refLines(stdout: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const line of stdout.split("\n")) {
    const [sha, ref] = line.split("\t");
    if (sha && ref && /^[0-9a-f]{40,64}$/.test(sha)) out.push([sha, ref]);
  }
  return out;
}
