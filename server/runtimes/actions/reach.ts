// What the `actions` runtime needs of the repository a fleet works on, handed over by the fleet
// (server/fleet/births.ts): the Actions REST calls, git in the fleet's work repository (for the
// beats and the issue branch), the ref namespace, the base. And the one reader of the run refs
// all of a repository's runs share: one `ls-remote` a beat for the whole fleet, then one fetch of
// the refs that moved, so twenty runs in flight cost the host what one does.
import type { ActionsApi } from "../../gh/actions-api.js";
import type { GitResult } from "../../gh/git.js";

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

export class RunRefReader {
  private listed: { at: number; tips: Map<number, string> } | null = null;
  private listing: Promise<Map<number, string>> | null = null;
  private readonly fetched = new Map<number, string>();

  constructor(
    private readonly reach: ActionsReach,
    /** A listing younger than this is the answer (ms): the beat period, halved. */
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The run refs' tips, listed at most once per `maxAgeMs` for every run of the repository (`fresh`: now). */
  async tips(fresh = false): Promise<Map<number, string>> {
    if (!fresh && this.listed && this.now() - this.listed.at < this.maxAgeMs) return this.listed.tips;
    this.listing ??= this.list().finally(() => (this.listing = null));
    return this.listing;
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
    return true;
  }

  private async list(): Promise<Map<number, string>> {
    const prefix = `${this.reach.namespace}/run/`;
    const { stdout } = await this.reach.git.network(["ls-remote", "--refs", "origin", `${prefix}*`]);
    const tips = new Map<number, string>();
    for (const line of stdout.split("\n")) {
      const [sha, ref] = line.split("\t");
      if (!sha || !ref?.startsWith(prefix)) continue;
      const n = Number(ref.slice(prefix.length));
      if (Number.isSafeInteger(n) && n > 0) tips.set(n, sha);
    }
    this.listed = { at: this.now(), tips };
    return tips;
  }
}
