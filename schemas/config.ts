// The fleet config: one zod schema that is the single source of truth for the file a user
// commits (`.github/afk.json`), the `config` overrides of `project_start`, the canonical JSON
// the CLI prints, and the generated JSON Schema (schemas/config.schema.json).
//
// Every key has a default, so `{}` is a complete config; objects are strict, so a typo is an
// error rather than a silently ignored setting. Cross-field rules (kill after stall, heartbeat
// well inside the lease, a local gate needs a command) are refinements whose issues carry the
// key path, so server/host/config-load.ts can name the key and the fix.
import { z } from "zod";
import { NotifySchema } from "./config-notify.js";
import { ActionsSchema, RuntimeSchema, SandboxSchema } from "./config-sandbox.js";
import { unknownKeyError } from "./nearest.js";
import { MAX_SELECTOR_ISSUES } from "./limits.js";
import { BudgetSchema, ENGINE_NAME, EnginesSchema, PricesSchema, RoutingSchema } from "./engines.js";

/** Usage-limit messages of the agent CLIs we know (docs/architecture.md, runtime lesson 7). Matched case-insensitively. */
export const DEFAULT_QUOTA_PATTERNS: readonly string[] = [
  // Claude Code
  "Claude (?:AI )?usage limit reached",
  "limit reached\\s*[∙·•|-]\\s*resets",
  // measured with the real CLI (2.1.197) against a plan-limit 429: a subscriber login prints
  // "You've hit your session limit · resets 4:19pm (UTC)", an API key "API Error: Request rejected (429) · …"
  "You(?:'|’)ve hit your (?:weekly |usage |session )?limit",
  "API Error: Request rejected \\(429\\)",
  '"type"\\s*:\\s*"rate_limit_event"(?!.*"status"\\s*:\\s*"allowed)',
  // Codex
  "Quota exceeded\\. Check your plan and billing details",
  "is at capacity\\. Please try a different model",
  // Gemini CLI
  "You have exhausted your (?:capacity|daily quota)",
  "Usage limit reached for ",
  "RESOURCE_EXHAUSTED",
  // cursor-agent
  "Your usage limits will reset",
  // aider and other litellm-based runtimes
  "RateLimitError",
  "exceeded your current quota",
];

/** Expired or missing agent logins: pause the fleet and tell the operator. */
export const DEFAULT_AUTH_PATTERNS: readonly string[] = [
  // Claude Code ("Not logged in · Please run /login", "Invalid API key · Please run /login",
  // "Failed to authenticate. API Error: 403 ...")
  "OAuth token has expired",
  "Not logged in\\b.*(?:/login|log in)",
  "Invalid API key",
  "Failed to authenticate\\. API Error: 40[13]",
  '"subtype"\\s*:\\s*"api_retry".*"error_status"\\s*:\\s*40[13]\\b',
  // Codex ("Reconnecting... 1/5 (unexpected status 401 Unauthorized: ...)", then turn.failed)
  "unexpected status 40[13] (?:Unauthorized|Forbidden)",
  // Gemini CLI (no auth method; a 403 from Code Assist; a rejected key)
  "Please set an Auth method in your .*settings\\.json",
  '"status"\\s*:\\s*"(?:PERMISSION_DENIED|UNAUTHENTICATED)"',
  "API key not valid\\. Please pass a valid API key",
  // cursor-agent
  "Authentication required\\. Please run .*(?:cursor-agent|agent) login",
  "\\[unauthenticated\\]",
  // aider and other litellm-based runtimes
  "litellm\\.AuthenticationError",
  "The API provider is not able to authenticate you",
];

/** A runtime refusing to run as configured (Claude Code's bypass mode as root): pause until an operator acts. */
export const DEFAULT_REFUSAL_PATTERNS: readonly string[] = ["--dangerously-skip-permissions cannot be used with root/sudo privileges"];

/**
 * An agent that cannot reach its API and retries in a loop (Codex: "Reconnecting... waiting for
 * network"). Only a repeated match counts (see QuotaScanner): one blip is not an outage.
 */
export const DEFAULT_NETWORK_PATTERNS: readonly string[] = [
  // Codex
  "Reconnecting\\.\\.\\. (?:waiting for network|\\d+/\\d+ \\(stream disconnected before completion: (?:failed to lookup address|error sending request|Connection))",
  // Claude Code, --output-format stream-json: a retry with no HTTP status is a connection failure
  '"subtype"\\s*:\\s*"api_retry".*"error_status"\\s*:\\s*null',
  "API Error: (?:Connection error|Request timed out)",
  // Gemini CLI
  "Retrying with backoff\\.\\.\\. Error: .*fetch failed",
  // aider and other litellm-based runtimes
  "litellm\\.APIConnectionError",
];

