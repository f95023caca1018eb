// Fault injection, as bors-ng's and Zuul's fake GitHubs do: random 5xx answers, secondary
// rate limits and latency on chosen routes (seeded, so a failing run can be replayed), and
// one-shot faults that arm the next merge ("answer 405", "the base moves first").
import { HttpError } from "./http-errors.js";
import { mulberry32 } from "./prng.js";
import { setTimeout as sleep } from "node:timers/promises";

export interface FaultSpec {
  /** "METHOD /template" exactly, or a substring of it or of the request path; absent: every route. */
  route?: string;
  /** Probability (0..1) of answering 500 or 502. */
  error_rate?: number;
  /** Probability (0..1) of answering 403 "secondary rate limit" with retry-after: 1. */
  secondary_rate_limit?: number;
  latency_ms?: number;
  /** RNG seed, so a run's faults can be replayed. */
  seed?: number;
}

export type OnceKind = "merge_405" | "base_moves_before_merge";
export const ONCE_KINDS: readonly OnceKind[] = ["merge_405", "base_moves_before_merge"];

export class Faults {
  private specs: FaultSpec[] = [];
  private rng = mulberry32(1);
  private readonly once = new Map<OnceKind, number>();

  add(spec: FaultSpec): void {
    for (const k of ["error_rate", "secondary_rate_limit"] as const) {
      const v = spec[k];
      if (v !== undefined && (typeof v !== "number" || v < 0 || v > 1)) throw new HttpError(422, `${k} must be a number between 0 and 1`);
    }
    if (spec.latency_ms !== undefined && (typeof spec.latency_ms !== "number" || spec.latency_ms < 0)) {
      throw new HttpError(422, "latency_ms must be a non-negative number");
    }
    if (spec.seed !== undefined) this.rng = mulberry32(spec.seed);
    this.specs.push(spec);
  }

  clear(): void {
    this.specs = [];
    this.once.clear();
    this.rng = mulberry32(1);
  }

  list(): { faults: FaultSpec[]; once: Record<string, number> } {
    return { faults: [...this.specs], once: Object.fromEntries(this.once) };
  }

  armOnce(kind: OnceKind): void {
    this.once.set(kind, (this.once.get(kind) ?? 0) + 1);
  }

  /** Consumes one armed one-shot fault of `kind`, if any. */
  takeOnce(kind: OnceKind): boolean {
    const n = this.once.get(kind) ?? 0;
    if (n === 0) return false;
    if (n === 1) this.once.delete(kind);
    else this.once.set(kind, n - 1);
    return true;
  }

  /** Applies latency, then throws the injected error if one fires for this request. */
  async apply(routeKey: string, path: string): Promise<void> {
    for (const spec of this.specs) {
      if (!matches(spec.route, routeKey, path)) continue;
      if (spec.latency_ms) await sleep(spec.latency_ms);
      if (spec.secondary_rate_limit && this.rng() < spec.secondary_rate_limit) {
        throw new HttpError(
          403,
          "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.",
          {},
          { "retry-after": "1" },
        );
      }
      if (spec.error_rate && this.rng() < spec.error_rate) {
        const status = this.rng() < 0.5 ? 500 : 502;
        throw new HttpError(status, status === 500 ? "Server Error" : "Bad Gateway");
      }
    }
  }
}

function matches(route: string | undefined, routeKey: string, path: string): boolean {
  if (route === undefined || route === "") return true;
  return routeKey === route || routeKey.includes(route) || path.includes(route);
}
