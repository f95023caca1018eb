// Input and output shapes of the MCP tools. Inputs use the names docs/clients.md documents for every
// client and script; outputs are what `structuredContent` carries (snake_case, like the config).
import { z } from "zod";
import { SelectorSchema, fleetConfigJsonSchema } from "./config.js";
import { LANE_NAMES } from "./lanes.js";

/** A string that means something: blank or whitespace-only text is refused, not stored. */
const text = (max: number) => z.string().max(max).regex(/\S/, "must not be blank");

export const repoInput = text(200).optional().describe('The repository, "owner/name". Default: the GitHub origin of the server\'s working directory.');

export const statusInput = {
  repo: repoInput,
  scope: z
    .enum(["project", "worker", "issue"])
    .default("project")
    .describe('"project": the registration and the dry-run plan; "worker": live workers; "issue": one issue (needs `issue`).'),
  issue: z.number().int().positive().optional().describe('The issue number, for scope "issue".'),
  detail: z
    .boolean()
    .optional()
    .describe("Scope project: list every dispatchable and excluded issue, a page at a time (default: a summary with counts per exclusion reason)."),
  cursor: text(100).optional().describe("Scope project with detail: the next_cursor of the previous page."),
};

export const takeoverInput = {
  repo: repoInput,
  list: z.boolean().optional().describe("List every fleet instance GitHub remembers (host, claims, heartbeat age) and take nothing."),
  instance: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,39}$/, "an instance id is 1-40 characters of [a-z0-9-], not starting with '-'")
    .optional()
    .describe("The instance whose claims to take (from the list)."),
  confirm: z.boolean().optional().describe("Take the claims even though the instance's heartbeat is still fresh (only when you know it is dead)."),
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
  blocks: z.array(z.number().int()).optional().describe("It blocks these named issues."),
  route: z
    .object({ engine: z.string(), model: z.string().nullable(), from: z.string() })
    .optional()
    .describe("Engine and model of its next attempt, and what chose them (an engine start)."),
});

const excludedOutput = z.object({ number: z.number().int(), reason: z.string(), text: z.string(), blocks: z.array(z.number().int()).optional() });

const namedOutput = z.object({
  number: z.number().int(),
  selector: z.number().int(),
  reason: z.string(),
  text: z.string(),
  blocks: z.array(z.number().int()).optional(),
});

const strings = z.array(z.string());

/** What a start runs: each engine's binary, version, provider and budget, and the runtime with what it lets through. */
export const runOutput = z
  .object({
    command: z.string().nullable(),
    engines: z.array(
      z.object({ name: z.string(), path: z.string(), version: z.string(), provider: strings, model: z.string().nullable(), budget: z.string() }),
    ),
    runtime: z.object({
      name: z.string(),
      unconfined: z.boolean(),
      writable: strings,
      hidden: strings,
      read_only: strings,
      hosts: strings.describe("The only hosts a worker may reach."),
      text: z.string(),
    }),
  })
  .describe("What will run (a start and its dry run): the command, each engine, the runtime and what it lets through.");

const mineOutput = z.object({
  issue: z.number().int(),
  sha: z.string(),
  status: z.enum(["awaiting_merge", "awaiting_review", "changes_requested", "awaiting_ci", "failure", "no_pr"]),
  /** For awaiting_review: what a human must do before the PR can land. */
  review: z.string().nullable(),
  pr: z.number().int().nullable(),
  attempt: z.number().int(),
  failing: z.array(z.string()),
  pending: z.array(z.string()),
  issue_open: z.boolean(),
});

// An id: listed once per tool schema (as a definition) though live and stale peers both use it.
const peerOutput = z
  .object({
    issue: z.number().int(),
    instance: z.string().nullable(),
    host: z.string().nullable(),
    sha: z.string(),
    alive_at: z.string().nullable(),
    stale_reason: z.string().nullable(),
  })
  .meta({ id: "peer_claim" });