const intIn = (min: number, max: number) => z.number().int().min(min).max(max);

/** Text that means something: a command, a path, a title or a pattern of only whitespace is refused, not kept. */
const nonBlank = () => z.string().min(1).regex(/\S/, "must not be blank");

/** A GitHub label name: 1..50 characters, no leading or trailing whitespace. */
const labelName = z
  .string()
  .min(1)
  .max(50)
  .regex(/^\S(?:.*\S)?$/, "a label must not start or end with whitespace");

// Environment variable names, or a prefix ending in `*`. A bare `*` does not match: it would
// hand every variable of the host, tokens included, to every worker.
const envPattern = z
  .string()
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]*\*?$/,
    'expected a variable name or a prefix ending in "*" such as "AFK_USER_*" (a bare "*" is refused: it would hand every token to every worker)',
  );

const regexSource = nonBlank().superRefine((source, ctx) => {
  try {
    new RegExp(source, "i");
  } catch (err) {
    ctx.addIssue({ code: "custom", message: `not a valid regular expression: ${(err as Error).message}` });
  }
});

// Branch and ref names are handed to git. Reject what git would reject and anything that
// could be read as an option (a leading "-").
const gitNameProblem = (name: string): string | null => {
  if (name.startsWith("-")) return 'must not start with "-"';
  if (/[\s~^:?*[\\]/.test(name) || [...name].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) {
    return "must not contain whitespace, control characters or any of ~ ^ : ? * [ \\";
  }
  if (name.includes("..") || name.includes("@{") || name.includes("//")) return 'must not contain "..", "@{" or "//"';
  if (name.endsWith(".lock") || name.endsWith(".")) return 'must not end with ".lock" or "."';
  return null;
};

const branchName = z
  .string()
  .min(1)
  .superRefine((name, ctx) => {
    const problem = gitNameProblem(name) ?? (name.endsWith("/") ? 'must not end with "/"' : null);
    if (problem) ctx.addIssue({ code: "custom", message: `not a usable branch name: ${problem}` });
  });

const LabelsSchema = z
  .strictObject({
    ready: labelName
      .default("ready-for-agent")
      .describe(
        "Label that marks an issue as ready for an agent. A selector without its own `label` picks issues carrying this one; removing it from an issue is how a human takes the issue back.",
      ),
    escalate: labelName
      .default("ready-for-human")
      .describe(
        "Label added (and `ready` removed) when the fleet gives up on an issue: retries exhausted, blocked on an open dependency, or a worker that cannot run.",
      ),
    epic: z
      .array(labelName)
      .default(() => ["epic", "prd"])
      .describe(
        "Labels that mark an issue as an epic or PRD. Such issues are never dispatched, even when a selector picks them: they are decomposed upstream, not implemented by one worker.",
      ),
    priority_high: labelName.default("priority:high").describe("Issues with this label are dispatched before others picked by the same selector."),
    hold: labelName
      .default("afk-hold")
      .describe(
        "Hands off: an issue with this label is never dispatched, whatever the selectors say. Use it to reserve an issue for a human without touching its other labels.",
      ),
    tag_prefix: labelName.default("tag:").describe("Prefix of the labels a selector's `tags` facet matches: tag `api` means the label `tag:api`."),
    attempt_prefix: labelName
      .max(45)
      .default("afk-attempt/")
      .describe(
        "Prefix of the retry counter label (`afk-attempt/1`, `afk-attempt/2`, ...). The attempt count lives on the issue, so it survives restarts and is shared by every host.",
      ),
    runner_error: labelName
      .default("runner-error")
      .describe("Label added to issues whose workers were swept when the circuit breaker parked births (the worker command itself is failing, not the issue)."),
  })
  .superRefine((labels, ctx) => {
    // Two roles on one label would make the fleet undo its own moves (escalating an issue
    // would leave it ready, holding it would dispatch it...).
    const roles = ["ready", "escalate", "hold", "priority_high", "runner_error"] as const;
    for (let i = 0; i < roles.length; i++) {
      for (let j = 0; j < i; j++) {
        const a = roles[j]!;
        const b = roles[i]!;
        if (labels[a].toLowerCase() === labels[b].toLowerCase()) {
          ctx.addIssue({ code: "custom", path: [b], message: `must differ from labels.${a} (both are "${labels[b]}")` });
        }
      }
    }
    labels.epic.forEach((epic, i) => {
      if (epic.toLowerCase() === labels.ready.toLowerCase()) {
        ctx.addIssue({
          code: "custom",
          path: ["epic", i],
          message: `must not be labels.ready ("${labels.ready}"): every ready issue would count as an epic and nothing would be dispatched`,
        });
      }
    });
  })
  .describe("Label names the fleet reads and writes. Compared case-insensitively.");

const selectorShape = {
  label: labelName
    .nullable()
    .optional()
    .describe("Label the issue must carry. Omitted: `labels.ready`. `null`: no label filter (then at least one other facet is required)."),
  issues: z
    .array(z.number().int().positive())
    .min(1)
    .max(
      MAX_SELECTOR_ISSUES,
      `a selector lists at most ${MAX_SELECTOR_ISSUES} issue numbers (MAX_SELECTOR_ISSUES): pick more with a label, tags or a milestone, or split them over selectors`,
    )
    .nullable()
    .default(null)
    .describe("Only these issue numbers, in this order; one that is no issue here refuses the start. `null`: any issue."),
  tags: z
    .array(
      z
        .string()
        .min(1)
        .regex(/^\S(?:.*\S)?$/, "a tag must not start or end with whitespace"),
    )
    .default(() => [])
    .describe("The issue must carry every one of these tags (labels `labels.tag_prefix` + tag). Empty: no tag filter."),
  user: z
    .string()
    .regex(/^(?:@me|[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}(?:\[bot\])?)$/, 'expected a GitHub login or "@me"')
    .nullable()
    .default(null)
    .describe('Only issues opened by this GitHub login; "@me" is the login of the token the fleet runs as. `null`: any author.'),
  epic: z.number().int().positive().nullable().default(null).describe("Only sub-issues of this epic (issue number). `null`: no epic filter."),
  milestone: nonBlank().nullable().default(null).describe("Only issues in the milestone with this exact title. `null`: any milestone or none."),
  blockers: z.boolean().default(true).describe("With `issues`: also pick their open blockers that are ready (carry `label`)."),
  engine: z.string().regex(ENGINE_NAME, "an engine name").optional().describe("Engine of its issues (docs/engines.md, Routing)."),
  model: z.string().min(1).max(200).optional().describe("Model of its issues."),
};

/** One selector: the config's `selectors[]` and the selectors the MCP tools accept are this one schema. */
export const SelectorSchema = z
  .strictObject(selectorShape, { error: unknownKeyError(Object.keys(selectorShape)) })
  .superRefine((selector, ctx) => {
    const narrowed = selector.issues !== null || selector.tags.length > 0 || selector.user !== null || selector.epic !== null || selector.milestone !== null;
    if (selector.label === null && !narrowed) {
      ctx.addIssue({
        code: "custom",
        path: ["label"],
        message: "a selector with no label filter needs another facet (issues, tags, user, epic or milestone): as written it would pick every open issue",
      });
    }
  })
  .describe("One selector. Its facets are ANDed; an omitted facet does not filter.");

const GateSchema = z
  .strictObject({
    ci: z
      .enum(["required", "local"])
      .default("required")
      .describe(
        'Which machine gate a PR must pass before it lands. "required": the PR\'s GitHub checks must be green. "local": `gate.local_command` is run in the worktree on the exact tree that will land, and checks are not read (use it for repos without CI, and make sure the base branch does not require status checks).',
      ),
    local_command: nonBlank()
      .nullable()
      .default(null)
      .describe(
        'Shell command that gates a PR when `gate.ci` is "local" (exit 0 = green), e.g. "npm ci && npm test". Run in the PR\'s worktree. Required for a local gate, ignored otherwise.',
      ),
    timeout_seconds: intIn(10, 86_400).default(1_800).describe("A local gate command still running after this many seconds is killed and counts as red."),
    excerpt_bytes: intIn(256, 60_000)
      .default(4_096)
      .describe("How much of the tail of a red gate's output is quoted in the PR comment and handed to the next attempt."),
    rerun_failed: intIn(0, 5)
      .default(1)
      .describe(
        "How many times a red gate is run again on the same head before it counts as the attempt's failure (a flaky check then costs no attempt). Required CI: failing GitHub Actions checks are re-run through GitHub's \"re-run failed jobs\", and only when every failing check is one (a third-party app's check or a commit status cannot be re-run, and counts as it is). A local gate runs its command again. 0: a red gate counts at once.",
      ),
  })
  .superRefine((gate, ctx) => {
    if (gate.ci === "local" && gate.local_command === null) {
      ctx.addIssue({
        code: "custom",
        path: ["local_command"],
        message: 'required when gate.ci is "local": set it to the command that must pass before a PR lands, e.g. "npm test"',
      });
    }
  })
  .describe("The completion gate: what must be green before a PR lands.");

const LandingSchema = z
  .strictObject({
    strategy: z
      .enum(["auto", "squash", "merge", "push"])
      .default("auto")
      .describe(
        'How a green PR lands on the base branch. "auto": the landing under which the base can only move to a gated tree — "push" where the token may push to the base, else "squash" when the base requires branches to be up to date; otherwise auto-merge is refused with the fix. "squash": one squash commit per issue. "merge": a merge commit. "push": a fast-forward-only push of the gated head (the base history keeps the worker\'s commits). "squash" and "merge" need a base that requires up-to-date branches, unless `landing.allow_untested_race` is set.',
      ),
    sync: z
      .enum(["merge"])
      .default("merge")
      .describe(
        "How a PR branch is brought up to the current base before its final gate. Only merge is offered: a rebase would drop the merge commits in which earlier conflicts were already resolved.",
      ),
    delete_branch: z.boolean().default(true).describe("Delete the worker branch after its PR lands."),
    lock_ttl_seconds: intIn(60, 86_400)
      .default(600)
      .describe(
        "Seconds after which another host may take over the landing lock (`<namespace>/lock/landing`) of a host that died mid-landing. A local gate's time (`gate.timeout_seconds` per sync round and re-run) is added, since it runs under the lock. A clean stop always releases the lock at once.",
      ),
    allow_untested_race: z
      .boolean()
      .default(false)
      .describe(
        'Accept a landing under which the base can move to a tree no gate ran: the merge API ("squash" or "merge") on a base that does not require branches to be up to date, where a commit landing inside the merge call is merged with the PR unseen. Off: such a setup is refused with the fix (use "push", or require up-to-date branches on the base).',
      ),
    train: z
      .strictObject({
        max: intIn(1, 64)
          .default(4)
          .describe(
            'Most green PRs landed together in one train. With 2 or more waiting, they are merged in dispatch order onto the base tip as one commit on a branch `afk/train/<id>` (a draft PR under required CI, so CI runs on it), gated once, and the base fast-forwards to exactly that tree; a red train is bisected (halves, then singles) so the bad PR is retried or escalated with its own evidence and the others land. Trains land by push: under "squash" or "merge" PRs land one at a time. 1: one PR at a time.',
          ),
      })
      .prefault({})
      .describe("Landing trains: one gate run for several green PRs."),
  })
  .describe("Landing: green PRs land on a gated tree that contains the current base tip, several at once as a train (landing.train.max).");

export { RUNTIME_NAMES, type RuntimeName } from "./config-sandbox.js";

const WorkerSchema = z
  .strictObject({
    max_runtime_seconds: intIn(300, 604_800)
      .default(10_800)
      .describe(
        "Hard wall-clock limit for one worker run, however busy it looks; a worker still running after this is killed and the attempt counts as failed.",
      ),
    env_passthrough: z
      .array(envPattern)
      .default(() => ["AFK_USER_*"])
      .describe(
        'Variables of the host environment handed to workers, by name or by a prefix ending in "*". Nothing else is passed beyond a minimal base (PATH, HOME, locale, ...): tokens reach a worker only if you name them here (e.g. "ANTHROPIC_API_KEY").',
      ),
    env_deny: z
      .array(envPattern)
      .default(() => ["AFK_STATE_DIR", "AFK_CONFIG", "AFK_INSTANCE", "AFK_BRIEF", "AFK_ISSUE", "AFK_BRANCH", "AFK_BASE", "AFK_WORKTREE"])
      .describe(
        "Variables never passed through, even when `env_passthrough` matches them; wins over it. The defaults are the fleet's own knobs, which it sets for each worker itself.",
      ),
    quota_patterns: z
      .array(regexSource)
      .default(() => [...DEFAULT_QUOTA_PATTERNS])
      .describe(
        "Regular expressions (case-insensitive) that recognise a usage-limit message in a worker's output. A match pauses births until the reset time the message gives, and spends no attempt. The defaults cover Claude Code, Codex, Gemini CLI, cursor-agent and aider.",
      ),
    auth_patterns: z
      .array(regexSource)
      .default(() => [...DEFAULT_AUTH_PATTERNS])
      .describe(
        "Regular expressions (case-insensitive) that recognise an expired or missing agent login. A match pauses births fleet-wide until an operator acts, and spends no attempt.",
      ),
    refusal_patterns: z
      .array(regexSource)
      .default(() => [...DEFAULT_REFUSAL_PATTERNS])
      .describe(
        "Regular expressions (case-insensitive) that recognise an agent refusing to run as configured (Claude Code's bypass mode as root). A match pauses births fleet-wide until an operator acts, and spends no attempt.",
      ),
    network_patterns: z
      .array(regexSource)
      .default(() => [...DEFAULT_NETWORK_PATTERNS])
      .describe(
        "Regular expressions (case-insensitive) that recognise an agent retrying because it cannot reach its API. Three matches in one run end that worker and pause births for a backoff; no attempt is spent.",
      ),
    output_max_bytes: intIn(65_536, 4_294_967_296)
      .default(16_777_216)
      .describe(
        "Cap on each of a worker's output files (`stdout.log`, `stderr.log` in its run directory), which the daemon follows into the worker lane. A file read to its end past this size is cut back to a one-line marker while the worker's process group is briefly stopped, so no line is lost: every line is in the worker lane, which rotates on its own (`lanes`). Default 16 MiB.",
      ),
    checkpoint_seconds: intIn(30, 86_400)
      .default(300)
      .describe(
        "While a worker runs, its new commits are pushed to its branch this often (fenced by the claim), and once more when it exits: a host on another machine continues from the branch tip instead of starting over.",
      ),
  })
  .superRefine((worker, ctx) => {
    worker.env_passthrough.forEach((pattern, i) => {
      const denied = worker.env_deny.find((deny) => (deny.endsWith("*") ? pattern.startsWith(deny.slice(0, -1)) : deny === pattern));
      if (denied !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["env_passthrough", i],
          message: `"${pattern}" is always blocked by worker.env_deny entry "${denied}"; remove one of them`,
        });
      }
    });
  })
  .describe("Worker processes: what they inherit and how their output is read.");

