// The issue branch of a run in flight, as its host trusts it: only the tips the run's own beats
// reported (and the start the host published). Every job token of a repository can push to
// every branch, so another run's engine (prompt-injected, say) may push onto this issue's branch;
// taking origin's branch as the run's work would carry that commit into this issue's PR.
//
// A tip on origin that no beat reported is judged only once it cannot be a push of this run whose
// beat is still on its way: the runner pushes the branch, then the beat that reports it, so a tip
// seen in a listing (branches are listed before the run refs: reach.ts) whose newest beat is N is
// this run's only if a beat up to N + 1 reports it (or a later tip of the run contains it); at
// the run's end, after its last beat, every push it made is reported. A foreign tip is put back
// where the run had pushed the branch, from this host, with a lease on the foreign tip, and said:
// the issue did nothing wrong, so no attempt is spent, and nothing it pushed is lost.
import type { BeatFacts } from "./beat.js";
import type { RemoteGit } from "./reach.js";

export type TipVerdict = "own" | "foreign" | "unknown";

export interface GuardInput {
  git: RemoteGit;
  issue: number;
  branch: string;
  /** The tip the host published before the dispatch (the worktree's HEAD), or null. */
  start: string | null;
  /** When the run was dispatched (epoch ms): a push before it is an earlier run's, not this guard's to judge. */
  since: number;
  /** A line for the worker lane (the run's own output goes there too). */
  say: (line: string) => void;
}

const SHA = /^[0-9a-f]{40,64}$/;

export class BranchGuard {
  /** Tips this run's beats reported, and the start. */
  private readonly reported = new Set<string>();
  /** The newest tip the run reported (where the branch is put back), else the start. */
  private newest: string | null;
  /** The newest beat of this run read. */
  private seq = 0;
  /** Origin's tip that no beat reported yet, and the newest beat read when it was listed. */
  private candidate: { sha: string; after: number } | null = null;
  /** Foreign tips this guard put back. */
  private readonly undone = new Set<string>();
  /** The run ended: `complete` when its last beat was read (every push it made is reported). */
  private ended: { complete: boolean } | null = null;
  private waiters: Array<() => void> = [];
  /** What the board and status say of this run's branch (no attempt spent for them). */
  readonly notices: string[] = [];

  constructor(private readonly input: GuardInput) {
    this.newest = input.start && SHA.test(input.start) ? input.start : null;
    if (this.newest) this.reported.add(this.newest);
  }

  get branch(): string {
    return this.input.branch;
  }

  /** When the run it guards was dispatched (epoch ms). */
  get since(): number {
    return this.input.since;
  }

  /** The tip to take home: the newest one the run reported, else the start. */
  trusted(): string | null {
    return this.newest;
  }

  /** A beat of this run, read (in order). */
  beat(facts: BeatFacts): void {
    this.seq = Math.max(this.seq, facts.seq);
    if (facts.pushed && SHA.test(facts.pushed)) {
      this.reported.add(facts.pushed);
      this.newest = facts.pushed;
    }
    this.wake();
  }

  /**
   * Origin's tip of the branch as a listing showed it, once the beats that listing showed are
   * read (`complete`: the run ended with its last beat read). A foreign tip is put back.
   */
  async check(tip: string | null | undefined, complete: boolean): Promise<void> {
    try {
      if (!tip || !SHA.test(tip)) return;
      // A tip a beat reported (the usual listing: the branch as the run left it): no git to ask.
      if (this.reported.has(tip)) {
        this.candidate = null;
        return;
      }
      await this.have(tip, true);
      if (await this.own(tip)) this.candidate = null;
      else if (complete || (this.candidate?.sha === tip && this.seq > this.candidate.after)) await this.undo(tip);
      else if (this.candidate?.sha !== tip) this.candidate = { sha: tip, after: this.seq };
    } finally {
      this.wake();
    }
  }

  /** The run ended (`complete`: its last beat was read). */
  end(complete: boolean): void {
    this.ended = { complete };
    this.wake();
  }

  /** Whose push `sha` onto this branch was, as far as this guard can tell now. */
  async verdict(sha: string): Promise<TipVerdict | "pending"> {
    if (!SHA.test(sha)) return "unknown";
    if (await this.own(sha)) return "own";
    if (this.undone.has(sha)) return "foreign";
    for (const u of this.undone) if (await this.isAncestor(sha, u)) return "foreign";
    if (this.ended) return this.ended.complete ? "foreign" : "unknown";
    return "pending";
  }

  /** `verdict`, waiting up to `ms` for the run's next beats or its end to decide it. */
  async settled(sha: string, ms: number): Promise<TipVerdict> {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = await this.verdict(sha);
      if (v !== "pending") return v;
      const left = deadline - Date.now();
      if (left <= 0) return "unknown";
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        timer.unref();
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private async own(sha: string): Promise<boolean> {
    if (this.reported.has(sha)) return true;
    for (const r of this.reported) if (await this.isAncestor(sha, r)) return true;
    return false;
  }

  private async isAncestor(a: string, b: string): Promise<boolean> {
    if (!(await this.have(a, false)) || !(await this.have(b, false))) return false;
    return (await this.input.git.runRaw(["merge-base", "--is-ancestor", a, b])).exitCode === 0;
  }

  /** Whether the object is here; `fetch`: fetch the branch (then the sha itself) when it is not. */
  private async have(sha: string, fetch: boolean): Promise<boolean> {
    const { git, branch, issue } = this.input;
    const here = async (): Promise<boolean> => (await git.runRaw(["cat-file", "-e", `${sha}^{commit}`])).exitCode === 0;
    if (await here()) return true;
    if (!fetch) return false;
    await git.fetchRaw(["fetch", "--no-tags", "--quiet", "--no-write-fetch-head", "origin", `+refs/heads/${branch}:refs/afk-actions/branch/${issue}`]);
    if (await here()) return true;
    await git.fetchRaw(["fetch", "--no-tags", "--quiet", "--no-write-fetch-head", "origin", sha]);
    return here();
  }

  /** Puts origin's branch back at the run's newest tip, with a lease on the foreign one. */
  private async undo(foreign: string): Promise<void> {
    const { git, branch } = this.input;
    const back = this.newest;
    const short = (s: string): string => s.slice(0, 12);
    if (!back || !(await this.have(back, true))) {
      this.input.say(`afk: ${branch} on origin holds ${short(foreign)}, which this run never pushed, and the tip to put back is not at hand: left as it is`);
      return;
    }
    try {
      await git.network(["push", "--quiet", `--force-with-lease=refs/heads/${branch}:${foreign}`, "origin", `${back}:refs/heads/${branch}`]);
    } catch (error) {
      // Origin moved again (the lease): the next listing judges its new tip.
      this.input.say(`afk: could not put ${branch} back at ${short(back)} over ${short(foreign)}, which this run never pushed: ${(error as Error).message}`);
      return;
    }
    this.undone.add(foreign);
    this.candidate = null;
    const text = `a push this issue's run never made moved ${branch} to ${short(foreign)} (another run's job token: every run can push to every branch); the host put the branch back at ${short(back)}, where this run had pushed it: the foreign commit is not in this issue's work, nothing this run pushed is lost, and no attempt is spent`;
    this.notices.push(text);
    this.input.say(`afk: ${text}`);
  }
}