export const planOutput = z.object({
  repo: z.string(),
  instance: z.string(),
  login: z.string(),
  base: z.string(),
  now: z.string(),
  preconditions: z.array(preconditionOutput),
  ready: z.boolean().describe("Every precondition passed: a start would be accepted."),
  dispatch: z.array(dispatchOutput).describe("The frontier, in dispatch order."),
  held_for_overlap: z
    .array(z.object({ issue: z.number().int(), paths: z.array(z.string()), instead: z.number().int() }))
    .describe(
      "Ready issues started later because the fleet's in-flight work (open PRs, unproposed branches) changes paths they name; `instead` started first.",
    ),
  conflict_holds: z
    .array(
      z.object({
        issue: z.number().int(),
        pr: z.number().int(),
        files: z.array(z.string()),
        waiting_for: z.array(z.number().int()),
        held_seconds: z.number().int(),
        max_seconds: z.number().int(),
      }),
    )
    .describe(
      "PRs that no longer merge with the base, their retry waiting (at most `max_seconds`) for the in-flight issues in `waiting_for`, whose work changes the same files.",
    ),
  conflicting_pairs: z
    .array(
      z.object({ a: z.number().int(), b: z.number().int(), pr_a: z.number().int().nullable(), pr_b: z.number().int().nullable(), files: z.array(z.string()) }),
    )
    .describe("Pairs of in-flight work (PR heads, unproposed branches) that do not merge with each other: the second to land is redone."),
  excluded: z.array(excludedOutput),
  named: z.array(namedOutput).describe("Issues the selectors name (in order), then blockers they pull in, that will not run now, and why."),
  run: runOutput.optional(),
  mine: z.array(mineOutput),
  peers_live: z.array(peerOutput),
  peers_stale: z.array(peerOutput),
  cycles: z.array(z.array(z.number().int())),
  stragglers: z.object({ unlabelled: z.number().int(), needs_triage: z.number().int(), needs_info: z.number().int() }),
  rate_limit: z.object({ limit: z.number(), remaining: z.number(), reset: z.number(), used: z.number() }).nullable(),
  requests: z
    .object({ total: z.number().int(), counted: z.number().int(), not_modified: z.number().int() })
    .describe("GitHub requests this call made (0 when the plan is the running fleet's last tick)."),
  fingerprint: z.string(),
  totals: z
    .object({ dispatch: z.number().int(), excluded: z.number().int(), needs_human: z.number().int(), named: z.number().int() })
    .describe("Full counts (dispatch, excluded, needs_human and named may list a page or summary)."),
  excluded_by_reason: z.record(z.string(), z.number().int()).describe("How many open issues each exclusion reason keeps out."),
  needs_human: z
    .array(z.object({ number: z.number().int(), why: z.string() }))
    .describe("Issues only a human can move: escalated or reserved, in a dependency cycle, or this instance's failed PRs."),
  page: z
    .object({ detail: z.boolean(), offset: z.number().int(), next_cursor: z.string().nullable() })
    .describe("The rows of dispatch then excluded listed; next_cursor to status {detail: true, cursor} reads on."),
});

export type PlanOutput = z.infer<typeof planOutput>;

export const registrationOutput = z
  .object({
    repo: z.string(),
    instance: z.string(),
    target: z.number().int(),
    worker_command: z.string(),
    engine: z.string().nullable().describe('"name model (version)", as verified at start; null: worker_command.'),
    base: z.string(),
    auto_merge: z.boolean(),
    merges: z.enum(["held", "authorized"]),
    started_at: z.string(),
  })
  .nullable();

export const registrationRowOutput = z.object({
  repo: z.string(),
  instance: z.string(),
  state: z.enum(["running", "draining"]),
  target: z.number().int(),
  selectors: z.array(z.record(z.string(), z.unknown())),
  sessions: z.array(z.string()).describe("The connected sessions renewing it."),
  sessions_gone: z.number().int().describe("Sessions gone since renewing it (their renewal holds until renew_by)."),
  ttl_seconds: z.number().int().nullable().describe("How long it lives unrenewed; null: until stopped."),
  renew_by: z.string().nullable().describe("When it lapses and drains unless a session renews it; null: never."),
  last_poll: z.string().nullable(),
  workers: z.number().int().describe("Live workers."),
  in_flight: z.number().int().nullable().describe("Issues this instance holds claims on, at its last tick; null before the first."),
  landed_today: z.number().int().describe("Issues it landed today (UTC day), by this machine's ledger."),
  needs_human: z.number().int().nullable().describe("Issues only a human can move, at its last tick; null before the first."),
});

export const daemonOutput = z.object({
  pid: z.number().int(),
  version: z.string(),
  session_version: z.string(),
  skew: z.string().nullable().describe("Set when this session's afk-mcp version differs from the daemon's, with the fix."),
});

const spendSum = z.object({
  usd: z.number(),
  attempts: z.number().int(),
  unknown_attempts: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
});