const StallSchema = z
  .strictObject({
    quiet_seconds: intIn(60, 86_400)
      .default(900)
      .describe("A worker with no output and no file or git activity for this long is reported as stalled (no action yet)."),
    kill_seconds: intIn(60, 86_400)
      .default(1_800)
      .describe(
        "A worker quiet for this long is killed, unless it has a busy child process (a test run, a build). Must be greater than `stall.quiet_seconds`. Its committed work is continued by the next worker, not thrown away.",
      ),
  })
  .superRefine((stall, ctx) => {
    if (stall.kill_seconds <= stall.quiet_seconds) {
      ctx.addIssue({
        code: "custom",
        path: ["kill_seconds"],
        message: `must be greater than stall.quiet_seconds (${stall.quiet_seconds}), got ${stall.kill_seconds}`,
      });
    }
  })
  .describe("Stall detection for workers that stop making progress without exiting.");

const CircuitSchema = z
  .strictObject({
    fast_death_seconds: intIn(1, 3_600)
      .default(60)
      .describe(
        'A worker that exits within this many seconds of starting, without a PR or a verdict, died "fast": the command, not the issue, is likely broken.',
      ),
    k: intIn(1, 100)
      .default(3)
      .describe(
        "This many fast deaths within `circuit.window_seconds` trip the breaker: births are parked until `project_reset`, and the affected issues are labelled `labels.runner_error` and put back.",
      ),
    window_seconds: intIn(60, 86_400).default(900).describe("The sliding window in which fast deaths are counted."),
  })
  .describe("Circuit breaker against a worker command that cannot run at all.");

