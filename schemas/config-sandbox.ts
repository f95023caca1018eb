// Where workers run: `runtime` and the sandbox's allowances. Kept apart from config.ts (the
// work policy). The sandbox itself: server/runtimes/sandbox/ (docs/architecture.md, "Workers in
// a sandbox").
import { z } from "zod";

const HOST_RULE = /^(\[[0-9A-Fa-f:]+\]|\*\.[A-Za-z0-9.-]+|[A-Za-z0-9.-]+)(:\d{1,5})?$/;
const absolute = z.string().refine((p) => p.startsWith("/") && !p.includes("\0"), "expected an absolute path");

/** The worker runtimes there are (server/runtimes/registry.ts maps each name to its implementation). */
export const RUNTIME_NAMES = ["sandbox", "local"] as const;
export type RuntimeName = (typeof RUNTIME_NAMES)[number];

export const RuntimeSchema = z
  .enum(RUNTIME_NAMES)
  .default("sandbox")
  .describe(
    'Where workers run. "sandbox": each in a bubblewrap sandbox (its worktree writable, the home and other worktrees hidden, network to an allowlist); the start is refused where none can run. "local": as the user, unconfined.',
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
