// The host's events for listening sessions (see HostEvent in api.ts): supervisor warnings and
// errors as they are written, a board event after a tick that changed the board (so at most
// one per tick), and repository starts and stops.
import type { HostEvent } from "./api.js";

export class HostEvents {
  private readonly listeners = new Set<(event: HostEvent) => void>();
  /** Per repository, the board as last pushed: an event fires only when it changed. */
  private readonly boardKeys = new Map<string, string>();

  constructor(private readonly boardKey: (repo: string) => string | null) {}

  subscribe(listener: (event: HostEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
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
    if (this.listeners.size === 0 || (lane !== "supervisor" && lane !== "monitor")) return;
    let record: { level?: string; msg?: string; ts?: string; event?: string };
    try {
      record = JSON.parse(line) as typeof record;
    } catch {
      return;
    }
    if (lane === "supervisor" && (record.level === "warn" || record.level === "error")) {
      this.emit({ kind: "log", repo, level: record.level === "warn" ? "warning" : "error", lane, message: String(record.msg ?? ""), at: String(record.ts ?? "") });
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