const WorktreeSchema = z
  .strictObject({
    root: nonBlank()
      .nullable()
      .default(null)
      .describe(
        "Directory under which each worker gets its own git worktree. `null`: `worktrees/` under the state directory (AFK_STATE_DIR, else $XDG_STATE_HOME/afk-mcp, else ~/.local/state/afk-mcp).",
      ),
    branch_prefix: z
      .string()
      .min(1)
      .max(100)
      .superRefine((prefix, ctx) => {
        const problem = gitNameProblem(prefix);
        if (problem) ctx.addIssue({ code: "custom", message: `not a usable branch prefix: ${problem}` });
      })
      .default("afk/")
      .describe("Prefix of worker branches (`afk/12-short-title`). Only PRs from branches with this prefix, in this repository, are ever landed by the fleet."),
    cleanup: z
      .boolean()
      .default(true)
      .describe("Remove a worker's worktree once its issue is landed, closed or escalated. Worktrees of live or recoverable work are never removed."),
  })
  .describe("Where and how worker checkouts are made.");

const LeaseSchema = z
  .strictObject({
    ttl_seconds: intIn(300, 86_400)
      .default(4_500)
      .describe(
        "A claim whose owner's heartbeat is older than this is stale and may be reclaimed by another fleet instance (its work is continued, not restarted). Longer is safer against slow hosts; shorter recovers a dead host's issues sooner.",
      ),
    heartbeat_seconds: intIn(10, 43_200)
      .default(300)
      .describe(
        "How often a fleet holding claims refreshes its heartbeat. Must be less than half of `lease.ttl_seconds`, so one missed beat never lets a live claim go stale.",
      ),
  })
  .superRefine((lease, ctx) => {
    if (lease.heartbeat_seconds * 2 >= lease.ttl_seconds) {
      ctx.addIssue({
        code: "custom",
        path: ["heartbeat_seconds"],
        message: `must be less than half of lease.ttl_seconds (${lease.ttl_seconds} / 2 = ${lease.ttl_seconds / 2}), got ${lease.heartbeat_seconds}`,
      });
    }
  })
  .describe("The claim lease that lets several hosts share one repository safely.");

