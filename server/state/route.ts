// The route of one attempt: which engine and model run it (docs/architecture.md, "Workers:
// engines and runtimes"). Pure. Precedence, highest first:
//   1. the labels `afk-engine/<name>` and `afk-model/<name>` (a human's pin);
//   2. the escalation ladder: attempt n >= 2 runs rung n-2 (the last rung for later attempts);
//   3. the start's engine and model.
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
  /** Which level chose it: "start", "ladder rung N", or the label(s). */
  from: string;
}

function labelValue(labels: readonly string[], prefix: string): string | undefined {
  const hit = labels.find((l) => l.toLowerCase().startsWith(prefix) && l.length > prefix.length);
  return hit === undefined ? undefined : hit.slice(prefix.length);
}

function apply(route: Route, step: RouteStep, from: string): Route {
  if (step.engine === undefined && step.model === undefined) return route;
  const engine = step.engine ?? route.engine;
  const model = step.model ?? (engine === route.engine ? route.model : null);
  return { engine, model, from };
}

/** The engine and model of attempt `attempt` (1-based) at an issue with these labels. */
export function routeFor(policy: RoutePolicy, labels: readonly string[], attempt: number): Route {
  let route: Route = { engine: policy.start.engine, model: policy.start.model, from: "start" };
  if (attempt >= 2 && policy.ladder.length > 0) {
    const rung = Math.min(attempt - 2, policy.ladder.length - 1);
    route = apply(route, policy.ladder[rung]!, `ladder rung ${rung + 1}`);
  }
  const engine = labelValue(labels, ENGINE_LABEL_PREFIX)?.toLowerCase();
  const model = labelValue(labels, MODEL_LABEL_PREFIX);
  if (engine !== undefined || model !== undefined) {
    const names = [engine !== undefined ? `${ENGINE_LABEL_PREFIX}${engine}` : null, model !== undefined ? `${MODEL_LABEL_PREFIX}${model}` : null].filter(Boolean).join(" ");
    route = apply(route, { engine, model }, `label ${names}`);
  }
  return route;
}
