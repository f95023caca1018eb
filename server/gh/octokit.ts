// The one place that builds the GitHub client (Octokit with throttling and retry over the
// conditional-request fetch), and the one function that turns any failure into a ForgeError.
import { Octokit } from "@octokit/rest";
import { throttling, type ThrottlingOptions } from "@octokit/plugin-throttling";
import { retry } from "@octokit/plugin-retry";
import { ConditionalFetch, type RequestStats } from "./etag-cache.js";
import { DEFAULT_API_URL, redact } from "./auth.js";
import { ForgeError } from "./errors.js";
import type { RateLimit } from "./forge.js";

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Drops everything: for tests and callers that log elsewhere. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** Warnings and errors to stderr (stdout is the MCP stream); debug and info dropped. */
export const stderrLogger: Logger = {
  debug() {},
  info() {},
  warn: (message, fields) => console.warn(`afk-mcp: ${message}${fields ? ` ${JSON.stringify(fields)}` : ""}`),
  error: (message, fields) => console.error(`afk-mcp: ${message}${fields ? ` ${JSON.stringify(fields)}` : ""}`),
};

export interface ClientOptions {
  token: string;
  /** REST API root; default https://api.github.com (see `apiBaseUrl()` for GITHUB_API_URL). */
  baseUrl?: string;
  userAgent?: string;
  /**
   * For the local forge: no one-per-second spacing of writes, and retry delays in
   * milliseconds where GitHub needs seconds. Never for GitHub itself.
   */
  fast?: boolean;
  /** false: no throttling plugin at all (no write spacing, no rate-limit retries). */
  throttle?: boolean;
  /** Retries of a 5xx or a network failure (default 3: after 1, 4, 9 s). */
  retries?: number;
  /** Retries after a rate-limit answer (default 3). */
  rateLimitRetries?: number;
  /** A primary rate limit is waited out only when it resets within this many seconds (default 60). */
  maxRateLimitWaitSeconds?: number;
  /** Abort one HTTP request after this long (default 30 s). */
  timeoutMs?: number;
  /** Conditional requests (default on). */
  cache?: boolean;
  logger?: Logger;
  /** The underlying fetch (tests may inject one; default globalThis.fetch). */
  fetch?: typeof globalThis.fetch;
}

export interface GitHubClient {
  readonly octokit: Octokit;
  readonly baseUrl: string;
  stats(): RequestStats;
  rateLimit(): RateLimit | null;
  /** Maps a failure of the operation `what` (e.g. "merge pull request #12") to a ForgeError. */
  toError(error: unknown, what: string): ForgeError;
}

// Retry's defaults are [400, 401, 403, 404, 410, 422, 451]. A 405 or 409 from a merge is an
// answer (not mergeable, head moved), not a fault; 429 belongs to the throttling plugin.
export const DO_NOT_RETRY = [400, 401, 403, 404, 405, 409, 410, 422, 429, 451];

const ThrottledOctokit = Octokit.plugin(throttling, retry);

export function createClient(options: ClientOptions): GitHubClient {
  const baseUrl = (options.baseUrl ?? DEFAULT_API_URL).replace(/\/+$/, "");
  const logger = options.logger ?? stderrLogger;
  const fast = options.fast ?? false;
  const rateLimitRetries = options.rateLimitRetries ?? 3;
  const maxWait = options.maxRateLimitWaitSeconds ?? 60;
  const conditional = new ConditionalFetch({
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.cache !== undefined ? { cache: options.cache } : {}),
  });
  const secrets = [options.token];

  const throttle: ThrottlingOptions =
    options.throttle === false
      ? { enabled: false }
      : {
          onRateLimit: (retryAfter, request, _octokit, retryCount) => {
            const again = retryCount < rateLimitRetries && retryAfter <= maxWait;
            logger.warn("GitHub rate limit reached", {
              request: `${request.method} ${request.url}`,
              retryAfterSeconds: retryAfter,
              retryCount,
              willRetry: again,
            });
            return again;
          },
          onSecondaryRateLimit: (retryAfter, request, _octokit, retryCount) => {
            const again = retryCount < rateLimitRetries;
            logger.warn("GitHub secondary rate limit reached", {
              request: `${request.method} ${request.url}`,
              retryAfterSeconds: retryAfter,
              retryCount,
              willRetry: again,
            });
            return again;
          },
          retryAfterBaseValue: fast ? 1 : 1000,
          ...(fast ? { write: immediateGroup(), notifications: immediateGroup(), search: immediateGroup() } : {}),
        };

  const octokit = new ThrottledOctokit({
    auth: options.token,
    baseUrl,
    userAgent: options.userAgent ?? "afk-mcp",
    throttle,
    retry: { doNotRetry: DO_NOT_RETRY, retries: options.retries ?? 3, retryAfterBaseValue: fast ? 1 : 1000 },
    request: { fetch: conditional.fetch },
    log: {
      debug: (message: string) => logger.debug(redact(message, secrets)),
      info: (message: string) => logger.info(redact(message, secrets)),
      warn: (message: string) => logger.warn(redact(message, secrets)),
      // Octokit logs every 4xx as an error, including the answers the fleet expects (a 422
      // "already exists", a 405 at merge). Each real failure reaches its caller as a
      // ForgeError and is logged there, so Octokit's own line is only a debug detail.
      error: (message: string) => logger.debug(redact(message, secrets)),
    },
  });

  return {
    octokit,
    baseUrl,
    stats: () => conditional.stats(),
    rateLimit: () => conditional.rateLimit(),
    toError: (error, what) => toForgeError(error, { baseUrl, what, secrets }),
  };
}