const RegistrationSchema = z
  .strictObject({
    ttl_seconds: intIn(1, 86_400)
      .nullable()
      .default(300)
      .describe(
        "How long the daemon keeps a project's registration without a renewal. Each MCP session (or `afk-mcp run`) renews what it started every half of this; once nobody renews it (the laptop closed, the client exited), it lapses and drains exactly as `project_stop` does. `null`: never lapses, for a server under a supervisor; only through config or `afk-mcp run --persist`.",
      ),
    idle_deregister_seconds: intIn(1, 604_800)
      .default(1_800)
      .describe("A project whose queue has drained (nothing ready, nothing in flight, no worker) for this long deregisters itself."),
  })
  .describe("How a project's registration with the per-machine daemon lives and ends.");

const PacingSchema = z
  .strictObject({
    busy_seconds: intIn(5, 3_600)
      .default(90)
      .describe(
        "Seconds between ticks while anything is moving (work in flight, something just landed or was dispatched), unless an event comes first: a worker's exit, a watched check concluding, the base moving or a landing finishing wakes the loop at once (see `pacing.watch_seconds`).",
      ),
    idle_seconds: intIn(5, 86_400).default(1_500).describe("Seconds between ticks when the last tick found nothing to do."),
    long_idle_seconds: intIn(5, 86_400)
      .default(3_600)
      .describe(
        "Seconds between ticks after `pacing.idle_ticks_before_sleep` empty ticks in a row. While the fleet holds a claim it never waits longer than half of `lease.ttl_seconds`.",
      ),
    idle_ticks_before_sleep: intIn(1, 1_000)
      .default(3)
      .describe("Consecutive empty ticks (nothing to dispatch, nothing in flight) before the long idle cadence."),
    watch_seconds: intIn(1, 600)
      .default(10)
      .describe(
        "While a PR's required checks run (or a green PR waits for the base), the fleet looks at them this often between ticks, sooner right after a push, with conditional requests that cost no rate limit while nothing changed; a concluded check, a moved base, a worker's exit or a finished landing wake the loop at once. Nothing is watched when nothing waits.",
      ),
    slow_tick_seconds: intIn(1, 86_400)
      .default(120)
      .describe(
        "A tick still under way after this many seconds (real time) is reported once as a warning (`tick_slow`) in the supervisor lane, naming what it is doing: a tick takes seconds, since landings and workers run beside it, so one that takes minutes waits on a git or GitHub call that may hang until its timeout.",
      ),
  })
  .superRefine((pacing, ctx) => {
    if (pacing.idle_seconds < pacing.busy_seconds) {
      ctx.addIssue({
        code: "custom",
        path: ["idle_seconds"],
        message: `must be at least pacing.busy_seconds (${pacing.busy_seconds}), got ${pacing.idle_seconds}`,
      });
    }
    if (pacing.long_idle_seconds < pacing.idle_seconds) {
      ctx.addIssue({
        code: "custom",
        path: ["long_idle_seconds"],
        message: `must be at least pacing.idle_seconds (${pacing.idle_seconds}), got ${pacing.long_idle_seconds}`,
      });
    }
  })
  .describe("Adaptive pacing of reconciliation ticks.");

