// GitHub's primary rate limit: an hourly budget per token (5,000 for a user, 60 for anonymous
// callers), reported in x-ratelimit-* headers on every answer. A 304 costs nothing.

export interface Budget {
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  reset: number;
  used: number;
}

const WINDOW_SECONDS = 3600;
export const USER_LIMIT = 5000;
export const ANONYMOUS_LIMIT = 60;

export class RateLimiter {
  private readonly windows = new Map<string, { start: number; used: number; limit: number }>();

  private window(key: string, limit: number): { start: number; used: number; limit: number } {
    const now = Math.floor(Date.now() / 1000);
    let w = this.windows.get(key);
    if (!w || now >= w.start + WINDOW_SECONDS) {
      w = { start: now, used: 0, limit };
      this.windows.set(key, w);
    }
    return w;
  }

  /** The budget for `key` (a login, or "" for anonymous callers) without spending any. */
  peek(key: string): Budget {
    const w = this.window(key, key === "" ? ANONYMOUS_LIMIT : USER_LIMIT);
    return { limit: w.limit, remaining: Math.max(0, w.limit - w.used), reset: w.start + WINDOW_SECONDS, used: w.used };
  }

  spend(key: string): Budget {
    const w = this.window(key, key === "" ? ANONYMOUS_LIMIT : USER_LIMIT);
    w.used++;
    return this.peek(key);
  }

  reset(): void {
    this.windows.clear();
  }
}

export function rateLimitHeaders(b: Budget): Record<string, string> {
  return {
    "x-ratelimit-limit": String(b.limit),
    "x-ratelimit-remaining": String(b.remaining),
    "x-ratelimit-reset": String(b.reset),
    "x-ratelimit-used": String(b.used),
    "x-ratelimit-resource": "core",
  };
}