export const statusOutput = {
  scope: z.enum(["project", "worker", "issue"]),
  registration: registrationOutput.describe("The project this host runs for the repository, or null."),
  plan: planOutput.omit({ run: true }).nullable().describe("The dry-run plan (scope project)."),
  issue: z
    .object({
      number: z.number().int(),
      where: z.string().describe("dispatch, excluded, mine, peer_live, stale, or not_open"),
      detail: z.string(),
    })
    .nullable()
    .describe("Where the issue stands (scope issue)."),
  workers: z
    .array(
      z.object({
        issue: z.number().int(),
        state: z.string(),
        pid: z.number().int().nullable(),
        attempt: z.number().int(),
        started_at: z.string(),
        engine: z.string(),
        model: z.string().nullable(),
        stage: z
          .string()
          .nullable()
          .describe('What it is doing: the tool its engine\'s stream says it runs ("Bash: npm test"), else its last line; null before any output.'),
        last_line: z.string().nullable().describe("The last line it printed (an engine event's words), one line, redacted."),
        quiet_seconds: z.number().int().nullable().describe("Seconds since its last output; null once it exited, or an orphan."),
      }),
    )
    .describe("This host's workers (scope worker)."),
  births: z
    .object({ paused: z.boolean(), reason: z.string().nullable(), until: z.string().nullable() })
    .nullable()
    .describe("Whether new workers may start (circuit breaker, usage limit, stopping)."),
  spend: z
    .object({
      day: z.string(),
      today: spendSum,
      issues: z.array(z.object({ issue: z.number().int(), usd: z.number(), attempts: z.number().int(), unknown_attempts: z.number().int() })),
      budget: z.string(),
      text: z.string(),
    })
    .nullable()
    .describe("Spend as the engines reported it, today (UTC day) and per issue; usd sums known costs, unknown_attempts counts the rest."),
  eta: z
    .object({
      median_ms: z.number().int().nullable(),
      samples: z.number().int(),
      needed: z.number().int(),
      running: z.array(z.object({ issue: z.number().int(), due_at: z.string().nullable(), overdue: z.boolean() })),
      queue: z.object({ remaining: z.number().int(), done_at: z.string().nullable() }),
      text: z.string(),
    })
    .nullable()
    .describe("ETA from the median claim → merged of the last 10 issues landed here (none before 3): each running issue's, the queue's."),
  last_tick: z.string().nullable().describe("The last tick's one-line summary."),
  registrations: z.array(registrationRowOutput).describe("Every registration on this machine (scope project)."),
  daemon: daemonOutput.nullable().describe("The daemon serving this session, or null when none runs (status then reads GitHub and the lanes itself)."),
  next_tick: z.string().nullable().describe("When the running fleet's next tick is due."),
  source: z
    .object({ from: z.enum(["fleet_tick", "gathered"]), at: z.string(), age_seconds: z.number() })
    .nullable()
    .describe('Where the plan comes from: the running fleet\'s last tick ("fleet_tick", with its age) or a fresh read of GitHub ("gathered").'),
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
  this_daemon: z.boolean().describe("The instance is this machine's afk-mcp daemon."),
});

export const takeoverOutput = {
  action: z.enum(["list", "confirm", "none", "taken"]),
  instances: z.array(instanceRowOutput),
  from: z.string().nullable(),
  taken: z.array(z.object({ issue: z.number().int(), sha: z.string() })),
  lost: z.array(z.number().int()),
  message: z.string(),
};

export const projectStartInput = {
  repo: repoInput,
  worker_command: text(4000)
    .optional()
    .describe(
      'The shell command that starts one worker agent in its worktree, run by your shell (e.g. claude -p "$(cat "$AFK_BRIEF")" --permission-mode bypassPermissions). The brief is also on stdin and in {brief}. Required unless dry_run.',
    ),
  engine: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{0,39}$/)
    .optional()
    .describe("Instead of worker_command: an engine profile (claude, codex, gemini, or config `engines`), checked at start."),
  model: text(200).optional().describe("With engine: the CLI's model."),
  target: z.number().int().min(1).max(64).optional().describe("How many workers at once (default: the config's concurrency)."),
  selectors: z.array(SelectorSchema).max(20).optional().describe("Ordered selectors: the first picks first (default: the ready label)."),
  config: z
    .record(z.string(), z.unknown())
    .meta(configKeysSchema())
    .optional()
    .describe("Config overrides, merged over the repository's .github/afk.json and validated like it (schemas/config.schema.json)."),
  base: text(255).optional().describe("The branch to land on (default: the config's base, else the default branch)."),
  dry_run: z.boolean().optional().describe("Validate and return the first plan, acting on nothing."),
  auto_merge: z.boolean().optional().describe("Authorize the fleet to land green PRs on the base unattended. Without it, merges are held (status says so)."),
  once: z.boolean().optional().describe("One tick, then drain."),
  max_issues: z.number().int().min(1).optional().describe("Births stop after N issues ended."),
};

