// What the `actions` runtime needs of the repository a fleet works on, handed over by the fleet
// (server/fleet/births.ts): the Actions REST calls, git in the fleet's work repository (for the
// beats and the issue branch), the ref namespace, the base. And the one reader of the run refs
// all of a repository's runs share: once a half beat for the whole fleet, one fetch of every run
// ref that moved and one read of the newest beat of each run in flight, so twenty runs in flight
// cost the host what one does.
import type { ActionsApi } from "../../gh/actions-api.js";
import type { GitResult } from "../../gh/git.js";
import { readBeatObjects, type BeatObject } from "./beat.js";
import { Serial } from "../../kit/serial.js";

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
export function copiedRunRef(issue: number): string {
  return `${COPIED_RUN_REFS}${issue}`;
}

const COPIED_RUN_REFS = "refs/afk-actions/run/";

export function runRefOf(namespace: string, issue: number): string {
  return `${namespace}/run/${issue}`;
}

/**
 * One listing: the run refs of the runs in flight, as a fetch brought them, and the issue
 * branches those runs push. The branches are listed first, in a call of their own: a branch tip
 * seen here was pushed before any beat this listing shows was read (the order a branch guard's
 * judgement rests on, guard.ts).
 */
export interface RunListing {
  /** When it was taken (host clock, ms). */
  at: number;
  /** Watched issue → its run ref's tip (absent: no run ref on origin). */
  tips: Map<number, string>;
  /** Watched branch → its tip on origin (absent: gone); a branch watched only since is not in it. */
  branches: Map<string, string | null>;
}

export class RunRefReader {
  private listed: RunListing | null = null;
  private listing: Promise<RunListing> | null = null;
  /** Each watched run ref's newest beat, read with the listing that brought it (one git call for all). */
  private readonly beats = new Map<number, { tip: string; object: BeatObject }>();
  /** Branches runs in flight watch (a count each: two runs of one branch never overlap, but an adopter may). */
  private readonly watched = new Map<string, number>();
  /** Issues whose run refs runs in flight read, counted the same way. */
  private readonly issues = new Map<number, number>();
  /** The local run refs' one writer at a time (a fetch, then the read of what it brought). */
  private readonly writes = new Serial();

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

  /** Reads `issue`'s run ref, and lists `branch` (the issue branch its run pushes), from now on, until `unwatch`. */
  watch(issue: number, branch: string): void {
    this.issues.set(issue, (this.issues.get(issue) ?? 0) + 1);
    this.watched.set(branch, (this.watched.get(branch) ?? 0) + 1);
  }

  unwatch(issue: number, branch: string): void {
    countDown(this.issues, issue);
    countDown(this.watched, branch);
    if (!this.issues.has(issue)) this.beats.delete(issue);
  }

  /**
   * The local copy of `issue`'s run ref at `tip`: a listing brought every watched run's, so this
   * asks git nothing but for a tip no listing read (then it is fetched alone); false when that fetch failed.
   */
  async fetch(issue: number, tip: string): Promise<boolean> {
    if (this.beats.get(issue)?.tip === tip) return true;
    return this.writes.run(async () => {
      const spec = `+${runRefOf(this.reach.namespace, issue)}:${copiedRunRef(issue)}`;
      const result = await this.reach.git.fetchRaw(["fetch", "--no-tags", "--quiet", "--no-write-fetch-head", "--no-auto-maintenance", "origin", spec]);
      if (result.exitCode !== 0) return false;
      await this.readNewest([issue]);
      return true;
    });
  }

  /** The newest beat of `issue`'s run ref as the last read brought it, if `tip` is that one. */
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
    const issues = [...this.issues.keys()];
    const tips = await this.writes.run(async () => {
      // Every run ref of the repository that moved, in one fetch (it lists them and brings only
      // what is new): no listing of its own, and a run ref deleted on origin goes here too.
      const fetched = await this.reach.git.fetchRaw([
        "fetch",
        "--no-tags",
        "--quiet",
        "--no-write-fetch-head",
        "--no-auto-maintenance",
        "--prune",
        "origin",
        `+${this.reach.namespace}/run/*:${COPIED_RUN_REFS}*`,
      ]);
      if (fetched.exitCode !== 0) throw new Error(`cannot fetch the run refs: ${fetched.stderr.trim().split("\n").pop() ?? `git exited ${fetched.exitCode}`}`);
      // And the newest beat of each run in flight, with its tip, in one read: each handle takes its own from here (`known`).
      return this.readNewest(issues);
    });
    this.listed = { at, tips, branches };
    return this.listed;
  }

  /** The local run refs of `issues`: their tips, and their newest beats kept for `known`. */
  private async readNewest(issues: number[]): Promise<Map<number, string>> {
    const tips = new Map<number, string>();
    const objects = await readBeatObjects(this.reach.git.dir, issues.map(copiedRunRef));
    for (const n of issues) {
      const object = objects.get(copiedRunRef(n));
      if (object) {
        tips.set(n, object.sha);
        this.beats.set(n, { tip: object.sha, object });
      } else this.beats.delete(n);
    }
    return tips;
  }
}

/** One watcher fewer of `key`: gone at none. */
function countDown<K>(counts: Map<K, number>, key: K): void {
  const n = (counts.get(key) ?? 0) - 1;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
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