const ReviewSchema = z
  .strictObject({
    command: nonBlank()
      .nullable()
      .default(null)
      .describe(
        'Shell command that reviews a gated PR before it lands, e.g. "claude -p --permission-mode acceptEdits". Opaque like the worker command: run in the issue\'s worktree at the PR head with a review brief on stdin (the issue, the diff, the gate evidence, the rules); it writes {"verdict": "approve" | "fix" | "refute", "findings": "..."} to $AFK_VERDICT_FILE. "fix": it committed fixes in place (the fleet pushes them and gates again). "refute": the findings go to the next attempt. null: no review stage.',
      ),
    max_rounds: intIn(1, 10)
      .default(2)
      .describe("Reviews of one PR (fix or refute rounds, a head pushed after a review) before the issue is escalated instead of reviewed again."),
    diff_bytes: intIn(1_024, 1_000_000)
      .default(100_000)
      .describe("How much of the PR's diff the review brief quotes; the reviewer can read the rest in its worktree."),
  })
  .describe(
    "An optional review stage between the machine gate and the landing, by an agent of your choosing. Reviewers get the same liveness, stall, quota and breaker handling as workers.",
  );

const ConflictsSchema = z
  .strictObject({
    early: z
      .boolean()
      .default(true)
      .describe(
        "Merge every in-flight PR of the fleet with the base whenever the base moves (after each landing at once), and each pair of in-flight heads whose changed files touch with each other, in the work repository (git merge-tree: no checkout, no request; cached by the pair of shas). A PR that no longer merges with the base is retried with the conflicting paths as evidence, instead of spending its CI run and its landing turn to find out; conflicting pairs are shown in `status` (`conflicting_pairs`) and on the boards, and the PR that conflicts with fewer others lands first.",
      ),
    overlap_dispatch: z
      .boolean()
      .default(true)
      .describe(
        "Before dispatch, start an issue whose body names no path (code spans, paths in the base tree) that in-flight PRs change before an equally ranked one that does; `status` lists the held issues under `held_for_overlap`. Nothing is skipped, only reordered within a rank.",
      ),
    wait: z
      .boolean()
      .default(true)
      .describe(
        "A PR that no longer merges with the base (seen early or at its landing's sync) waits before its retry while other in-flight work of the fleet changes its conflicting files (or names them in its issue): retried at once, it would be redone beside that work and conflict again when it lands. It waits for the claims in flight when the hold began, until each landed or was abandoned, or until `hold_max_seconds`; a hold never waits on a later one. `status` lists the holds under `conflict_holds`.",
      ),
    hold_max_seconds: intIn(0, 86_400)
      .default(1800)
      .describe("The longest a conflict retry waits for in-flight work (see `wait`); then it is retried anyway. 0 retries at once."),
  })
  .describe("Conflicts seen before they cost a retry: parallel workers editing the same files.");

const BoardSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(true)
      .describe("Keep one status comment on each claimed issue (claimed, PR open, CI failed, merged, escalated), edited only when it changes."),
    escalate_comment: z.boolean().default(true).describe("When an issue is escalated, comment where it got stuck, with links to the PR and the failing gate."),
    settle_seconds: z
      .number()
      .min(0)
      .max(3600)
      .default(30)
      .describe(
        "A live phase (claimed, coding, PR open, CI failed, awaiting review or merge) is written to the board once it has lasted this long; a phase over sooner costs no request and still shows, timed, in the board's history. A landed issue's final board is always written: one whose PR landed before any phase settled still ends with one board saying which PR or train landed it, with the phases it went through; an escalation is told by its own comment (and an open board is marked escalated). 0: every phase at once.",
      ),
  })
  .describe("What the fleet tells humans on the issues themselves.");

const EpicsSchema = z
  .strictObject({
    close_when_done: z
      .boolean()
      .default(true)
      .describe(
        "Close an epic (an issue with sub-issues) once every sub-issue is closed, with a comment listing them, when a selector picks the epic itself or names it (`epic`). false: epics stay open for a human to close.",
      ),
  })
  .describe("Epics: issues whose sub-issues are the work.");

const FleetConfigObject = z.strictObject({
  $schema: z.string().optional().describe("Optional path or URL of this JSON Schema, for editor completion. Ignored by the fleet."),
  selectors: z
    .array(SelectorSchema)
    .default(() => [])
    .describe(
      "Which open issues the fleet works on, in priority order: the first selector takes what it picks, later ones fill the remaining slots. Empty: one selector, the `labels.ready` label.",
    ),
  labels: LabelsSchema.prefault({}),
  concurrency: intIn(1, 64).default(3).describe("How many workers run at once (`project_start`'s `target` overrides it for that run)."),
  base: branchName.nullable().default(null).describe("Branch that workers start from and PRs land on. `null`: the repository's default branch."),
  gate: GateSchema.prefault({}),
  landing: LandingSchema.prefault({}),
  retry: intIn(0, 10).default(2).describe("How many more attempts a failing issue gets after the first, before it is escalated to `labels.escalate`."),
  fix_forward: z
    .boolean()
    .default(true)
    .describe("Red checks: the next attempt fixes the PR on its branch, once; fresh from the base after that, or with `false`."),
  worker: WorkerSchema.prefault({}),
  idle_grace_seconds: intIn(60, 86_400)
    .default(600)
    .describe(
      "A worker with no PR that has been idle this long is judged by its verdict (done, blocked, giving up) or, with none, counted as a failed attempt.",
    ),
  stall: StallSchema.prefault({}),
  circuit: CircuitSchema.prefault({}),
  worktree: WorktreeSchema.prefault({}),
  lease: LeaseSchema.prefault({}),
  namespace: z
    .string()
    .regex(/^refs(?:\/[A-Za-z0-9._-]+)+$/, 'expected a ref prefix such as "refs/afk" (no trailing "/")')
    .superRefine((ns, ctx) => {
      const problem = gitNameProblem(ns);
      if (problem) ctx.addIssue({ code: "custom", message: `not a usable ref prefix: ${problem}` });
    })
    .default("refs/afk")
    .describe(
      'Ref namespace for claims and heartbeats (`<namespace>/claim/<issue>`, `<namespace>/heartbeat/<instance>`). If an org ruleset forbids it, "refs/heads/afk" works, at the cost of branches that may trigger push CI.',
    ),
  pacing: PacingSchema.prefault({}),
  board: BoardSchema.prefault({}),
  epics: EpicsSchema.prefault({}),
  review: ReviewSchema.prefault({}),
  conflicts: ConflictsSchema.prefault({}),
  registration: RegistrationSchema.prefault({}),
  engines: EnginesSchema,
  prices: PricesSchema,
  budget: BudgetSchema.prefault({}),
  routing: RoutingSchema.prefault({}),
  notify: NotifySchema.prefault({}),
  runtime: RuntimeSchema,
  sandbox: SandboxSchema.prefault({}),
  actions: ActionsSchema.prefault({}),
});

