// What a token is, asked of the API itself with one `GET /user`: whose it is, a classic
// token's OAuth scopes, and the rate limit left. For `afk-mcp doctor`.
import { createClient, silentLogger } from "./octokit.js";
import type { RateLimit } from "./forge.js";

export interface TokenInfo {
  login: string;
  /**
   * A classic token's scopes (GitHub's `x-oauth-scopes` header); null for a fine-grained or
   * GitHub App token, whose permissions are per repository and not listed on `/user`.
   */
  scopes: string[] | null;
  rateLimit: RateLimit | null;
}

/** Throws a ForgeError (401, unreachable, ...) whose hint names the fix. */
export async function inspectToken(options: { baseUrl: string; token: string; timeoutMs?: number }): Promise<TokenInfo> {
  // One answer is all it needs: no retries, no throttling, no cache.
  const client = createClient({
    token: options.token,
    baseUrl: options.baseUrl,
    retries: 0,
    throttle: false,
    cache: false,
    timeoutMs: options.timeoutMs ?? 15_000,
    logger: silentLogger,
  });
  try {
    const response = await client.octokit.request("GET /user");
    const header = response.headers["x-oauth-scopes"];
    const scopes =
      typeof header === "string"
        ? header
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean)
        : null;
    return { login: String(response.data.login), scopes, rateLimit: client.rateLimit() };
  } catch (error) {
    throw client.toError(error, "read the token's own user (GET /user)");
  }
}