// The throttling plugin spaces writes one per second (three for notifying endpoints) through
// Bottleneck groups it calls as `group.key(id).schedule(options, fn, ...args)`. Against the
// local forge that spacing only slows tests down; this group runs each job at once.
type Group = NonNullable<Extract<ThrottlingOptions, { write?: unknown }>["write"]>;
function immediateGroup(): Group {
  const limiter = {
    schedule(...args: unknown[]): Promise<unknown> {
      const at = typeof args[0] === "function" ? 0 : 1;
      const job = args[at] as (...jobArgs: unknown[]) => unknown;
      return Promise.resolve().then(() => job(...args.slice(at + 1)));
    },
  };
  return { key: () => limiter } as unknown as Group;
}

export interface ErrorContext {
  baseUrl: string;
  /** The operation, in words: "list open issues of afk/demo". */
  what: string;
  /** Strings that must never appear in the message (the token). */
  secrets?: Iterable<string>;
  env?: NodeJS.ProcessEnv;
}

interface HttpErrorLike {
  status: number;
  message: string;
  response?: { headers?: Record<string, string | undefined>; data?: unknown };
  request?: { method?: string; url?: string };
  cause?: unknown;
}

/** The single mapping from an Octokit (or network) failure to a typed ForgeError. */
export function toForgeError(error: unknown, context: ErrorContext): ForgeError {
  if (error instanceof ForgeError) return error;
  const secrets = [...(context.secrets ?? [])];
  const clean = (text: string) => redact(text, secrets);
  const what = context.what;

  if (isHttpError(error) && error.response) {
    const status = error.status;
    const headers = error.response.headers ?? {};
    const apiMessage = clean(messageOf(error.response.data) ?? error.message);
    const rateLimit = rateLimitWait(status, headers, apiMessage);
    if (rateLimit !== null) {
      return new ForgeError(
        "rate_limited",
        `${what}: rate limit exceeded. Retry after ${rateLimit}s`,
        status,
        "the fleet paces itself and tries again later; a GitHub App installation token has a higher limit",
        rateLimit,
      );
    }
    switch (status) {
      case 401:
        return new ForgeError(
          "auth",
          `${what}: GitHub rejected the token (401 ${apiMessage})`,
          status,
          "check GITHUB_TOKEN (or GH_TOKEN, or `gh auth login`): the token may be mistyped, expired or revoked",
        );
      case 403:
        return new ForgeError(
          "forbidden",
          `${what}: forbidden (403 ${apiMessage})`,
          status,
          "the token lacks a permission for this: a classic token needs the repo scope, a fine-grained one " +
            "contents, issues and pull requests (read and write); an organization with SSO must authorize the token",
        );
      case 404:
        return new ForgeError(
          "not_found",
          `${what}: not found (404 ${apiMessage})`,
          status,
          "check the repository name and that the token can see it (GitHub answers 404 for a private repository the token cannot read)",
        );
      case 405:
        return new ForgeError(
          "not_mergeable",
          `${what}: not mergeable (405 ${apiMessage})`,
          status,
          "the pull request cannot be merged now (failing or missing checks, reviews, conflicts, branch rules): re-read it and gate again",
        );
      case 409:
        return new ForgeError(
          "conflict",
          `${what}: conflict (409 ${apiMessage})`,
          status,
          "the head or the ref moved since it was read: re-read it and gate the new head",
        );
      case 422:
        return new ForgeError(
          "validation",
          `${what}: rejected as invalid (422 ${clean(validationDetail(error.response.data) ?? apiMessage)})`,
          status,
          "GitHub refused the input; the message says which field",
        );
    }
    if (status >= 500) {
      return new ForgeError(
        "server",
        `${what}: GitHub answered ${status} (${apiMessage})`,
        status,
        "a server-side failure that persisted through retries: try again later (https://www.githubstatus.com)",
      );
    }
    return new ForgeError("unexpected", `${what}: unexpected answer ${status} (${apiMessage})`, status, "report this with the operation named above");
  }

  const network = networkFailure(error);
  if (network !== null) {
    const env = context.env ?? process.env;
    const configured = env.GITHUB_API_URL
      ? `GITHUB_API_URL is ${JSON.stringify(env.GITHUB_API_URL)}`
      : `GITHUB_API_URL is unset, so ${DEFAULT_API_URL} is used`;
    return new ForgeError(
      "unreachable",
      `${what}: cannot reach the GitHub API at ${context.baseUrl} (${clean(network)})`,
      null,
      `check GITHUB_API_URL and the network: ${configured}`,
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ForgeError("unexpected", `${what}: ${clean(message)}`, null, "report this with the operation named above");
}

function isHttpError(error: unknown): error is HttpErrorLike {
  return error instanceof Error && typeof (error as Partial<HttpErrorLike>).status === "number";
}

// 403/429 are rate limits when GitHub says so: remaining 0 (primary), a retry-after header or
// a "rate limit" message (secondary). Returns seconds to wait, or null for another 403.
function rateLimitWait(status: number, headers: Record<string, string | undefined>, message: string): number | null {
  if (status !== 403 && status !== 429) return null;
  const retryAfter = Number(headers["retry-after"]);
  if (headers["retry-after"] !== undefined && Number.isFinite(retryAfter)) return Math.max(0, Math.ceil(retryAfter));
  if (headers["x-ratelimit-remaining"] === "0") {
    const reset = Number(headers["x-ratelimit-reset"]);
    if (Number.isFinite(reset) && reset > 0) return Math.max(0, Math.ceil(reset - Date.now() / 1000));
    return 60;
  }
  if (status === 429 || /rate limit/i.test(message)) return 60;
  return null;
}

function messageOf(data: unknown): string | null {
  if (typeof data === "string") return data.trim() === "" ? null : data.trim().slice(0, 500);
  if (data && typeof data === "object" && typeof (data as { message?: unknown }).message === "string") {
    return (data as { message: string }).message;
  }
  return null;
}

// GitHub's 422 carries `errors: [{resource, field, code, message?}]` (or plain strings).
function validationDetail(data: unknown): string | null {
  const message = messageOf(data);
  const errors = data && typeof data === "object" ? (data as { errors?: unknown }).errors : undefined;
  if (!Array.isArray(errors) || errors.length === 0) return message;
  const parts = errors.map((item) => {
    if (typeof item === "string") return item;
    if (item && typeof item === "object") {
      const e = item as { resource?: string; field?: string; code?: string; message?: string };
      if (e.message) return e.message;
      return [e.resource, e.field].filter(Boolean).join(".") + (e.code ? ` ${e.code}` : "");
    }
    return JSON.stringify(item);
  });
  return `${message ?? "Validation Failed"}: ${parts.join("; ")}`;
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
]);

// A failure with no HTTP answer: refused, DNS, reset, TLS, timeout. Returns a short reason.
function networkFailure(error: unknown): string | null {
  const chain: unknown[] = [];
  let cursor: unknown = error;
  for (let depth = 0; cursor && depth < 6; depth += 1) {
    chain.push(cursor);
    if (cursor instanceof AggregateError) chain.push(...cursor.errors);
    cursor = (cursor as { cause?: unknown }).cause;
  }
  for (const item of chain) {
    const code = (item as { code?: unknown })?.code;
    if (typeof code === "string" && (NETWORK_CODES.has(code) || code.startsWith("ERR_TLS") || code.includes("CERT"))) {
      const message = item instanceof Error ? item.message : code;
      return message.includes(code) ? message : `${code}: ${message}`;
    }
    const name = (item as { name?: unknown })?.name;
    if (name === "TimeoutError" || name === "AbortError") return "timed out";
  }
  // Octokit wraps a fetch failure as a status-500 RequestError without a response.
  if (isHttpError(error) && !error.response) return error.message || "network failure";
  return null;
}
