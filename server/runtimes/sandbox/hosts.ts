// Which hosts a sandboxed worker may reach: its engine's API hosts, the host of any custom base
// URL in its environment (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`, …: a proxy, a gateway, a
// scripted model on 127.0.0.1), and what the user adds under `sandbox.allow_hosts` (a package
// registry, say). Everything else is refused by the proxy, and the sandbox has no other way out:
// its network namespace holds nothing but loopback.

/** The API hosts of the built-in engines (server/workers/engines.ts); an opaque command gets them all. */
export const ENGINE_API_HOSTS: Readonly<Record<string, readonly string[]>> = {
  claude: ["api.anthropic.com"],
  codex: ["api.openai.com", "chatgpt.com"],
  gemini: ["generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com"],
};

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

export interface HostRule {
  /** Lower-case name or address; `*.example.com` matches every subdomain (not the bare domain). */
  host: string;
  /** null: 443 and 80. */
  port: number | null;
}

/** Parses `host`, `host:port`, `*.domain`, `[::1]:port`; null when it is none of those. */
export function parseHostRule(text: string): HostRule | null {
  const trimmed = text.trim().toLowerCase();
  const match = /^(\[[0-9a-f:]+\]|\*\.[a-z0-9.-]+|[a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(trimmed);
  if (!match) return null;
  const port = match[2] === undefined ? null : Number(match[2]);
  if (port !== null && (port < 1 || port > 65_535)) return null;
  return { host: match[1]!.replace(/^\[|\]$/g, ""), port };
}

/** Whether `host:port` passes one of the rules. */
export function hostAllowed(rules: readonly HostRule[], host: string, port: number): boolean {
  const name = host
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  return rules.some((rule) => {
    const portOk = rule.port === null ? port === 443 || port === 80 : rule.port === port;
    if (!portOk) return false;
    if (rule.host.startsWith("*.")) return name.endsWith(rule.host.slice(1));
    return rule.host === name || (LOOPBACK.has(rule.host) && LOOPBACK.has(name));
  });
}

/** `host:port` of every URL-valued `*_BASE_URL` variable the worker gets. */
export function baseUrlHosts(env: Readonly<Record<string, string>>): string[] {
  const hosts: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!/_BASE_URL$/.test(name) || !URL.canParse(value)) continue;
    const url = new URL(value);
    if (url.protocol !== "http:" && url.protocol !== "https:") continue;
    const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
    hosts.push(`${url.hostname.includes(":") ? `[${url.hostname.replace(/^\[|\]$/g, "")}]` : url.hostname}:${port}`);
  }
  return hosts;
}

/** The allowlist of one worker: engine hosts, base URL hosts, the user's. */
export function allowlistFor(engine: string | null, env: Readonly<Record<string, string>>, extra: readonly string[]): string[] {
  const engineHosts =
    engine !== null && ENGINE_API_HOSTS[engine]
      ? ENGINE_API_HOSTS[engine]!
      : engine === null || engine === "command"
        ? Object.values(ENGINE_API_HOSTS).flat()
        : [];
  return [...new Set([...engineHosts, ...baseUrlHosts(env), ...extra])];
}

/** The loopback ports among the rules: forwarded into the sandbox, where 127.0.0.1 is its own. */
export function loopbackPorts(rules: readonly HostRule[]): number[] {
  return [...new Set(rules.filter((r) => LOOPBACK.has(r.host) && r.port !== null).map((r) => r.port!))];
}
