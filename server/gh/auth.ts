// Where the GitHub token and API URL come from, and the one helper that keeps tokens out of
// every message we produce. Order: GITHUB_TOKEN, GH_TOKEN, `gh auth token`, else refuse.
import { execa } from "execa";
import { UsageError } from "./errors.js";

export const DEFAULT_API_URL = "https://api.github.com";

export type TokenSource = "GITHUB_TOKEN" | "GH_TOKEN" | "gh auth token";

export interface ResolvedToken {
  token: string;
  source: TokenSource;
}

export interface ResolveTokenOptions {
  env?: NodeJS.ProcessEnv;
  /** How long `gh auth token` may take before we give up on it. */
  ghTimeoutMs?: number;
}

/** Finds a token; throws a UsageError naming every way to provide one. */
export async function resolveToken(options: ResolveTokenOptions = {}): Promise<ResolvedToken> {
  const env = options.env ?? process.env;
  for (const name of ["GITHUB_TOKEN", "GH_TOKEN"] as const) {
    const value = env[name]?.trim();
    if (value) return { token: checkToken(value, name), source: name };
  }
  const fromGh = await tokenFromGh(env, options.ghTimeoutMs ?? 5_000);
  if (fromGh) return { token: checkToken(fromGh, "gh auth token"), source: "gh auth token" };
  throw new UsageError(
    "no GitHub token: set GITHUB_TOKEN (or GH_TOKEN) to a token with repo access, " + "or sign in with `gh auth login` so that `gh auth token` prints one",
  );
}

/** The REST API root: GITHUB_API_URL (GitHub Enterprise, the local forge) or api.github.com. */
export function apiBaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  const raw = env.GITHUB_API_URL?.trim();
  if (!raw) return DEFAULT_API_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`GITHUB_API_URL ${JSON.stringify(raw)} is not a URL: expected e.g. ${DEFAULT_API_URL}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new UsageError(`GITHUB_API_URL ${JSON.stringify(raw)} must be an http(s) URL, e.g. ${DEFAULT_API_URL}`);
  }
  if (url.username || url.password) {
    throw new UsageError("GITHUB_API_URL must not carry credentials: put the token in GITHUB_TOKEN");
  }
  return raw.replace(/\/+$/, "");
}

/** Replaces every occurrence of each secret (and its Basic-auth forms) with "***". */
export function redact(text: string, secrets: Iterable<string | null | undefined>): string {
  let out = text;
  const all = new Set<string>();
  for (const secret of secrets) {
    if (!secret || secret.length < 4) continue;
    all.add(secret);
    // git's extraHeader carries base64("x-access-token:" + token); a log of it must not leak.
    all.add(Buffer.from(`x-access-token:${secret}`).toString("base64"));
    all.add(encodeURIComponent(secret));
  }
  // Longest first, so a secret that contains another is replaced whole.
  for (const secret of [...all].sort((a, b) => b.length - a.length)) {
    out = out.split(secret).join("***");
  }
  return out;
}

/** True when `text` holds a C0 control character or DEL (which could end a header line). */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

function checkToken(token: string, source: string): string {
  // A token goes into an HTTP header: a newline in it would let it smuggle another header.
  if (/\s/.test(token) || hasControlCharacter(token)) {
    throw new UsageError(`the token from ${source} contains whitespace or control characters: check how it was set`);
  }
  return token;
}

// `gh` may be absent, signed out, or slow (keyring prompts): any failure means "no token here".
async function tokenFromGh(env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string | null> {
  const args = ["auth", "token"];
  const host = ghHostname(env);
  if (host) args.push("--hostname", host);
  try {
    const result = await execa("gh", args, {
      env: { ...env, GH_PROMPT_DISABLED: "1", NO_COLOR: "1" },
      extendEnv: false,
      stdin: "ignore",
      timeout: timeoutMs,
      reject: false,
    });
    if (result.exitCode !== 0 || result.failed) return null;
    const token = String(result.stdout).trim();
    return token === "" ? null : token;
  } catch {
    return null;
  }
}

// For GitHub Enterprise, ask gh for the token of the API's host, not github.com's.
function ghHostname(env: NodeJS.ProcessEnv): string | null {
  let base: string;
  try {
    base = apiBaseUrl(env);
  } catch {
    return null;
  }
  const host = new URL(base).hostname;
  if (host === "api.github.com" || host === "github.com") return null;
  return host;
}
