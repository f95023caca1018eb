// Where workers run: `runtime` and the sandbox's allowances. Kept apart from config.ts (the
// work policy). The sandbox itself: server/runtimes/sandbox/ (docs/architecture.md, "Workers in
// a sandbox").
import { z } from "zod";

const HOST_RULE = /^(\[[0-9A-Fa-f:]+\]|\*\.[A-Za-z0-9.-]+|[A-Za-z0-9.-]+)(:\d{1,5})?$/;
const absolute = z.string().refine((p) => p.startsWith("/") && !p.includes("\0"), "expected an absolute path");

/** The worker runtimes there are (server/runtimes/registry.ts maps each name to its implementation). */
export const RUNTIME_NAMES = ["sandbox", "local", "actions"] as const;
export type RuntimeName = (typeof RUNTIME_NAMES)[number];

export const RuntimeSchema = z
  .enum(RUNTIME_NAMES)
  .default("sandbox")
  .describe(
    'Where workers run. "sandbox": each in a bubblewrap sandbox (its worktree writable, the home and other worktrees hidden, network to an allowlist); the start is refused where none can run. "local": as the user, unconfined. "actions": each on a GitHub Actions runner, dispatched through the workflow `actions.workflow` (`afk-mcp actions init` proposes it).',
  );

export const SandboxSchema = z
  .strictObject({
    allow_hosts: z
      .array(z.string().refine((h) => HOST_RULE.test(h), 'expected "host", "host:port" or "*.domain"'))
      .default(() => [])
      .describe(
        "Hosts a sandboxed worker may reach besides its engine's API and a configured *_BASE_URL (e.g. registry.npmjs.org). A bare host means ports 443 and 80.",
      ),
    allow_read: z
      .array(absolute)
      .default(() => [])
      .describe("Absolute paths shown read-only inside the sandbox though under a hidden directory (the home)."),
    allow_write: z
      .array(absolute)
      .default(() => [])
      .describe("Absolute paths a sandboxed worker may write besides its worktree."),
  })
  .describe('What a sandboxed worker may reach (runtime "sandbox").');

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

export const ActionsSchema = z
  .strictObject({
    workflow: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+\.ya?ml$/, "expected a file name under .github/workflows/, e.g. afk-worker.yml")
      .default("afk-worker.yml")
      .describe(
        "The workflow each worker attempt is dispatched through, a file of .github/workflows/ on the base (`afk-mcp actions init` proposes it as a PR).",
      ),
    pickup_seconds: z
      .number()
      .int()
      .min(10)
      .max(86_400)
      .default(900)
      .describe("A dispatched run no runner has picked up after this long is cancelled, and the attempt ends with that reason."),
    beat_seconds: z
      .number()
      .int()
      .min(10)
      .max(3_600)
      .default(60)
      .describe(
        "How often the runner pushes its heartbeat (its new output, whether it is busy, its new commits) and how often the host reads them: one git round trip per beat for the whole fleet, no rate limit.",
      ),
    env: z
      .array(z.string().regex(ENV_NAME, "expected a variable name"))
      .default(() => [])
      .describe(
        "Variables of the host's worker environment handed to the run as a dispatch input (besides any *_BASE_URL). Inputs are visible in the run: never name a secret here; secrets are repository secrets the workflow names.",
      ),
  })
  .describe('Workers on GitHub Actions runners (runtime "actions").');
