// Telling the people who are away that the fleet needs them: an escalation, a quota, login or
// network pause, a circuit breaker trip. Two channels, both optional (config `notify`): an
// @mention of the configured logins in a new comment (GitHub pushes mentions; an edit never
// notifies), and a webhook that gets the same event as JSON with a Slack-compatible `text`.
// Deduplicated (one event per key per `dedupe_seconds`) and rate-limited (`max_per_hour`).
// The fleet never waits on either: deliveries run in the background, one at a time, and a
// webhook that times out or answers 5xx is retried with backoff, then given up.
import type { LedgerEntry } from "../lanes/index.js";
import { retry } from "../kit/retry.js";

export interface NotifySettings {
  mention: readonly string[];
  webhook_url: string | null;
  dedupe_seconds: number;
  max_per_hour: number;
}

export interface NotifyEvent {
  event: "escalation" | "pause" | "breaker_trip";
  repo: string;
  issue: number | null;
  text: string;
  at: string;
  mention: string[];
}

export interface NotifierOptions {
  repo: string;
  settings: () => NotifySettings;
  clock: () => Date;
  /** Posts a new comment on an issue (the mention of a pause or a trip). */
  comment?: (issue: number, body: string) => Promise<void>;
  /** A line for the supervisor lane: a delivery given up, events dropped by the rate limit. Never the URL. */
  log?: (level: "info" | "warn", event: string, msg: string) => void;
  fetch?: typeof globalThis.fetch;
  /** Per webhook attempt. Default 5 s. */
  timeoutMs?: number;
  /** The wait before the 2nd attempt; the 3rd and 4th wait four times longer each. Default 1 s (1 s, 4 s, 16 s). */
  retryMs?: number;
}

/** Deliveries waiting at most: a webhook that is down for hours must not grow memory. */
const MAX_QUEUE = 50;

export interface NotifierStats {
  told: number;
  deduplicated: number;
  rate_limited: number;
  webhook_ok: number;
  webhook_failed: number;
  webhook_retries: number;
  comments: number;
}

export class Notifier {
  private readonly seen = new Map<string, number>();
  private readonly sent: number[] = [];
  private queue: Array<() => Promise<void>> = [];
  private running: Promise<void> | null = null;
  private readonly counters: NotifierStats = { told: 0, deduplicated: 0, rate_limited: 0, webhook_ok: 0, webhook_failed: 0, webhook_retries: 0, comments: 0 };

  constructor(private readonly o: NotifierOptions) {}

  /** Whether anything is configured at all. */
  enabled(): boolean {
    const s = this.o.settings();
    return s.mention.length > 0 || s.webhook_url !== null;
  }

  /**
   * The mention line for the escalation comment the fleet posts itself, if this escalation is to
   * be told now (it then counts as told: `notify` of the same escalation sends only the webhook).
   */
  escalationMention(issue: number): string {
    const s = this.o.settings();
    if (s.mention.length === 0) return "";
    if (!this.admit(`mention:escalation:${issue}`)) return "";
    this.counters.comments += 1;
    return `\n\ncc ${at(s.mention)}: this issue needs a human.`;
  }

  /** A ledger event that needs a human: queued for the channels configured, never awaited. */
  notify(entry: LedgerEntry): void {
    if (entry.event !== "escalation" && entry.event !== "pause" && entry.event !== "breaker_trip") return;
    const s = this.o.settings();
    if (s.mention.length === 0 && s.webhook_url === null) return;
    const issue = entry.issue ?? null;
    const event: NotifyEvent = {
      event: entry.event,
      repo: this.o.repo,
      issue,
      text: `afk-mcp ${this.o.repo}: ${entry.msg}`,
      at: this.o.clock().toISOString(),
      mention: [...s.mention],
    };
    // A pause is one event per kind (every worker of a usage limit reports it); an escalation one per issue.
    const key = entry.event === "escalation" ? `escalation:${issue}` : entry.event === "pause" ? `pause:${String(entry.data?.kind ?? "")}` : "breaker_trip";
    if (s.webhook_url !== null && this.admit(`webhook:${key}`)) {
      const url = s.webhook_url;
      this.enqueue(() => this.post(url, event));
    }
    // The escalation's own comment carries its mention (escalationMention); the others get one.
    if (entry.event !== "escalation" && issue !== null && s.mention.length > 0 && this.o.comment && this.admit(`mention:${key}`)) {
      const body = `${entry.msg}\n\ncc ${at(s.mention)}: the fleet needs a human (afk-mcp).`;
      const comment = this.o.comment;
      this.counters.comments += 1;
      this.enqueue(async () => {
        await comment(issue, body).catch((error: unknown) =>
          this.o.log?.("warn", "notify_failed", `the mention comment on #${issue} was not posted: ${(error as Error).message}`),
        );
      });
    }
  }

