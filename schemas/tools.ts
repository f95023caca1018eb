// Input and output shapes of the MCP tools. Inputs use the names DESIGN.md promises every
// client and script; outputs are what `structuredContent` carries (snake_case, like the config).
import { z } from "zod";

export const repoInput = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .describe('The repository, "owner/name". Default: the GitHub origin of the server\'s working directory.');

export const statusInput = {
  repo: repoInput,
  scope: z
    .enum(["project", "worker", "issue"])
    .default("project")
    .describe('"project": the registration and the dry-run plan; "worker": live workers; "issue": one issue (needs `issue`).'),
  issue: z.number().int().positive().optional().describe("The issue number, for scope \"issue\"."),
};

export const takeoverInput = {
  repo: repoInput,
  list: z.boolean().optional().describe("List every fleet instance GitHub remembers (host, claims, heartbeat age) and take nothing."),
  instance: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,39}$/, "an instance id is 1-40 characters of [a-z0-9-], not starting with '-'")
    .optional()
    .describe("The instance whose claims to take (from the list)."),
  confirm: z
    .boolean()
    .optional()
    .describe("Take the claims even though the instance's heartbeat is still fresh (only when you know it is dead)."),
};

export const preconditionOutput = z.object({
  name: z.string(),
  ok: z.boolean(),
  /** "error" blocks a start; "warn" is reported and the fleet goes on. */
  severity: z.enum(["ok", "warn", "error"]),
  message: z.string(),
});

const dispatchOutput = z.object({
  number: z.number().int(),
  title: z.string(),
  selector: z.number().int(),
  high: z.boolean(),
  attempt: z.number().int(),
});

const excludedOutput = z.object({ number: z.number().int(), reason: z.string(), text: z.string() });

const mineOutput = z.object({
  issue: z.number().int(),
  sha: z.string(),
  status: z.enum(["awaiting_merge", "awaiting_ci", "failure", "no_pr"]),
  pr: z.number().int().nullable(),
  attempt: z.number().int(),
  failing: z.array(z.string()),
  pending: z.array(z.string()),
  issue_open: z.boolean(),
});

const peerOutput = z.object({
  issue: z.number().int(),
  instance: z.string().nullable(),
  host: z.string().nullable(),
  sha: z.string(),
  alive_at: z.string().nullable(),
  stale_reason: z.string().nullable(),
});

export const planOutput = z.object({
  repo: z.string(),
  instance: z.string(),
  login: z.string(),
  base: z.string(),
  now: z.string(),
  preconditions: z.array(preconditionOutput),
  ready: z.boolean().describe("Every precondition passed: a start would be accepted."),
  dispatch: z.array(dispatchOutput).describe("The frontier, in dispatch order."),
  excluded: z.array(excludedOutput),
  mine: z.array(mineOutput),
  peers_live: z.array(peerOutput),
  peers_stale: z.array(peerOutput),
  cycles: z.array(z.array(z.number().int())),
  stragglers: z.object({ unlabelled: z.number().int(), needs_triage: z.number().int(), needs_info: z.number().int() }),
  rate_limit: z.object({ limit: z.number(), remaining: z.number(), reset: z.number(), used: z.number() }).nullable(),
  requests: z.object({ total: z.number().int(), counted: z.number().int(), not_modified: z.number().int() }),
  fingerprint: z.string(),
});

export type PlanOutput = z.infer<typeof planOutput>;

export const registrationOutput = z
  .object({
    repo: z.string(),
    instance: z.string(),
    target: z.number().int(),
    worker_command: z.string(),
    base: z.string(),
    auto_merge: z.boolean(),
    merges: z.enum(["held", "authorized"]),
    started_at: z.string(),
  })
  .nullable();

export const statusOutput = {
  scope: z.enum(["project", "worker", "issue"]),
  registration: registrationOutput.describe("The project this host runs for the repository, or null."),
  plan: planOutput.nullable().describe("The dry-run plan (scope project)."),
  issue: z
    .object({
      number: z.number().int(),
      where: z.string().describe("dispatch, excluded, mine, peer_live, stale, or not_open"),
      detail: z.string(),
    })
    .nullable()
    .describe("Where the issue stands (scope issue)."),
  workers: z.array(z.object({ issue: z.number().int(), state: z.string(), pid: z.number().int().nullable() })).describe("Live workers (scope worker)."),
};

export const instanceRowOutput = z.object({
  instance: z.string(),
  host: z.string().nullable(),
  claims: z.array(z.number().int()),
  claim_count: z.number().int(),
  heartbeat_at: z.string().nullable(),
  heartbeat_age_seconds: z.number().int().nullable(),
  fresh: z.boolean(),
  is_me: z.boolean(),
});

export const takeoverOutput = {
  action: z.enum(["list", "confirm", "none", "taken"]),
  instances: z.array(instanceRowOutput),
  from: z.string().nullable(),
  taken: z.array(z.object({ issue: z.number().int(), sha: z.string() })),
  lost: z.array(z.number().int()),
  message: z.string(),
};
