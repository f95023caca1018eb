// The host and the fleet word their advice for MCP sessions ("then project_reset",
// "project_stop {stop_workers: true} ends them now"); a terminal user cannot call a tool. The
// CLI passes every message it prints from them through here, which names the afk-mcp command
// that does the same thing instead (test/cli-words.test.ts parses each against its command).

export interface TerminalContext {
  /** The repository the command works on: named in the commands it suggests. */
  repo?: string | null;
}

type Rule = [RegExp, (repoFlag: string, groups: string[]) => string];

// Most specific first: the generic tool names would otherwise eat their argument lists.
const RULES: Rule[] = [
  [/\bproject_stop \{(?:repo(?:: [^,}]+)?, )?stop_workers: true\}/g, (r) => `afk-mcp stop${r} --stop-workers`],
  [/\bproject_stop \{repo(?:: [^}]+)?\}/g, (r) => `afk-mcp stop${r}`],
  [/\bproject_reset \{repo(?:: [^}]+)?\}/g, (r) => `afk-mcp reset${r}`],
  [/\btakeover \{instance, confirm\?\}/g, (r) => `afk-mcp takeover${r} --instance ID [--confirm]`],
  [/\btakeover \{list(?:: true)?\}/g, (r) => `afk-mcp takeover${r} --list`],
  [/\blogs \{lane: "(\w+)", issue: (\d+)\}/g, (r, [lane, issue]) => `afk-mcp logs${r} --lane ${lane} --issue ${issue}`],
  // The daemon's lane is the machine's: no repository.
  [/\blogs \{lane: "daemon"\}/g, () => "afk-mcp logs --lane daemon"],
  [/\bstatus \{repo(?:: [^}]+)?\}/g, (r) => `afk-mcp plan${r}`],
  // afk-mcp plan prints every row: the status tool's paging has no terminal counterpart.
  [/\bstatus \{detail: true(?:, cursor: "[^"]*")?\}/g, (r) => `afk-mcp plan${r}`],
  [/\bwith confirm: true\b/g, () => "with --confirm"],
  [/\bset worker_command in project_start\b/g, () => "give --worker to afk-mcp run"],
  [/\bworker_command\b/g, () => "--worker"],
  [/\bproject_stop\b/g, (r) => `afk-mcp stop${r}`],
  [/\bproject_reset\b/g, (r) => `afk-mcp reset${r}`],
  [/\bproject_resize\b/g, (r) => `afk-mcp resize${r}`],
  [/\bproject_start\b/g, () => "afk-mcp run"],
];

/** `text` with every tool it names replaced by the afk-mcp command a terminal user runs. */
export function forTerminal(text: string, context: TerminalContext = {}): string {
  const repoFlag = context.repo ? ` --repo ${context.repo}` : "";
  let out = text;
  for (const [pattern, replace] of RULES) {
    // replace() hands the callback (match, ...groups, offset, input): keep the groups.
    out = out.replace(pattern, (_match: string, ...rest: unknown[]) => replace(repoFlag, rest.slice(0, -2) as string[]));
  }
  return out;
}
