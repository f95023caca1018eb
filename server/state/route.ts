// The route of one attempt: which engine and model run it (docs/architecture.md, "Workers:
// engines and runtimes"). Pure. Precedence, highest first:
//   1. the labels `afk-engine/<name>` and `afk-model/<name>`: a human's pin on one issue
//      outranks every policy written for many;
//   2. the escalation ladder: attempt n >= 2 runs rung n-2 (the last rung for later attempts). A
//      retry exists because the first route failed: repeating that route (a selector's) would
//      repeat its failure, so the ladder outranks the selector. A rung without `engine` names the
//      start's engine (as the config documents), whatever the selector chose;
//   3. the selector that picked the issue (`selectors[].engine` and `model`): a policy for a kind
//      of work ("docs issues run the cheap model");
//   4. the start's engine and model (`project_start {engine, model}`).
// A level that names another engine without a model runs that engine's default model.

export const ENGINE_LABEL_PREFIX = "afk-engine/";
export const MODEL_LABEL_PREFIX = "afk-model/";

export interface RouteStep {
  engine?: string | undefined;
  model?: string | undefined;
}

export interface RoutePolicy {
  start: { engine: string; model: string | null };
  ladder: readonly RouteStep[];
}

export interface Route {
  engine: string;
  /** null: the engine's default model. */
  model: string | null;
  /** Which level chose it: "start", "selector N", "ladder rung N", or the label(s). */
  from: string;
}

function labelValue(labels: readonly string[], prefix: string): string | undefined {
  const hit = labels.find((l) => l.toLowerCase().startsWith(prefix) && l.length > prefix.length);
  return hit === undefined ? undefined : hit.slice(prefix.length);
}

/** The engine an issue's `afk-engine/<name>` label names (lower-cased), or undefined. */
export function engineLabel(labels: readonly string[]): string | undefined {
  return labelValue(labels, ENGINE_LABEL_PREFIX)?.toLowerCase();
}

function apply(route: Route, step: RouteStep, from: string): Route {
  if (step.engine === undefined && step.model === undefined) return route;
  const engine = step.engine ?? route.engine;
  const model = step.model ?? (engine === route.engine ? route.model : null);
  return { engine, model, from };
}

/**
 * The engine and model of attempt `attempt` (1-based) at an issue with these labels, picked by
 * the selector at index `selectorIndex` whose route is `selector` (absent: the selector names none).
 */
export function routeFor(policy: RoutePolicy, labels: readonly string[], attempt: number, selector?: { index: number; step: RouteStep }): Route {
  const start: Route = { engine: policy.start.engine, model: policy.start.model, from: "start" };
  let route = selector ? apply(start, selector.step, `selector ${selector.index + 1}`) : start;
  if (attempt >= 2 && policy.ladder.length > 0) {
    const rung = Math.min(attempt - 2, policy.ladder.length - 1);
    const step = policy.ladder[rung]!;
    // Applied to the start's route: a rung without an engine is a model of the start's engine.
    const laddered = apply(start, step, `ladder rung ${rung + 1}`);
    if (laddered !== start) route = laddered;
  }
  const engine = engineLabel(labels);
  const model = labelValue(labels, MODEL_LABEL_PREFIX);
  if (engine !== undefined || model !== undefined) {
    const names = [engine !== undefined ? `${ENGINE_LABEL_PREFIX}${engine}` : null, model !== undefined ? `${MODEL_LABEL_PREFIX}${model}` : null]
      .filter(Boolean)
      .join(" ");
    route = apply(route, { engine, model }, `label ${names}`);
  }
  return route;
}
