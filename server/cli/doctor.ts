// `afk-mcp doctor`: checks this machine and the credentials the fleet would use, one line per
// check, and under each that is not fine the command that fixes it. Exits 1 when one fails.
import type { Command } from "./command.js";
import { doctorExitCode, runDoctor, type DoctorCheck } from "../host/doctor.js";
import { printJson, printLine } from "./print.js";

const MARK: Record<DoctorCheck["status"], string> = { ok: "ok", warn: "WARN", fail: "FAIL", skip: "skip" };

export function renderDoctor(checks: readonly DoctorCheck[]): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  const lines: string[] = [];
  for (const c of checks) {
    lines.push(`${MARK[c.status].padEnd(4)}  ${c.name.padEnd(width)}  ${c.detail}`);
    if (c.fix) lines.push(`${" ".repeat(6 + width)}  fix: ${c.fix}`);
  }
  const failed = checks.filter((c) => c.status === "fail").length;
  const warned = checks.filter((c) => c.status === "warn").length;
  lines.push("", failed ? `${failed} check(s) failed: fix them, then run afk-mcp doctor again` : warned ? `ready, with ${warned} warning(s)` : "ready");
  return lines.join("\n");
}

export const doctorCommand: Command = {
  name: "doctor",
  summary: "check node, git, the token and its scopes, the API URL and the state dir",
  usage: `Usage: afk-mcp doctor [--json]

Checks what the fleet needs from this machine and these credentials, one line each: the
Node version, git, the API URL (GITHUB_API_URL, else https://api.github.com) and whether it
answers, the token (GITHUB_TOKEN, else GH_TOKEN, else "gh auth token"): whose it is and its
scopes, and the state directory (AFK_STATE_DIR, else $XDG_STATE_HOME/afk-mcp, else
~/.local/state/afk-mcp). Every check that is not fine says how to fix it. The token is sent
only to the API URL and never printed. Exits 1 when a check fails, 0 otherwise.

To check a repository too (push access, labels, the base branch): afk-mcp plan --repo OWNER/NAME

Options:
  --json   print the checks as JSON: {"ok": boolean, "checks": [{name, status, detail, fix}]}`,
  options: { json: { type: "boolean" } },
  async run(values) {
    const checks = await runDoctor();
    const code = doctorExitCode(checks);
    if (values.json) printJson({ ok: code === 0, checks });
    else printLine(renderDoctor(checks));
    return code;
  },
};
