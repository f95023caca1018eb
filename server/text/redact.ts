// Redaction for lane records: the configured secrets (the fleet's tokens, in every form they
// travel in) and the token shapes we know, replaced before a byte reaches the disk (docs/architecture.md, invariant 7).

export const REDACTED = "[redacted]";

/** Shorter strings cannot be told apart from ordinary text; no real token is this short. */
export const MIN_SECRET_LENGTH = 6;

type Replacer = (match: string, ...groups: string[]) => string;

/**
 * Known credential shapes. Each keeps the part that helps a reader (the header name, the
 * auth scheme, the URL's user and host) and replaces only the secret part. Every pattern is
 * idempotent on its own output, so redacting twice is harmless.
 */
const PATTERNS: ReadonlyArray<readonly [RegExp, string | Replacer]> = [
  // GitHub tokens: classic (ghp_), OAuth (gho_), user-to-server (ghu_), server (ghs_), refresh (ghr_), fine-grained.
  [/\b(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,})/g, REDACTED],
  // Anthropic (sk-ant-…) and OpenAI-style (sk-…, sk-proj-…) API keys.
  [/\bsk-[A-Za-z0-9_-]{16,}/g, REDACTED],
  // Header values: "Authorization: token x", `-H "authorization: Bearer x"`, git's
  // http.extraheader=AUTHORIZATION: basic x, and the JSON form "Authorization":"Bearer x".
  [
    /\b((?:proxy-)?authorization)(["']?\s*[:=]\s*["']?)(?:(basic|bearer|token|digest|negotiate)\s+)?[^\s"'`,;]+/gi,
    (_m, name: string, sep: string, scheme: string | undefined) => `${name}${sep}${scheme ? `${scheme} ` : ""}${REDACTED}`,
  ],
  // A bearer token in free text; the length floor keeps "bearer of bad news" intact.
  [/\b(bearer)\s+[A-Za-z0-9\-._~+/]{16,}=*/gi, (_m, scheme: string) => `${scheme} ${REDACTED}`],
  // git's token-in-URL user name and its basic-auth form: x-access-token:<token>@host.
  [/\b(x-access-token):[^\s@/"'`]+/gi, (_m, user: string) => `${user}:${REDACTED}`],
  // Basic credentials in any URL: scheme://user:password@host keeps the user and the host.
  [/\b([a-z][a-z0-9+.-]*:\/\/)([^\s:@/?#"'`]+):([^\s@/?#"'`]+)@/gi, (_m, scheme: string, user: string) => `${scheme}${user}:${REDACTED}@`],
];

/** One scan that every shape above needs to match; most log text fails it and skips the rest. */
const ANY_SHAPE = /gh[pousr]_|github_pat_|sk-|authorization|bearer|x-access-token|:\/\//i;

/** Keys whose value is a credential whatever it looks like (header maps, env snapshots). */
const SENSITIVE_KEY =
  /^(?:(?:proxy-)?authorization|cookie|set-cookie|password|passwd|secret|client_secret|token|access_token|refresh_token|id_token|api_key|apikey|x-api-key|private_key|github_token|gh_token)$/i;

export function isSensitiveKey(key: string): boolean {
  return SENSITIVE_KEY.test(key);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Every form a secret may travel in: as is, URL-encoded, JSON-escaped, and base64 (git's extraheader). */
function formsOf(secret: string): string[] {
  const forms = [
    secret,
    encodeURIComponent(secret),
    JSON.stringify(secret).slice(1, -1),
    Buffer.from(secret).toString("base64"),
    Buffer.from(`x-access-token:${secret}`).toString("base64"),
  ];
  return forms.filter((form) => form.length >= MIN_SECRET_LENGTH);
}

/** Redaction against one reading of the secret list. */
export interface RedactionPass {
  /** `text` with every secret and credential shape replaced by [redacted]. */
  text(text: string): string;
  /** True when `text` still holds a configured secret (a last check over a finished line). */
  leaks(text: string): boolean;
  /** The longest configured secret form, so a caller can cut long text with a safe margin. */
  readonly longest: number;
}

export interface Redactor {
  /** Reads the secret list (rebuilding the matcher only if it changed) for one record's worth of work. */
  pass(): RedactionPass;
}

function compile(secrets: readonly string[]): RedactionPass {
  const forms = [...new Set(secrets.flatMap(formsOf))].sort((a, b) => b.length - a.length);
  // One alternation, longest first, so a secret that contains another is replaced whole.
  const matcher = forms.length > 0 ? new RegExp(forms.map(escapeRegExp).join("|"), "g") : null;
  return {
    longest: forms[0]?.length ?? 0,
    text(text: string): string {
      let out = matcher ? text.replace(matcher, REDACTED) : text;
      if (!ANY_SHAPE.test(out)) return out;
      for (const [pattern, replacement] of PATTERNS) {
        out = typeof replacement === "string" ? out.replace(pattern, replacement) : out.replace(pattern, replacement);
      }
      return out;
    },
    leaks(text: string): boolean {
      if (!matcher) return false;
      matcher.lastIndex = 0;
      return matcher.test(text);
    },
  };
}

/**
 * A redactor over a secret source that may change (a token refreshed mid-run). `secrets()` is
 * read once per pass (once per record), and the matcher is rebuilt only when the list
 * actually changed, so the steady-state cost is one comparison per secret.
 */
export function createRedactor(secrets: () => Iterable<string | null | undefined>): Redactor {
  let last: string[] = [];
  let current = compile([]);
  return {
    pass(): RedactionPass {
      const now: string[] = [];
      for (const secret of secrets()) {
        if (typeof secret === "string" && secret.length >= MIN_SECRET_LENGTH) now.push(secret);
      }
      if (now.length !== last.length || now.some((s, i) => s !== last[i])) {
        last = now;
        current = compile(now);
      }
      return current;
    },
  };
}

/** One-shot redaction of a string, for callers outside a lane writer. */
export function redactText(text: string, secrets: Iterable<string | null | undefined> = []): string {
  const list = [...secrets];
  return createRedactor(() => list)
    .pass()
    .text(text);
}
