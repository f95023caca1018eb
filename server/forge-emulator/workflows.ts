// Workflow files of the Actions subset: `.github/workflows/*.yml|yaml` read from git, parsed
// with the `yaml` package into the part of GitHub's syntax the local runner executes, and a
// dispatch's inputs checked against `on.workflow_dispatch.inputs` as GitHub checks them.
import { parse } from "yaml";
import type { ForgeEmulator } from "./core.js";
import { HttpError, notFound } from "./http-errors.js";
import type { ActionsData } from "./actions-types.js";
import { isoNow } from "./state.js";

export const WORKFLOW_DIR = ".github/workflows";

export interface WorkflowInput {
  type: "string" | "boolean" | "number" | "choice" | "environment";
  required: boolean;
  default?: string | boolean | number;
  options?: string[];
}

export interface WorkflowStep {
  name: string;
  run?: string;
  uses?: string;
  shell?: string;
  env: Record<string, string>;
  workingDirectory?: string;
  /** The step's `if:` condition, as written. */
  if?: string;
}

export interface WorkflowJob {
  key: string;
  name: string;
  env: Record<string, string>;
  timeoutMinutes: number | null;
  steps: WorkflowStep[];
}

export interface Workflow {
  path: string;
  name: string;
  /** Null when the workflow has no workflow_dispatch trigger. */
  dispatchInputs: Record<string, WorkflowInput> | null;
  /** The `pull_request` activity types it runs on (GitHub's default: opened, synchronize, reopened); null: no such trigger. */
  pullRequestTypes: string[] | null;
  env: Record<string, string>;
  concurrency: { group: string; cancelInProgress: boolean } | null;
  runName: string | null;
  jobs: WorkflowJob[];
}

export class WorkflowSyntaxError extends Error {}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

function envMap(v: unknown, where: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObj(v)) throw new WorkflowSyntaxError(`${where}.env must be a map of names to values`);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typeof x === "string" ? x : String(x)]));
}

function triggers(on: unknown): Obj {
  if (typeof on === "string") return { [on]: null };
  if (Array.isArray(on)) return Object.fromEntries(on.map((t) => [String(t), null]));
  if (isObj(on)) return on;
  throw new WorkflowSyntaxError("`on` must name the workflow's triggers");
}

function inputsOf(spec: unknown): Record<string, WorkflowInput> {
  const raw = isObj(spec) && isObj(spec.inputs) ? spec.inputs : {};
  const out: Record<string, WorkflowInput> = {};
  for (const [name, v] of Object.entries(raw)) {
    const d = isObj(v) ? v : {};
    const type = (d.type ?? "string") as WorkflowInput["type"];
    if (!["string", "boolean", "number", "choice", "environment"].includes(type))
      throw new WorkflowSyntaxError(`input ${name}: unknown type ${String(d.type)}`);
    const options = Array.isArray(d.options) ? d.options.map(String) : undefined;
    if (type === "choice" && !options?.length) throw new WorkflowSyntaxError(`input ${name}: a choice needs options`);
    out[name] = { type, required: d.required === true, ...(d.default === undefined ? {} : { default: d.default as string }), ...(options ? { options } : {}) };
  }
  return out;
}

function pullRequestTypes(spec: unknown): string[] {
  const types = isObj(spec) ? spec.types : undefined;
  if (typeof types === "string") return [types];
  return Array.isArray(types) ? types.map(String) : ["opened", "synchronize", "reopened"];
}

function stepOf(v: unknown, i: number, job: string): WorkflowStep {
  if (!isObj(v)) throw new WorkflowSyntaxError(`jobs.${job}.steps[${i}] must be a map`);
  const run = typeof v.run === "string" ? v.run : undefined;
  const uses = typeof v.uses === "string" ? v.uses : undefined;
  if ((run === undefined) === (uses === undefined)) throw new WorkflowSyntaxError(`jobs.${job}.steps[${i}] needs exactly one of run: or uses:`);
  const name = typeof v.name === "string" ? v.name : run !== undefined ? `Run ${run.split("\n")[0]!.trim()}` : `Run ${uses}`;
  return {
    name,
    run,
    uses,
    shell: typeof v.shell === "string" ? v.shell : undefined,
    env: envMap(v.env, `jobs.${job}.steps[${i}]`),
    workingDirectory: typeof v["working-directory"] === "string" ? v["working-directory"] : undefined,
    ...(v.if === undefined ? {} : { if: String(v.if) }),
  };
}

