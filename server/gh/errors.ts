// Typed errors for everything that talks to GitHub or git. Each carries what went wrong and
// a recovery hint a human (or an MCP client) can act on; messages never contain a token.

export type ForgeErrorKind =
  | "auth" // 401: bad or missing token
  | "forbidden" // 403 without rate limit
  | "rate_limited" // primary or secondary rate limit
  | "not_found"
  | "not_mergeable" // 405 at merge
  | "conflict" // 409: head moved, or a ref/sha mismatch
  | "validation" // 422
  | "unreachable" // network error, DNS, refused
  | "server" // 5xx after retries
  | "unexpected";

export class ForgeError extends Error {
  override readonly name = "ForgeError";
  constructor(
    readonly kind: ForgeErrorKind,
    message: string,
    readonly status: number | null,
    readonly hint: string,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }
}

export class GitError extends Error {
  override readonly name = "GitError";
  constructor(
    message: string,
    readonly command: string,
    readonly exitCode: number | null,
    readonly stderr: string,
    /** What to do about it (check the token, the URL, the network); "" when there is nothing to add. */
    readonly hint: string = "",
  ) {
    super(message);
  }
}

/** Bad user input: a config file, a tool argument, a CLI flag. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