/** The fleet config. Parse anything a user wrote; the output is canonical (every key present). */
export const FleetConfigSchema = FleetConfigObject.transform(({ $schema: _schema, ...config }) => ({
  ...config,
  // Canonical selectors are explicit: the implicit "ready label" is written out, so nothing
  // downstream re-applies a default.
  selectors: (config.selectors.length > 0 ? config.selectors : [{ issues: null, tags: [], user: null, epic: null, milestone: null, blockers: true }]).map(
    ({ label, ...facets }) => ({ label: label === undefined ? config.labels.ready : label, ...facets }),
  ),
})).meta({
  title: "afk-mcp fleet config",
  description: "Work policy of an afk-mcp fleet, committed as .github/afk.json. Every key is optional and has a default; unknown keys are errors.",
});

export type FleetConfig = z.output<typeof FleetConfigSchema>;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** The canonical config of `{}`. Frozen: copy it (structuredClone) before changing anything. */
export const DEFAULT_CONFIG: FleetConfig = deepFreeze(FleetConfigSchema.parse({}));

/**
 * The JSON Schema of what a user may write (zod's input side: defaults shown, every key
 * optional, unknown keys refused). schemas/config.schema.json is this, committed.
 */
export function fleetConfigJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(FleetConfigSchema, { io: "input", target: "draft-2020-12" }) as Record<string, unknown>;
}
