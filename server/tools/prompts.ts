// The prompts a client offers its user: `launch` (start a fleet on a repository, with the
// worker command of the calling runtime) and `monitor` (a read-only watch over the board
// resource). Their `repo` argument completes from the running fleets and the working
// directory's remotes.
import { CLIENT_INFO_META_KEY, completable, type McpServer, type ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { Host } from "../host/api.js";
import { boardUri, completeRepo } from "./resources.js";

/** The worker command per runtime, as docs/runtimes.md's table gives it. */
export const WORKER_COMMANDS: Record<string, string> = {
  claude: 'claude -p "$(cat "$AFK_BRIEF")" --output-format stream-json --verbose --permission-mode bypassPermissions --max-turns 200',
  codex: 'codex exec --json --skip-git-repo-check --sandbox workspace-write - < "$AFK_BRIEF"',
  gemini: 'GEMINI_CLI_TRUST_WORKSPACE=true gemini -p "$(cat "$AFK_BRIEF")" --output-format stream-json --approval-mode yolo',
  aider: 'aider --yes --no-stream --message-file "$AFK_BRIEF"',
};

/**
 * The calling client's name: from initialize (2025-11-25), else from the request's own `_meta`
 * (2026-07-28 has no handshake: every request names its client under CLIENT_INFO_META_KEY).
 */
export function clientNameOf(server: McpServer, ctx: Pick<ServerContext, "mcpReq">): string | undefined {
  const fromInit = server.server.getClientVersion()?.name;
  if (fromInit) return fromInit;
  for (const meta of [ctx.mcpReq.envelope, ctx.mcpReq._meta] as (Record<string, unknown> | undefined)[]) {
    const info = meta?.[CLIENT_INFO_META_KEY] as { name?: unknown } | undefined;
    if (typeof info?.name === "string") return info.name;
  }
  return undefined;
}

/** The runtime a client most likely is, from its name (clientInfo.name). */
export function runtimeOf(clientName: string | undefined): string | null {
  const name = (clientName ?? "").toLowerCase();
  if (name.includes("claude")) return "claude";
  if (name.includes("codex")) return "codex";
  if (name.includes("gemini")) return "gemini";
  return null;
}

export function registerPrompts(server: McpServer, host: Host): void {
  // The completer sits on the inner schema, which is where the SDK looks past `.optional()`;
  // the description on both, since the listing reads the outer one.
  const optional = (description: string, complete: (value: string) => Promise<string[]>) =>
    completable(z.string().describe(description), (value) => complete(value ?? ""))
      .optional()
      .describe(description);
  const repoArg = () => optional('The repository, "owner/name" (default: the working directory\'s origin).', (value) => completeRepo(host, value));

  server.registerPrompt(
    "launch",
    {
      title: "Start a fleet on a repository",
      description: "How to start an unattended fleet on this repository: check the plan, then project_start with the worker command for your runtime.",
      argsSchema: {
        repo: repoArg(),
        runtime: optional(`The agent CLI that runs each worker: ${Object.keys(WORKER_COMMANDS).join(", ")} (default: this client's).`, async (value) =>
          Object.keys(WORKER_COMMANDS).filter((r) => r.startsWith(value)),
        ),
      },
    },
    async ({ repo, runtime }, ctx) => {
      const picked = runtime ?? runtimeOf(clientNameOf(server, ctx)) ?? "claude";
      const command = WORKER_COMMANDS[picked] ?? WORKER_COMMANDS.claude!;
      const target = repo ? `{repo: "${repo}"}` : "{}";
      const text = [
        `Start an afk-mcp fleet${repo ? ` on ${repo}` : " on this repository"}.`,
        `1. Call status ${target}. Fix every failed precondition it names (each says how) and read the plan: which issues it would dispatch and why the others are excluded.`,
        `2. Call project_start {${repo ? `repo: "${repo}", ` : ""}dry_run: true, worker_command: ${JSON.stringify(command)}} and check the plan again.`,
        "3. Ask me before landing anything: only with auto_merge: true does the fleet merge green PRs into the base branch.",
        `4. Call project_start {${repo ? `repo: "${repo}", ` : ""}worker_command: ${JSON.stringify(command)}, target: 2} (add auto_merge: true only if I said so).`,
        `5. Then watch the board resource ${repo ? boardUri(repo) : "afk://<owner>/<name>/board"} or call status; stop with project_stop.`,
      ].join("\n");
      return { messages: [{ role: "user", content: { type: "text", text } }] };
    },
  );

  server.registerPrompt(
    "monitor",
    {
      title: "Watch a running fleet (read-only)",
      description:
        "A read-only monitor loop over the board resource: report changes, pauses and issues needing a human; never start, stop or take over anything.",
      argsSchema: { repo: repoArg() },
    },
    async ({ repo }) => {
      const uri = repo ? boardUri(repo) : "afk://<owner>/<name>/board";
      const text = [
        `Monitor the afk-mcp fleet${repo ? ` on ${repo}` : ""}, read-only: do not call project_start, project_stop, project_reset, project_resize or takeover.`,
        `- Read the resource ${uri} and subscribe to it; on each update, read it again.`,
        "- Report only what changed: merges, escalations, births paused (quote the reason), the circuit breaker, merges held, issues needing a human.",
        "- When something needs a human, say what and which tool or command fixes it; for details use status {detail: true} or logs {lane, issue}.",
      ].join("\n");
      return { messages: [{ role: "user", content: { type: "text", text } }] };
    },
  );
}
