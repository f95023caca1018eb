// The host's own settings, shared by every registration it runs (a daemon serves several
// repositories, a session's host one): `<state dir>/host.json`, beside the daemon's files and the
// lanes, since it belongs to the machine, not to a repository (a repository's policy is its
// .github/afk.json). Read at every project_start, so an edit takes effect at the next start; a
// file that does not parse refuses the start, naming the key and the fix. No file: no host limits.
//
//   { "budget": { "usd_per_day": 20 }, "max_workers": 6 }
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { UsageError } from "../gh/errors.js";
import type { HostLimits } from "../fleet/host-budget.js";

export const HOST_CONFIG_FILE = "host.json";

const HostConfigSchema = z.strictObject({
  budget: z
    .strictObject({
      usd_per_day: z.number().positive().finite().nullable().default(null),
    })
    .default({ usd_per_day: null }),
  max_workers: z.number().int().positive().max(1024).nullable().default(null),
});

const FIX: Record<string, string> = {
  "budget.usd_per_day": "a positive number of US dollars, or null for no host day budget",
  max_workers: "a positive whole number of workers (at most 1024), or null for no host limit",
};

/** The host's limits from `<stateDir>/host.json`; none when the file does not exist. Throws a UsageError naming the key. */
export async function readHostConfig(stateDir: string): Promise<HostLimits> {
  const path = join(stateDir, HOST_CONFIG_FILE);
  const text = await readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return null;
    throw new UsageError(`project_start refused: ${path} cannot be read (${error.code ?? error.message}): fix its permissions or remove it`);
  });
  if (text === null) return { usd_per_day: null, max_workers: null };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `project_start refused: ${path} is not JSON (${(error as Error).message}): write it as {"budget": {"usd_per_day": 20}, "max_workers": 6}, or remove it`,
    );
  }
  const parsed = HostConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path.join(".") || (issue.code === "unrecognized_keys" ? issue.keys.join(", ") : "(top level)");
    const fix = FIX[key] ?? "keys are budget.usd_per_day and max_workers: remove the others";
    throw new UsageError(`project_start refused: ${path}: ${key}: ${issue.message}: expected ${fix}`);
  }
  return { usd_per_day: parsed.data.budget.usd_per_day, max_workers: parsed.data.max_workers };
}
