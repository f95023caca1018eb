// What one attempt spent, read from the engine's own output: Claude Code's result line carries
// `total_cost_usd` and `usage` (its price table applied to what the API billed); Codex `exec
// --json` and Gemini report tokens only, priced here with the config's `prices`. What an output
// does not say is null — "unknown" — and never 0.
import type { UsageFormat } from "./engines.js";

export interface Spend {
  engine: string;
  model: string | null;
  input_tokens: number | null;
  cached_input_tokens: number | null;
  output_tokens: number | null;
  usd: number | null;
  /** cli: the CLI reported the cost; prices: tokens × config prices; unknown: no usable figure. */
  source: "cli" | "prices" | "unknown";
}

export interface Price {
  input_per_mtok: number;
  output_per_mtok: number;
  cached_input_per_mtok?: number | undefined;
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null);

function parse(line: string): Record<string, unknown> | null {
  const t = line.trim();
  if (!t.startsWith("{")) return null;
  try {
    const v = JSON.parse(t) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Fed every line of a worker's stdout; `spend()` at any time (the budget check) and at exit. */
export class SpendReader {
  private input: number | null = null;
  private cached: number | null = null;
  private output: number | null = null;
  private usdReported: number | null = null;
  private seenModel: string | null;

  constructor(
    private readonly engine: string,
    private readonly format: UsageFormat,
    model: string | null,
    private readonly prices: Readonly<Record<string, Price>>,
  ) {
    this.seenModel = model;
  }

  push(line: string): void {
    if (this.format === "none" || line.length > 1_000_000) return;
    const event = parse(line);
    if (!event) return;
    if (this.format === "claude-json") return this.claude(event);
    if (this.format === "codex-json") return this.codex(event);
    return this.gemini(event);
  }

  private add(input: number | null, cached: number | null, output: number | null): void {
    if (input !== null) this.input = (this.input ?? 0) + input;
    if (cached !== null) this.cached = (this.cached ?? 0) + cached;
    if (output !== null) this.output = (this.output ?? 0) + output;
  }

  private claude(event: Record<string, unknown>): void {
    if (event.type === "system" && event.subtype === "init" && typeof event.model === "string") this.seenModel = event.model;
    if (event.type !== "result") return;
    // One result per run, its figures the whole run's: a second (a resumed session) replaces it.
    this.usdReported = num(event.total_cost_usd);
    // modelUsage is the run's per-model total; `usage` can be the last turn's only (measured on
    // 2.1.197's error_max_budget_usd result: usage 1,000 in, modelUsage 2,000 in).
    const perModel = Object.entries((event.modelUsage ?? {}) as Record<string, Record<string, unknown>>);
    if (perModel.length > 0) {
      const sum = (key: string): number | null =>
        perModel.reduce<number | null>((acc, [, u]) => (num(u[key]) === null ? acc : (acc ?? 0) + num(u[key])!), null);
      const fresh = sum("inputTokens");
      this.input = fresh === null ? null : fresh + (sum("cacheCreationInputTokens") ?? 0);
      this.cached = sum("cacheReadInputTokens");
      this.output = sum("outputTokens");
      if (perModel.length === 1) this.seenModel = perModel[0]![0];
      return;
    }
    const usage = (event.usage ?? {}) as Record<string, unknown>;
    const fresh = num(usage.input_tokens);
    const created = num(usage.cache_creation_input_tokens);
    this.input = fresh === null ? null : fresh + (created ?? 0);
    this.cached = num(usage.cache_read_input_tokens);
    this.output = num(usage.output_tokens);
  }

  private codex(event: Record<string, unknown>): void {
    if (event.type !== "turn.completed") return;
    const usage = (event.usage ?? {}) as Record<string, unknown>;
    // OpenAI's input_tokens include the cached ones.
    this.add(num(usage.input_tokens), num(usage.cached_input_tokens), num(usage.output_tokens));
  }

  private gemini(event: Record<string, unknown>): void {
    if (event.type !== "result") return;
    const stats = (event.stats ?? {}) as Record<string, unknown>;
    this.input = num(stats.input_tokens);
    this.cached = num(stats.cached);
    this.output = num(stats.output_tokens);
  }

  spend(): Spend {
    const base = { engine: this.engine, model: this.seenModel, input_tokens: this.input, cached_input_tokens: this.cached, output_tokens: this.output };
    if (this.usdReported !== null) return { ...base, usd: this.usdReported, source: "cli" };
    const price = this.seenModel === null ? undefined : this.prices[this.seenModel];
    if (price && this.input !== null && this.output !== null) {
      const cached = this.format === "codex-json" ? Math.min(this.cached ?? 0, this.input) : 0;
      const usd =
        ((this.input - cached) * price.input_per_mtok + cached * (price.cached_input_per_mtok ?? price.input_per_mtok) + this.output * price.output_per_mtok) /
        1e6;
      return { ...base, usd, source: "prices" };
    }
    return { ...base, usd: null, source: "unknown" };
  }
}

/** "$0.0123", or "unknown" — never "$0" for what nobody reported. */
export function usdText(usd: number | null): string {
  if (usd === null) return "unknown";
  return `$${usd < 0.01 && usd > 0 ? usd.toPrecision(2) : usd.toFixed(usd < 1 ? 4 : 2)}`;
}