  /** Every queued delivery done (tests, and a stop that wants its notifications out). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  stats(): NotifierStats {
    return { ...this.counters };
  }

  /** Dedupe, then the hourly rate limit; true when this key may be told now. */
  private admit(key: string): boolean {
    const s = this.o.settings();
    const now = this.o.clock().getTime();
    const last = this.seen.get(key);
    if (last !== undefined && now - last < s.dedupe_seconds * 1000) {
      this.counters.deduplicated += 1;
      return false;
    }
    while (this.sent.length > 0 && now - this.sent[0]! >= 3_600_000) this.sent.shift();
    if (this.sent.length >= s.max_per_hour) {
      this.counters.rate_limited += 1;
      if (this.counters.rate_limited === 1 || this.counters.rate_limited % 10 === 0)
        this.o.log?.("warn", "notify_rate_limited", `notifications: ${this.counters.rate_limited} dropped so far by notify.max_per_hour (${s.max_per_hour})`);
      return false;
    }
    this.seen.set(key, now);
    this.sent.push(now);
    this.counters.told += 1;
    return true;
  }

  private enqueue(job: () => Promise<void>): void {
    if (this.queue.length >= MAX_QUEUE) this.queue.shift();
    this.queue.push(job);
    this.running ??= this.drain().finally(() => (this.running = null));
  }

  private async drain(): Promise<void> {
    for (let job = this.queue.shift(); job; job = this.queue.shift()) await job().catch(() => undefined);
  }

  private async post(url: string, event: NotifyEvent): Promise<void> {
    const fetcher = this.o.fetch ?? globalThis.fetch;
    const attempt = async (): Promise<void> => {
      let res: Response;
      try {
        res = await fetcher(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(event),
          signal: AbortSignal.timeout(this.o.timeoutMs ?? 5000),
          redirect: "error",
        });
      } catch (error) {
        throw new WebhookFailed((error as Error).name === "TimeoutError" ? "timed out" : "unreachable", false);
      }
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) return;
      // A 4xx is the request's fault: sending it again changes nothing (but 429: wait and retry).
      throw new WebhookFailed(`answered ${res.status}`, res.status < 500 && res.status !== 429);
    };
    let why = "";
    try {
      await retry(attempt, {
        retries: 3,
        minMs: this.o.retryMs ?? 1000,
        factor: 4,
        again: (error) => error instanceof WebhookFailed && !error.final,
        onRetry: () => (this.counters.webhook_retries += 1),
      });
      this.counters.webhook_ok += 1;
      return;
    } catch (error) {
      why = error instanceof WebhookFailed ? error.why : (error as Error).message;
    }
    this.counters.webhook_failed += 1;
    this.o.log?.(
      "warn",
      "notify_failed",
      `the webhook (notify.webhook_url) ${why}; the ${event.event} notification${event.issue ? ` for #${event.issue}` : ""} was given up after retries`,
    );
  }
}

/** "@alice" and "alice" are one login. */
const at = (logins: readonly string[]): string => logins.map((l) => `@${l.replace(/^@/, "")}`).join(" ");

/** One webhook attempt that failed: why, and whether trying again could change it. */
class WebhookFailed extends Error {
  constructor(
    readonly why: string,
    readonly final: boolean,
  ) {
    super(why);
  }
}
