// What the chaos harness watches while it runs, from git and /proc alone: the forge's refs
// (to time a restarted host's first useful action) and the live worker processes (to catch an
// issue worked twice at once, and which hosts worked which issues).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { findWorkers, type WorkerProc } from "./hosts.js";

const pexec = promisify(execFile);

export interface Recovery {
  kind: "same_state" | "fresh_state";
  /** Seconds from the restart to the first change of claims, branches or the base; null: none seen. */
  seconds: number | null;
}

export interface Overlap {
  issue: number;
  stateDirs: string[];
  pgids: number[];
}

/** refs/afk and refs/heads of the bare repository, as "name sha" lines. */
export async function readRefs(bareRepo: string): Promise<Map<string, string>> {
  const { stdout } = await pexec("git", ["--git-dir", bareRepo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/afk", "refs/heads"]);
  const refs = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const [name, sha] = line.split(" ");
    if (name && sha) refs.set(name, sha);
  }
  return refs;
}

/** Claims, branches and the base: what a host changes when it does something useful (not its heartbeat, not a probe). */
function signature(refs: Map<string, string>): string {
  return [...refs]
    .filter(([name]) => !name.startsWith("refs/afk/heartbeat/") && !name.startsWith("refs/afk/probe/"))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, sha]) => `${name}=${sha}`)
    .join("\n");
}

export class Observer {
  phase = "start";
  readonly recoveries: Recovery[] = [];
  readonly overlaps: Overlap[] = [];
  /** phase -> issue -> state dirs that ran a worker for it. */
  readonly workedBy = new Map<string, Map<number, Set<string>>>();
  private pending: { kind: Recovery["kind"]; at: number; sig: string; pgids: Set<number> } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly overlapKeys = new Set<string>();
  polls = 0;

  constructor(
    private readonly bareRepo: string,
    private readonly root: string,
    private readonly intervalMs = 400,
  ) {}

  start(): void {
    const loop = async (): Promise<void> => {
      await this.poll().catch(() => undefined);
      if (this.timer !== null) this.timer = setTimeout(() => (this.running = loop()), this.intervalMs);
    };
    this.timer = setTimeout(() => (this.running = loop()), 0);
  }

  async stop(): Promise<void> {
    const t = this.timer;
    this.timer = null;
    if (t) clearTimeout(t);
    await this.running;
    this.closePending();
  }

  /**
   * Call right after starting a host on a restart: times its first useful action, which is a
   * claim, branch or base ref that moves, or a worker process that was not running at the restart
   * (a host that resumes its claims starts their workers before any ref needs to move).
   */
  async markRestart(kind: Recovery["kind"], at: number): Promise<void> {
    this.closePending();
    const pgids = new Set((await findWorkers(this.root)).map((w) => w.pgid));
    this.pending = { kind, at, sig: signature(await readRefs(this.bareRepo)), pgids };
  }

  private closePending(): void {
    if (this.pending) this.recoveries.push({ kind: this.pending.kind, seconds: null });
    this.pending = null;
  }

  workers(): Promise<WorkerProc[]> {
    return findWorkers(this.root);
  }

  private async poll(): Promise<void> {
    this.polls += 1;
    const workers = await findWorkers(this.root);
    if (this.pending) {
      const pending = this.pending;
      const born = workers.some((w) => !pending.pgids.has(w.pgid));
      if (born || signature(await readRefs(this.bareRepo)) !== pending.sig) {
        this.recoveries.push({ kind: pending.kind, seconds: (Date.now() - pending.at) / 1000 });
        this.pending = null;
      }
    }
    const byIssue = new Map<number, WorkerProc[]>();
    for (const w of workers) {
      const list = byIssue.get(w.issue) ?? [];
      list.push(w);
      byIssue.set(w.issue, list);
      let phase = this.workedBy.get(this.phase);
      if (!phase) this.workedBy.set(this.phase, (phase = new Map()));
      const dirs = phase.get(w.issue) ?? new Set<string>();
      dirs.add(w.stateDir);
      phase.set(w.issue, dirs);
    }
    for (const [issue, list] of byIssue) {
      if (list.length < 2) continue;
      const key = `${issue}:${list
        .map((w) => w.pgid)
        .sort()
        .join(",")}`;
      if (this.overlapKeys.has(key)) continue;
      this.overlapKeys.add(key);
      this.overlaps.push({ issue, stateDirs: [...new Set(list.map((w) => w.stateDir))], pgids: list.map((w) => w.pgid) });
    }
  }
}
