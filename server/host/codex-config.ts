// Codex starts an MCP server and gives it `startup_timeout_sec` (10 s unless set) to answer;
// a first `npx -y afk-mcp` downloads the package and its dependencies, which can take longer
// (docs/clients.md, "Cold start"). This reads the Codex config (`$CODEX_HOME/config.toml`, else
// `~/.codex/config.toml`), finds the `[mcp_servers.<name>]` entries that start afk-mcp, and says
// when one gives it less time than it needs. A small reader of the TOML Codex writes (tables,
// `key = value` lines), not a TOML parser: an entry it cannot read is reported, never guessed.
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

/** Codex's default `startup_timeout_sec`. */
export const CODEX_DEFAULT_STARTUP_SECONDS = 10;
/**
 * What a first `npx -y afk-mcp` needs: the slowest cold start measured (34 s, docs/clients.md, "Cold
 * start", `node scripts/cold-start.mjs` on a loaded 2-core machine), rounded up.
 */
export const NEEDED_STARTUP_SECONDS = 40;

export interface CodexEntry {
  /** The `mcp_servers.<name>` key. */
  name: string;
  /** `startup_timeout_sec` (or `startup_timeout_ms` / 1000); null: not set, Codex's default applies. */
  timeoutSeconds: number | null;
}

export function codexConfigPath(env: NodeJS.ProcessEnv): string {
  return join(env.CODEX_HOME && env.CODEX_HOME !== "" ? env.CODEX_HOME : join(env.HOME ?? homedir(), ".codex"), "config.toml");
}

/** `"a.b"`, `a."b c"` → the name after `mcp_servers.`, or null for another table. */
function serverName(header: string): string | null {
  const m = /^mcp_servers\.(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))$/.exec(header.trim());
  return m ? (m[1] ?? m[2] ?? m[3] ?? null) : null;
}

/** The mcp_servers entries of a Codex config whose command or args name afk-mcp. */
export function afkEntries(toml: string): CodexEntry[] {
  const entries = new Map<string, { afk: boolean; sec: number | null; ms: number | null }>();
  let current: string | null = null;
  for (const raw of toml.split(/\r?\n/)) {
    const line = raw.replace(/^\s+/, "");
    if (line.startsWith("#") || line === "") continue;
    const table = /^\[([^\]]+)\]\s*(?:#.*)?$/.exec(line);
    if (table) {
      current = serverName(table[1]!);
      if (current !== null && !entries.has(current)) entries.set(current, { afk: false, sec: null, ms: null });
      continue;
    }
    if (current === null) continue;
    const kv = /^([A-Za-z0-9_-]+)\s*=\s*(.*)$/.exec(line);
    if (!kv) continue;
    const entry = entries.get(current)!;
    const [key, value] = [kv[1]!, kv[2]!];
    if ((key === "command" || key === "args") && /afk-mcp/.test(value)) entry.afk = true;
    const number = /^([0-9]+(?:\.[0-9]+)?)\s*(?:#.*)?$/.exec(value);
    if (key === "startup_timeout_sec" && number) entry.sec = Number(number[1]);
    if (key === "startup_timeout_ms" && number) entry.ms = Number(number[1]);
  }
  return [...entries].filter(([, e]) => e.afk).map(([name, e]) => ({ name, timeoutSeconds: e.sec ?? (e.ms !== null ? e.ms / 1000 : null) }));
}

export interface CodexFinding {
  status: "ok" | "warn" | "skip";
  detail: string;
  fix: string | null;
}

/** The doctor's word on a Codex config's text (null: there is no config). */
export function codexFinding(path: string, toml: string | null, needed = NEEDED_STARTUP_SECONDS): CodexFinding {
  if (toml === null) return { status: "skip", detail: `no Codex config at ${path}`, fix: null };
  const entries = afkEntries(toml);
  if (entries.length === 0) return { status: "skip", detail: `${path} starts no afk-mcp server`, fix: null };
  const short = entries.filter((e) => (e.timeoutSeconds ?? CODEX_DEFAULT_STARTUP_SECONDS) < needed);
  if (short.length === 0)
    return {
      status: "ok",
      detail: `${path}: ${entries.map((e) => `mcp_servers.${e.name} startup_timeout_sec ${e.timeoutSeconds}`).join(", ")} (a first npx start needs up to ${needed} s)`,
      fix: null,
    };
  const said = short.map(
    (e) =>
      `mcp_servers.${e.name} gives afk-mcp ${e.timeoutSeconds ?? CODEX_DEFAULT_STARTUP_SECONDS} s to start${e.timeoutSeconds === null ? " (Codex's default)" : ""}`,
  );
  return {
    status: "warn",
    detail: `${path}: ${said.join("; ")}, and a first \`npx -y afk-mcp\` (downloading the package) can need up to ${needed} s`,
    fix: `set \`startup_timeout_sec = ${needed}\` under [mcp_servers.${short[0]!.name}] in ${path}, or install afk-mcp first (\`npm install -g afk-mcp\`) so npx starts it from disk`,
  };
}

export async function readCodexFinding(env: NodeJS.ProcessEnv): Promise<CodexFinding> {
  const path = codexConfigPath(env);
  const text = await readFile(path, "utf8").catch(() => null);
  return codexFinding(path, text);
}
