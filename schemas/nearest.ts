// Nearest names: the valid key or value a typo most likely meant, so that an unknown config
// key or tool argument is answered with "did you mean ...". Shared by the config and the tools.
import { z } from "zod";

export function normalizeKey(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/-/g, "_")
    .toLowerCase();
}

export function nearestKey(key: string, candidates: readonly string[]): string | null {
  const norm = normalizeKey(key);
  const exact = candidates.find((c) => c === norm);
  if (exact) return exact;
  // "ttl" for "ttl_seconds", "timeout" for "timeout_seconds".
  const extended = candidates.filter((c) => c.startsWith(`${norm}_`));
  if (extended.length === 1) return extended[0]!;
  return nearest(norm, candidates);
}

/** The candidate closest to `word` by edit distance, when it is close enough to be a typo. */
export function nearest(word: string, candidates: readonly string[]): string | null {
  const target = word.toLowerCase();
  const limit = target.length <= 4 ? 1 : target.length <= 8 ? 2 : 3;
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = editDistance(target, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best !== null && bestDistance <= limit && bestDistance < Math.max(target.length, 1) ? best : null;
}

/** Damerau-Levenshtein distance (optimal string alignment: a swap of neighbours costs 1). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array<number>(rows * cols).fill(0);
  const at = (i: number, j: number) => d[i * cols + j]!;
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, at(i - 2, j - 2) + 1);
      d[i * cols + j] = v;
    }
  }
  return at(a.length, b.length);
}

/** How many unknown keys of one object a refusal names; the rest are counted (as every refusal's problems are). */
export const UNKNOWN_KEYS_SHOWN = 10;

/**
 * A zod error function for strict objects: an unknown key is named with the nearest valid key
 * of `keys`, the valid keys are listed once when some key has none close, and past the first
 * UNKNOWN_KEYS_SHOWN the rest are only counted. Other issues keep zod's message.
 */
export function unknownKeyError(keys: readonly string[]): (issue: z.core.$ZodRawIssue) => string | undefined {
  return (issue) => {
    if (issue.code !== "unrecognized_keys") return undefined;
    const shown = issue.keys.slice(0, UNKNOWN_KEYS_SHOWN).map((key) => ({ key, near: nearestKey(key, keys) }));
    const named = shown.map(({ key, near }) => (near !== null ? `unknown key "${key}" (did you mean "${near}"?)` : `unknown key "${key}"`)).join("; ");
    const valid = shown.some(({ near }) => near === null) ? ` (valid keys: ${keys.join(", ")})` : "";
    const more = issue.keys.length - shown.length;
    return `${named}${valid}${more > 0 ? `; … and ${more} more unknown key(s), ${issue.keys.length} in all` : ""}`;
  };
}

/** The strict object an input shape describes (a tool's, a daemon method's): `additionalProperties: false`, typos named. */
export function strictInput<I extends z.ZodRawShape>(shape: I): z.ZodObject<I, z.core.$strict> {
  return z.strictObject(shape, { error: unknownKeyError(Object.keys(shape)) });
}
