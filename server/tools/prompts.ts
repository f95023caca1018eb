// The prompts a client offers its user: `launch` (start a fleet on a repository, with the
// worker command of the calling runtime) and `monitor` (a read-only watch over the board
// resource). Their `repo` argument completes from the running fleets and the working
// directory's remotes.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
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

/** The runtime a client most likely is, from its name in initialize (clientInfo.name). */
export function runtimeOf(clientName: string | undefined): string | null {
  const name = (clientName ?? "").toLowerCase();
  if (name.includes("claude")) return "claude";
  if (name.includes("codex")) return "codex";
  if (name.includes("gemini")) return "gemini";
  return null;
}

export function registerPrompts(server: McpServer, host: Host): void {
  const repoArg = () =>
    completable(z.string().optional().describe('The repository, "owner/name" (default: the working directory\'s origin).'), (value) =>
      completeRepo(host, value ?? ""),
    );

  server.registerPrompt(
    "launch",
    {
      title: "Start a fleet on a repository",
      description: "How to start an unattended fleet on this repository: check the plan, then project_start with the worker command for your runtime.",
      argsSchema: {
        repo: repoArg(),
        runtime: completable(
          z
            .string()
            .optional()
            .describe(`The agent CLI that runs each worker: ${Object.keys(WORKER_COMMANDS).join(", ")} (default: this client's).`),
          async (value) => Object.keys(WORKER_COMMANDS).filter((r) => r.startsWith(value ?? "")),
        ),
      },
    },
    async ({ repo, runtime }) => {
      const picked = runtime ?? runtimeOf(server.server.getClientVersion()?.name) ?? "claude";
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
