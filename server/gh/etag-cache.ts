// Conditional requests and request accounting, as a `fetch` that Octokit calls. Every GET
// carries the ETag we last saw for its URL; a 304 is answered from the cache as the 200 it
// stands for. A 304 made with an Authorization header costs no primary rate limit.
//
// Why at the fetch level and not as an Octokit hook: each page of a paginated list is its
// own URL with its own `link` header, so pagination needs no special case; Octokit (and the
// retry/throttling plugins) never see a 304 to special-case; and each hit is a fresh parse,
// so `paginate` (which mutates response data in place) cannot corrupt a cached body.
import { createHash } from "node:crypto";
import type { RateLimit } from "./forge.js";
import { LRUCache } from "lru-cache";

type Fetch = typeof globalThis.fetch;

export interface RequestStats {
  /** HTTP requests sent, retries included. */
  total: number;
  /** Of those, answered 304 and served from the cache. */
  notModified: number;
  /** Of those, counted against the primary rate limit (every answer but a 304). */
  counted: number;
  /** Requests that got no HTTP answer (refused, DNS, timeout). */
  failed: number;
  /** Entries now held in the cache. */
  cached: number;
}

export interface ConditionalFetchOptions {
  /** The fetch to wrap (default: globalThis.fetch). */
  fetch?: Fetch;
  /** Most URLs to remember; the least recently used are dropped first. */
  maxEntries?: number;
  /** Abort a request that takes longer than this. */
  timeoutMs?: number;
  /** Turn the cache off (accounting stays on). */
  cache?: boolean;
}

interface Entry {
  etag: string;
  status: number;
  statusText: string;
  headers: [string, string][];
  body: string;
}

// Headers that describe the wire encoding of the original body, not the body we replay.
const NOT_REPLAYED = new Set(["content-encoding", "content-length", "transfer-encoding"]);

export class ConditionalFetch {
  private readonly inner: Fetch;
  private readonly entries: LRUCache<string, Entry>;
  private readonly timeoutMs: number;
  private readonly useCache: boolean;
  private counters = { total: 0, notModified: 0, counted: 0, failed: 0 };
  private latest: RateLimit | null = null;

  constructor(options: ConditionalFetchOptions = {}) {
    this.inner = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.entries = new LRUCache({ max: options.maxEntries ?? 2_000 });
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.useCache = options.cache ?? true;
  }

  stats(): RequestStats {
    return { ...this.counters, cached: this.entries.size };
  }

  /** The x-ratelimit-* headers of the latest answer that carried them. */
  rateLimit(): RateLimit | null {
    return this.latest ? { ...this.latest } : null;
  }

  clear(): void {
    this.entries.clear();
  }

  /** The `fetch` to hand to Octokit (`request.fetch`). */
  readonly fetch: Fetch = async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    const key = method === "GET" && this.useCache && !headers.has("if-none-match") ? cacheKey(url, headers) : null;
    const entry = key ? this.entries.peek(key) : undefined;
    if (entry) headers.set("if-none-match", entry.etag);

    this.counters.total += 1;
    let response: Response;
    try {
      response = await this.inner(input, { ...init, headers, signal: withTimeout(init?.signal ?? null, this.timeoutMs) });
    } catch (error) {
      this.counters.failed += 1;
      throw error;
    }
    this.noteRateLimit(response.headers);

    if (response.status === 304) {
      this.counters.notModified += 1;
      if (!entry || !key) return response; // the caller's own conditional request
      await response.body?.cancel();
      this.entries.get(key); // most recently used now
      return replay(entry, response, url);
    }
    this.counters.counted += 1;

    const etag = response.headers.get("etag");
    // JSON answers only: a job's log (plain text, megabytes) is read once and streamed, never kept.
    if (key && response.status === 200 && etag && /\bjson\b/i.test(response.headers.get("content-type") ?? "")) {
      const body = await response.text();
      const stored: Entry = {
        etag,
        status: response.status,
        statusText: response.statusText,
        headers: [...response.headers].filter(([name]) => !NOT_REPLAYED.has(name)),
        body,
      };
      this.entries.set(key, stored);
      return withUrl(new Response(body, { status: stored.status, statusText: stored.statusText, headers: stored.headers }), url);
    }
    // Gone: forget it. (A 403 rate limit or a 5xx says nothing about the resource: keep it.)
    if (key && (response.status === 404 || response.status === 410)) this.entries.delete(key);
    return response;
  };

  private noteRateLimit(headers: Headers): void {
    const limit = headers.get("x-ratelimit-limit");
    const remaining = headers.get("x-ratelimit-remaining");
    if (limit === null || remaining === null) return;
    this.latest = {
      limit: Number(limit),
      remaining: Number(remaining),
      reset: Number(headers.get("x-ratelimit-reset") ?? 0),
      used: Number(headers.get("x-ratelimit-used") ?? Number(limit) - Number(remaining)),
    };
  }
}

// Per method+URL (query included) and per credential: two tokens may see different bodies.
// The credential is hashed so that no token sits in memory as a map key.
function cacheKey(url: string, headers: Headers): string {
  const auth = headers.get("authorization") ?? "";
  const who = auth === "" ? "anonymous" : createHash("sha256").update(auth).digest("hex").slice(0, 16);
  const accept = headers.get("accept") ?? "";
  return `GET ${url} ${who} ${accept}`;
}

// The cached 200, with the 304's fresher headers (rate limit, date, etag) laid over it.
function replay(entry: Entry, notModified: Response, url: string): Response {
  const headers = new Headers(entry.headers);
  for (const [name, value] of notModified.headers) {
    if (!NOT_REPLAYED.has(name) && name !== "content-type") headers.set(name, value);
  }
  return withUrl(new Response(entry.body, { status: entry.status, statusText: entry.statusText, headers }), url);
}

// `new Response()` has an empty url; Octokit's paginate reads it for some endpoints.
function withUrl(response: Response, url: string): Response {
  Object.defineProperty(response, "url", { value: url });
  return response;
}

function withTimeout(signal: AbortSignal | null, ms: number): AbortSignal {
  const timeout = AbortSignal.timeout(ms);
  if (!signal) return timeout;
  const any = (AbortSignal as unknown as { any?: (signals: AbortSignal[]) => AbortSignal }).any;
  return any ? any([signal, timeout]) : signal;
}
