// The host's events for listening sessions (see HostEvent in api.ts): supervisor warnings and
// errors as they are written, a board event after a tick that changed the board (so at most
// one per tick), and repository starts and stops. A long call (a stop's drain) can also follow
// one repository's supervisor records while it runs, to say its steps as progress.
import type { HostEvent } from "./api.js";

/** The fields of a supervisor record a follower reads. */
export interface SupervisorRecord {
  level?: string;
  event?: string;
  msg?: string;
  ts?: string;
}

export class HostEvents {
  private readonly listeners = new Set<(event: HostEvent) => void>();
  /** Per repository, the board as last pushed: an event fires only when it changed. */
  private readonly boardKeys = new Map<string, string>();
  /** Per repository (lower case), who follows its supervisor records. */
  private readonly followers = new Map<string, Set<(record: SupervisorRecord) => void>>();

  constructor(private readonly boardKey: (repo: string) => string | null) {}

  subscribe(listener: (event: HostEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls `fn` with each supervisor record of `repo` until the returned function is called. */
  follow(repo: string, fn: (record: SupervisorRecord) => void): () => void {
    const id = repo.toLowerCase();
    const set = this.followers.get(id) ?? new Set();
    set.add(fn);
    this.followers.set(id, set);
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.followers.get(id) === set) this.followers.delete(id);
    };
  }

  emit(event: HostEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // A listener's failure is its session's problem; the fleet goes on.
      }
    }
  }

  /** A lane record was written (one JSON line). The monitor lane gets one "tick" record per tick. */
  observe(repo: string, lane: string, line: string): void {
    const followers = lane === "supervisor" ? this.followers.get(repo.toLowerCase()) : undefined;
    if ((this.listeners.size === 0 && !followers) || (lane !== "supervisor" && lane !== "monitor")) return;
    let record: SupervisorRecord;
    try {
      record = JSON.parse(line) as SupervisorRecord;
    } catch {
      return;
    }
    for (const fn of followers ?? []) {
      try {
        fn(record);
      } catch {
        // As for listeners: a follower's failure never reaches the fleet.
      }
    }
    if (lane === "supervisor" && (record.level === "warn" || record.level === "error")) {
      this.emit({
        kind: "log",
        repo,
        level: record.level === "warn" ? "warning" : "error",
        lane,
        message: String(record.msg ?? ""),
        at: String(record.ts ?? ""),
      });
    }
    if (lane === "monitor" && record.event === "tick") {
      const key = this.boardKey(repo);
      const id = repo.toLowerCase();
      if (key === null || this.boardKeys.get(id) === key) return;
      this.boardKeys.set(id, key);
      this.emit({ kind: "board", repo });
    }
  }
}
