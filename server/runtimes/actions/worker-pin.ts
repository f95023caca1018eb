// Which afk-mcp the workflow's worker step runs, and whether the npm registry has it: the step
// `actions init` writes is `npx -y afk-mcp@<version> worker`, and while that version is not
// published (a build of main, a fork) every run fails before its worker starts. `actions init`
// and the start say so. The registry is the one npm uses (`npm_config_registry`, else
// registry.npmjs.org); one GET of the version's document, a few seconds at most; an unreachable
// registry is said, never a refusal.
import { parseDocument } from "yaml";

const PACKAGE = "afk-mcp";
const DEFAULT_REGISTRY = "https://registry.npmjs.org/";
const TIMEOUT_MS = 5_000;

/** What the worker step runs: the registry's package at `spec` (null: unpinned, the latest), or a command of the user's own. */
export type WorkerPin = { kind: "registry"; command: string; spec: string | null } | { kind: "own"; command: string } | { kind: "none" };

export interface RegistryAnswer {
  registry: string;
  /** has: the registry has the version; missing: it answered that it has not; unchecked: no answer (offline, an error, a range). */
  verdict: "has" | "missing" | "unchecked";
  /** The version the spec resolves to, when the registry said. */
  version?: string;
  /** Why it was not checked. */
  why?: string;
}

/** The package spec a command runs (`npx -y afk-mcp@1.2.3 worker` → "1.2.3", `npx afk-mcp worker` → null), or undefined when it runs none of the registry's. */
function registrySpec(command: string): string | null | undefined {
  const match = /(?:^|[\s"'])afk-mcp(?:@([^\s"';&|]+))?(?=[\s"';&|]|$)/.exec(command);
  if (!match || !/\b(?:npx|npm\s+exec|pnpm\s+dlx|bunx|yarn\s+dlx)\b/.test(command)) return undefined;
  return match[1] ?? null;
}

/** The pin a command makes. */
export function pinOf(command: string): WorkerPin {
  const spec = registrySpec(command);
  return spec === undefined ? { kind: "own", command } : { kind: "registry", command, spec };
}

/**
 * The worker step's command in a workflow file: the step `actions init` names "afk-mcp worker",
 * else the one step whose environment takes the dispatch's command (AFK_COMMAND).
 */
export function workerCommandOf(workflowText: string): string | null {
  let doc: unknown;
  try {
    doc = parseDocument(workflowText).toJS();
  } catch {
    return null;
  }
  const jobs = (doc as { jobs?: Record<string, { steps?: unknown }> } | null)?.jobs;
  const steps = Object.values(jobs ?? {})
    .flatMap((job) => (Array.isArray(job?.steps) ? (job.steps as Array<Record<string, unknown>>) : []))
    .filter((s) => typeof s?.run === "string");
  const step = steps.find((s) => s.name === "afk-mcp worker") ?? steps.find((s) => typeof s.env === "object" && s.env !== null && "AFK_COMMAND" in s.env);
  return step ? String(step.run).trim() : null;
}

/** The registry npm would ask (`npm_config_registry`, any case, else the public one). */
export function registryUrl(env: Readonly<Record<string, string | undefined>>): string {
  const set = Object.entries(env).find(([k, v]) => k.toLowerCase() === "npm_config_registry" && v);
  return set?.[1] ?? DEFAULT_REGISTRY;
}

/** Whether the registry has afk-mcp at `spec` (an exact version or a dist-tag; null: `latest`). One GET, bounded in time. */
export async function askRegistry(spec: string | null, env: Readonly<Record<string, string | undefined>>): Promise<RegistryAnswer> {
  const registry = registryUrl(env);
  const wanted = spec ?? "latest";
  if (!/^[A-Za-z0-9][\w.+-]*$/.test(wanted)) return { registry, verdict: "unchecked", why: `${wanted} is a range, not a version` };
  let url: URL;
  try {
    url = new URL(`${PACKAGE}/${encodeURIComponent(wanted)}`, registry.endsWith("/") ? registry : `${registry}/`);
  } catch {
    return { registry, verdict: "unchecked", why: `the registry URL is not a URL` };
  }
  try {
    // One request per `actions init` and per start with runtime "actions" (the version's document only).
    const response = await fetch(url, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(TIMEOUT_MS) });
    if (response.status === 404) {
      await response.body?.cancel();
      return { registry, verdict: "missing" };
    }
    if (!response.ok) {
      await response.body?.cancel();
      return { registry, verdict: "unchecked", why: `it answered ${response.status}` };
    }
    const body = (await response.json().catch(() => null)) as { version?: unknown } | null;
    return { registry, verdict: "has", ...(typeof body?.version === "string" ? { version: body.version } : {}) };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return {
      registry,
      verdict: "unchecked",
      why: (error as Error).name === "TimeoutError" ? `no answer within ${TIMEOUT_MS / 1000} s` : `unreachable${cause ? ` (${cause})` : ""}`,
    };
  }
}

/** One sentence on what the step runs and what the registry said. */
function describePin(pin: WorkerPin, answer: RegistryAnswer | null): string {
  if (pin.kind === "none") return "the workflow has no step running `afk-mcp worker` that could be found: its runs may not start a worker";
  if (pin.kind === "own") return `the worker step runs \`${pin.command}\`, not a registry package: no version to check`;
  const what = pin.spec === null ? `${PACKAGE} unpinned (the registry's latest at each run)` : `${PACKAGE}@${pin.spec}`;
  if (answer === null) return `the worker step runs ${what}`;
  const where = `the npm registry (${answer.registry})`;
  switch (answer.verdict) {
    case "has":
      return `the worker step runs ${what}, which ${where} has${answer.version && answer.version !== pin.spec ? ` (${answer.version})` : ""}`;
    case "missing":
      return `the worker step runs ${what}, which ${where} does not have: every run will fail before its worker starts; publish it, or write a step that runs a build of your own (\`afk-mcp actions init --worker COMMAND\`)`;
    case "unchecked":
      return `the worker step runs ${what}; whether ${where} has it could not be checked: ${answer.why ?? "no answer"}`;
  }
}

/** What the step of a workflow file runs, checked against the registry where it names its package. */
export async function checkWorkerPin(workflowText: string | null, env: Readonly<Record<string, string | undefined>>): Promise<string> {
  if (workflowText === null) return "the workflow file could not be read: which afk-mcp its worker step runs is not checked";
  const command = workerCommandOf(workflowText);
  const pin: WorkerPin = command === null ? { kind: "none" } : pinOf(command);
  return describePin(pin, pin.kind === "registry" ? await askRegistry(pin.spec, env) : null);
}
