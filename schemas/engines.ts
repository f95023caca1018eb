// Config of engines (which agent CLI runs, server/agent/engines.ts), their prices and the spend
// budgets. Part of the fleet config (schemas/config.ts); its own file to keep that one readable.
import { z } from "zod";

export const ENGINE_NAME = /^[a-z][a-z0-9_-]{0,39}$/;
const word = z.string().min(1).max(400);
const positiveUsd = z.number().positive("must be a positive number of US dollars").finite();

export const EngineOverrideSchema = z
  .strictObject({
    like: z
      .enum(["claude", "codex", "gemini", "command"])
      .optional()
      .describe('For a new engine: the built-in profile it starts from (its flags, usage reading and failure patterns). Default "command".'),
    binary: word.optional().describe("The program: a name looked up on the worker's PATH (in its login shell), or an absolute path."),
    args: z.array(word).max(64).optional().describe("Replaces the profile's arguments before the model flag (unattended, trust and output flags)."),
    model_flag: word.nullable().optional().describe("The flag that takes the model; null: the CLI takes none."),
    budget_flag: word
      .nullable()
      .optional()
      .describe("The flag that takes a per-attempt USD budget (claude: --max-budget-usd); null: the fleet only records spend."),
    usage: z
      .enum(["claude-json", "codex-json", "gemini-json", "none"])
      .optional()
      .describe("How its output carries tokens and cost; none: spend is recorded as unknown."),
    command: z
      .string()
      .min(1)
      .max(4000)
      .optional()
      .describe("An opaque shell command instead of a binary (the brief on stdin and in $AFK_BRIEF), as worker_command."),
    default_model: word.optional().describe("The model used when neither project_start nor the route names one."),
  })
  .describe("One engine profile, or overrides of a built-in one.");

export const EnginesSchema = z
  .record(z.string().regex(ENGINE_NAME, "an engine name: lower-case letters, digits, - and _"), EngineOverrideSchema)
  .default(() => ({}))
  .describe('Engine profiles by name: overrides of the built-in "claude", "codex", "gemini" and "command", or new ones (with "like"). See docs/engines.md.');

export const PricesSchema = z
  .record(
    z.string().min(1).max(200),
    z.strictObject({
      input_per_mtok: z.number().min(0).finite().describe("USD per million input tokens."),
      output_per_mtok: z.number().min(0).finite().describe("USD per million output tokens."),
      cached_input_per_mtok: z.number().min(0).finite().optional().describe("USD per million cached input tokens (default: input_per_mtok)."),
    }),
  )
  .default(() => ({}))
  .describe(
    "USD per million tokens by model id, for engines that report tokens but no cost (codex, gemini). A model missing here has its cost recorded as unknown, never as 0.",
  );

export const BudgetSchema = z
  .strictObject({
    usd_per_attempt: positiveUsd
      .nullable()
      .default(null)
      .describe("Most one attempt may spend; handed to the CLI where it takes one (claude --max-budget-usd). null: no limit."),
    usd_per_issue: positiveUsd
      .nullable()
      .default(null)
      .describe("Most all attempts at one issue may spend; an issue past it is escalated with its spend in the comment. null: no limit."),
    usd_per_day: positiveUsd
      .nullable()
      .default(null)
      .describe(
        "Most the fleet may spend per UTC day; once reached, births stop until the next UTC midnight (nothing is killed, no attempt spent). null: no limit.",
      ),
  })
  .describe("Spend budgets, in US dollars as the engines report them (or tokens × `prices`).");

export const RoutingSchema = z
  .strictObject({
    ladder: z
      .array(
        z.strictObject({
          engine: z.string().regex(ENGINE_NAME).optional().describe("The engine of this rung; default: the start's engine."),
          model: word
            .optional()
            .describe("The model of this rung; default: that engine's default model (or the start's model when the engine is the start's)."),
        }),
      )
      .max(10)
      .default(() => [])
      .describe(
        "The escalation ladder: attempt 2 runs the first rung, attempt 3 the second, later attempts the last (a stronger model, or another engine). Empty: every attempt runs the start's engine and model. An issue's `afk-engine/<name>` and `afk-model/<name>` labels outrank the ladder.",
      ),
  })
  .describe(
    "Which engine and model run each attempt at an issue (only with project_start `engine`). Precedence, highest first: the issue's labels `afk-engine/<name>` and `afk-model/<name>`; the ladder rung of the attempt; the `engine` and `model` of the selector that picked the issue; the start's engine and model.",
  );