/** Parses a workflow file; a file outside the subset throws WorkflowSyntaxError naming the key. */
export function parseWorkflow(path: string, text: string): Workflow {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new WorkflowSyntaxError(`${path}: not valid YAML: ${(err as Error).message}`);
  }
  if (!isObj(doc)) throw new WorkflowSyntaxError(`${path}: a workflow must be a YAML map`);
  const on = triggers(doc.on ?? doc[true as unknown as string]);
  const jobsRaw = doc.jobs;
  if (!isObj(jobsRaw) || Object.keys(jobsRaw).length === 0) throw new WorkflowSyntaxError(`${path}: jobs: must hold at least one job`);
  const jobs = Object.entries(jobsRaw).map(([key, j]): WorkflowJob => {
    if (!isObj(j) || !Array.isArray(j.steps)) throw new WorkflowSyntaxError(`${path}: jobs.${key}.steps must be a list`);
    for (const k of ["if", "needs", "strategy", "services", "container", "uses"]) {
      if (j[k] !== undefined)
        throw new WorkflowSyntaxError(
          `${path}: jobs.${key}.${k} is outside the local runner's subset (jobs run in file order; see server/forge-emulator/README.md)`,
        );
    }
    const t = j["timeout-minutes"];
    if (t !== undefined && (typeof t !== "number" || !(t > 0))) throw new WorkflowSyntaxError(`${path}: jobs.${key}.timeout-minutes must be a positive number`);
    return {
      key,
      name: typeof j.name === "string" ? j.name : key,
      env: envMap(j.env, `jobs.${key}`),
      timeoutMinutes: t ?? null,
      steps: j.steps.map((s, i) => stepOf(s, i, key)),
    };
  });
  const c = doc.concurrency;
  const concurrency =
    typeof c === "string"
      ? { group: c, cancelInProgress: false }
      : isObj(c) && typeof c.group === "string"
        ? { group: c.group, cancelInProgress: c["cancel-in-progress"] === true }
        : null;
  return {
    path,
    name: typeof doc.name === "string" ? doc.name : path,
    dispatchInputs: "workflow_dispatch" in on ? inputsOf(on.workflow_dispatch) : null,
    pullRequestTypes: "pull_request" in on ? pullRequestTypes(on.pull_request) : null,
    env: envMap(doc.env, "workflow"),
    concurrency,
    runName: typeof doc["run-name"] === "string" ? doc["run-name"] : null,
    jobs,
  };
}

export function actionsData(forge: ForgeEmulator): ActionsData {
  return (forge.state.data.actions ??= { workflows: {}, runs: [], nextRunNumber: 1, secrets: {} });
}

/** The workflow files at a commit, with their ids (allocated, and persisted, when first seen). */
export async function workflowFiles(forge: ForgeEmulator, sha: string): Promise<{ path: string; id: number; createdAt: string }[]> {
  const { stdout } = await forge.git.run(["ls-tree", "--name-only", `${sha}:${WORKFLOW_DIR}`], { okCodes: [128] });
  const data = actionsData(forge);
  const out = [];
  for (const file of stdout
    .split("\n")
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()) {
    const path = `${WORKFLOW_DIR}/${file}`;
    if (!data.workflows[path]) {
      data.workflows[path] = { id: forge.state.nextId(), createdAt: isoNow() };
      forge.state.changed();
    }
    out.push({ path, ...data.workflows[path]! });
  }
  return out;
}

/** The workflow a `{workflow_id}` names (its id or its file name) on the default branch, or 404. */
export async function findWorkflow(forge: ForgeEmulator, defaultSha: string, idOrFile: string): Promise<{ path: string; id: number; createdAt: string }> {
  const files = await workflowFiles(forge, defaultSha);
  const hit = files.find((f) => String(f.id) === idOrFile || f.path.slice(WORKFLOW_DIR.length + 1) === idOrFile);
  if (!hit) throw notFound();
  return hit;
}

export async function readWorkflow(forge: ForgeEmulator, sha: string, path: string): Promise<Workflow | null> {
  const { stdout, code } = await forge.git.run(["show", `${sha}:${path}`], { okCodes: [128] });
  if (code !== 0) return null;
  return parseWorkflow(path, stdout);
}

/** A dispatch's inputs checked and completed with defaults, or GitHub's 422. */
export function checkInputs(declared: Record<string, WorkflowInput>, given: unknown): Record<string, string | boolean | number> {
  if (given !== undefined && given !== null && !isObj(given)) throw new HttpError(422, "Invalid request.\n\nFor 'properties/inputs', is not an object.");
  const raw = (given ?? {}) as Obj;
  const unknown = Object.keys(raw).filter((k) => !(k in declared));
  if (unknown.length > 0) throw new HttpError(422, `Unexpected inputs provided: ${JSON.stringify(unknown)}`);
  const out: Record<string, string | boolean | number> = {};
  for (const [name, d] of Object.entries(declared)) {
    const v = raw[name];
    if (v === undefined || v === "") {
      if (d.default !== undefined)
        out[name] = d.type === "boolean" ? d.default === true || d.default === "true" : d.type === "number" ? Number(d.default) : String(d.default);
      else if (d.required) throw new HttpError(422, `Required input '${name}' not provided`);
      else out[name] = d.type === "boolean" ? false : "";
      continue;
    }
    const text = String(v);
    if (d.type === "boolean") {
      if (text !== "true" && text !== "false") throw new HttpError(422, `Provided value '${text}' for input '${name}' is not a boolean`);
      out[name] = text === "true";
    } else if (d.type === "number") {
      if (!Number.isFinite(Number(text))) throw new HttpError(422, `Provided value '${text}' for input '${name}' is not a number`);
      out[name] = Number(text);
    } else if (d.type === "choice") {
      if (!d.options!.includes(text)) throw new HttpError(422, `Provided value '${text}' for input '${name}' not in the list of allowed values`);
      out[name] = text;
    } else {
      out[name] = text;
    }
  }
  return out;
}