export const projectResizeInput = {
  repo: repoInput,
  target: z.number().int().min(1).max(64).optional().describe("New width, applied at the next birth."),
  worker_command: text(4000).optional().describe("New worker command, used for the next birth."),
  selectors: z.array(SelectorSchema).max(20).optional().describe("New ordered selectors."),
};

export const projectStopInput = {
  repo: text(200)
    .optional()
    .describe(
      "The repository, \"owner/name\". Default: the GitHub origin of the server's working directory; where it has none, the one project this machine's daemon runs (the answer names the repository it stopped).",
    ),
  stop_workers: z.boolean().optional().describe("Also kill running workers (their claims are released; pushed work stays on its branch)."),
};

export const projectResetInput = { repo: repoInput };

export const logsInput = {
  repo: repoInput,
  lane: z.enum(LANE_NAMES).describe('Which log lane; "daemon" is this machine\'s daemon (no repo needed).'),
  issue: z.number().int().positive().optional().describe("Only records about this issue."),
  since: text(40).optional().describe('Only records since this ISO time or this long ago ("15m", "2h", "1d").'),
  tail_lines: z
    .number()
    .int()
    .min(1)
    .max(5000)
    .optional()
    .describe("At most this many of the newest records (default 200); the answer also stops at its byte budget."),
  cursor: text(100).optional().describe("The next_cursor of the previous answer: continue with the records before it."),
};

/** One issue's timeline (the resource afk://{owner}/{repo}/issue/{n}/timeline), from the ledger. */
export const timelineInput = { repo: repoInput, issue: z.number().int().positive().describe("The issue.") };

/** The newest issues' timelines (the dashboard's chart), from one read of the ledger. */
export const timelinesInput = {
  repo: repoInput,
  limit: z.number().int().min(1).max(100).optional().describe("At most this many issues, the most recently active first (default 30)."),
};

/** The final report of a repository's fleet, from its ledger. */
export const reportInput = { repo: repoInput };

export const projectOutput = {
  registration: registrationOutput,
  plan: planOutput.nullable(),
  message: z.string(),
};

/**
 * What project_resize, project_stop and project_reset answer: project_start's shape, whose plan
 * they never fill (status shows it), so tools/list does not spell the plan out three more times.
 */
export const projectChangeOutput = {
  ...projectOutput,
  plan: z.null().describe("Always null: status {repo} shows the plan."),
};

export const logsOutput = {
  lane: z.string(),
  records: z.array(z.record(z.string(), z.unknown())).describe("Oldest first; a record cut to fit carries truncated: true."),
  truncated: z.boolean().describe("Older matching records exist: pass next_cursor to read them."),
  held_back: z
    .number()
    .int()
    .describe(
      "Of the records tail_lines asked for, how many did not fit in this answer's byte budget (about 48 KB): the newest come first, these are behind next_cursor.",
    ),
  next_cursor: z.string().nullable(),
};

/**
 * The config's JSON Schema as the `config` argument advertises it: every key, type, enum and
 * bound (so a client can complete and check it), without the prose, defaults and implicit
 * integer bounds that would make tools/list several times larger. The host validates the merged config in full.
 */
function configKeysSchema(): Record<string, unknown> {
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (node === null || typeof node !== "object") return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === "description" || key === "default" || key === "title" || key === "$schema") continue;
      // The bounds zod writes on an integer without its own: "integer" already says them.
      if ((key === "maximum" && value === Number.MAX_SAFE_INTEGER) || (key === "minimum" && value === -Number.MAX_SAFE_INTEGER)) continue;
      out[key] =
        key === "properties"
          ? Object.fromEntries(
              Object.entries(value as object)
                .filter(([k]) => k !== "$schema")
                .map(([k, v]) => [k, strip(v)]),
            )
          : strip(value);
    }
    return out;
  };
  return strip(fleetConfigJsonSchema()) as Record<string, unknown>;
}
