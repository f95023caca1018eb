// Loading the fleet config: read `.github/afk.json`, merge overrides, validate against the one
// schema, and turn every problem into a message that names the key path and the fix.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { isAbsolute, join, relative, resolve } from "node:path";
import type { z } from "zod";
import { FleetConfigSchema, fleetConfigJsonSchema, type FleetConfig } from "../../schemas/config.js";
import { UsageError } from "../gh/errors.js";
import { nearest, nearestKey, normalizeKey } from "../../schemas/nearest.js";

export { editDistance } from "../../schemas/nearest.js";

/**
 * Where a repository commits its fleet config, relative to the repository root.
 *
 * - Committed with the code, so every host and every fleet instance working the repository
 *   follows one policy, and a change to it is reviewed like any other change.
 * - `.github/` is where repository automation already lives (workflows, dependabot.yml,
 *   CODEOWNERS); GitHub ignores files there that it does not know.
 * - JSON, so it needs no parser dependency and editors complete and check it against
 *   schemas/config.schema.json through `"$schema"`.
 *
 * Read it from a checkout of the base branch, never from a worker's worktree: a worker's
 * branch must not be able to change the policy (the gate command, say) that judges it.
 */
export const CONFIG_FILE_PATH = ".github/afk.json";

/** A config that cannot be used. `problems` holds one message per problem, each naming its key path. */
export class ConfigError extends UsageError {
  constructor(
    message: string,
    /** The file or flag the config came from, as shown in the message; null when unnamed. */
    readonly source: string | null,
    readonly problems: readonly string[],
    /** For malformed JSON: where the parser stopped (1-based). */
    readonly position: { line: number; column: number } | null = null,
  ) {
    super(message);
    // UsageError types `name` as the literal "UsageError", which a subclass cannot narrow to
    // another literal; set it at runtime so stack traces say what this is.
    Object.defineProperty(this, "name", { value: "ConfigError", enumerable: false, configurable: true, writable: true });
  }
}

const MAX_PROBLEMS_SHOWN = 8;

function configError(source: string | null | undefined, problems: string[], position: { line: number; column: number } | null = null): ConfigError {
  const where = source ? `config (${source})` : "config";
  const shown = problems.slice(0, MAX_PROBLEMS_SHOWN);
  const more = problems.length > shown.length ? `; and ${problems.length - shown.length} more` : "";
  return new ConfigError(`${where}: ${shown.join("; ")}${more}`, source ?? null, problems, position);
}

/** Validate a config a user wrote (already parsed JSON). Returns the canonical config. */
export function parseConfig(raw: unknown, source?: string): FleetConfig {
  const result = FleetConfigSchema.safeParse(raw === undefined ? {} : raw, { reportInput: true });
  if (!result.success) throw configError(source, formatZodIssues(result.error.issues));
  return result.data;
}

/**
 * One canonical config from the committed file and per-run overrides (a `project_start`
 * `config`, or `--set` flags): a deep merge in which overrides win and lists replace.
 * Problems are blamed on the file when the file alone is broken, else on the overrides.
 */
export function mergeConfig(fileConfig: unknown, overrides: unknown, sources: { file?: string; overrides?: string } = {}): FleetConfig {
  const fileSource = sources.file ?? CONFIG_FILE_PATH;
  const overrideSource = sources.overrides ?? "overrides";
  const file = fileConfig === undefined ? {} : fileConfig; // a file that says `null` is wrong, not absent
  const over = overrides ?? {};
  if (!isPlainObject(file)) return parseConfig(file, fileSource);
  if (!isPlainObject(over)) return parseConfig(over, overrideSource);
  const merged = FleetConfigSchema.safeParse(deepMerge(file, over), { reportInput: true });
  if (merged.success) return merged.data;
  parseConfig(file, fileSource); // throws when the file itself is at fault
  throw configError(overrideSource, formatZodIssues(merged.error.issues));
}

/** Parse the text of a config file; malformed JSON is reported with its line and column. */
export function parseConfigText(text: string, source: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === "") throw configError(source, ["the file is empty; write {} to use every default"]);
  try {
    return JSON.parse(body) as unknown;
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    const { reason, offset } = locateJsonError(body);
    const { line, column } = lineAndColumn(body, offset);
    throw configError(source, [`invalid JSON at line ${line}, column ${column}: ${reason}`], { line, column });
  }
}

/** Read a config file's JSON without validating it (so it can be merged first). */
export async function readConfigJson(path: string, label: string = displayPath(path)): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT" ? "file not found" : code === "EISDIR" ? "is a directory, not a file" : `cannot read the file (${code ?? (err as Error).message})`;
    throw configError(label, [why]);
  }
  return parseConfigText(text, label);
}

/** Read and validate one config file. */
export async function loadConfigFile(path: string, overrides?: unknown, overridesSource?: string): Promise<FleetConfig> {
  const label = displayPath(path);
  return mergeConfig(await readConfigJson(path, label), overrides, { file: label, overrides: overridesSource });
}

/**
 * The config of a checkout: its `.github/afk.json` if present, else every default, with
 * `overrides` merged on top. Pass a checkout of the base branch (see CONFIG_FILE_PATH).
 */
export async function loadRepoConfig(worktreeOrDir: string, overrides?: unknown, overridesSource?: string): Promise<FleetConfig> {
  const path = join(worktreeOrDir, CONFIG_FILE_PATH);
  if (!existsSync(path)) return mergeConfig({}, overrides, { overrides: overridesSource });
  return loadConfigFile(path, overrides, overridesSource);
}

/**
 * Turn `key.path=value` assignments (the CLI's `--set`) into an overrides object. The value
 * is read as JSON when it parses (numbers, true/false, null, lists) and the schema accepts
 * that type at the key; otherwise, where the key takes a string, as the plain text
 * (`gate.local_command=true` is the command "true", not the boolean).
 */
export function overridesFromAssignments(assignments: readonly string[], source = "--set"): Record<string, unknown> {
  let result: Record<string, unknown> = {};
  for (const assignment of assignments) {
    const eq = assignment.indexOf("=");
    const keyPath = eq < 0 ? "" : assignment.slice(0, eq).trim();
    if (!/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/.test(keyPath)) {
      throw configError(source, [`expected key.path=value (e.g. gate.ci=local), got ${JSON.stringify(assignment)}`]);
    }
    const text = assignment.slice(eq + 1);
    const keys = keyPath.split(".");
    const value = coerceByType(text, schemaAt(keys));
    let nested: unknown = value;
    for (const key of keys.reverse()) nested = setOwn({}, key, nested);
    result = deepMerge(result, nested as Record<string, unknown>);
  }
  return result;
}

// --- messages -----------------------------------------------------------------------------

/** One message per zod issue, each naming its key path; unknown keys get the nearest valid key. */
export function formatZodIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const problems: string[] = [];
  for (const issue of issues) {
    const path = issue.path.filter((p): p is string | number => typeof p !== "symbol");
    const at = formatPath(path);
    const input = (issue as { input?: unknown }).input;
    switch (issue.code) {
      case "unrecognized_keys":
        for (const key of issue.keys) problems.push(unknownKeyMessage(path, key));
        break;
      case "invalid_type": {
        const node = schemaAt(path);
        const orNull = node && typeIncludesNull(node) && issue.expected !== "null" ? " or null" : "";
        const expected = `${describeExpected(issue.expected)}${orNull}`;
        problems.push(at ? `${at}: expected ${expected}, got ${describeValue(input)}` : `expected the config to be ${expected}, got ${describeValue(input)}`);
        break;
      }
      case "invalid_value": {
        const values = issue.values.map((v) => JSON.stringify(v));
        const expected = values.length === 1 ? values[0] : `one of ${values.join(" | ")}`;
        const strings = issue.values.filter((v): v is string => typeof v === "string");
        const hint = typeof input === "string" ? nearest(input, strings) : null;
        problems.push(`${at || "config"}: expected ${expected}, got ${describeValue(input)}${hint ? ` (did you mean ${JSON.stringify(hint)}?)` : ""}`);
        break;
      }
      case "too_small":
      case "too_big": {
        const small = issue.code === "too_small";
        const bound = Number(small ? issue.minimum : issue.maximum);
        const exclusive = issue.inclusive === false;
        const origin = issue.origin;
        let rule: string;
        if (origin === "array" || origin === "set") {
          rule = small && bound <= 1 ? "must not be an empty list" : `must have ${small ? "at least" : "at most"} ${bound} item${bound === 1 ? "" : "s"}`;
        } else if (origin === "string") {
          rule = small && bound <= 1 ? "must not be empty" : `must be ${small ? "at least" : "at most"} ${bound} characters`;
        } else {
          rule = `must be ${small ? (exclusive ? "greater than" : "at least") : exclusive ? "less than" : "at most"} ${bound}`;
        }
        const got = origin === "array" || origin === "set" ? "" : `, got ${describeValue(input)}`;
        problems.push(`${at || "config"}: ${rule}${got}`);
        break;
      }
      case "invalid_format":
        problems.push(`${at || "config"}: ${issue.message}, got ${describeValue(input)}`);
        break;
      default:
        problems.push(`${at || "config"}: ${issue.message}`);
    }
  }
  return problems;
}

function unknownKeyMessage(parent: (string | number)[], key: string): string {
  const full = formatPath([...parent, key]);
  const siblings = Object.keys(schemaAt(parent)?.properties ?? {}).filter((k) => k !== "$schema");
  const near = nearestKey(key, siblings);
  if (near !== null) return `unknown key "${full}" (did you mean "${formatPath([...parent, near])}"?)`;
  // A key that exists, but in another group ("ttl_seconds" at the top instead of "lease.ttl_seconds").
  const elsewhere = allKeyPaths().filter((p) => normalizeKey(p[p.length - 1]!) === normalizeKey(key));
  if (elsewhere.length === 1) return `unknown key "${full}" (did you mean "${formatPath(elsewhere[0]!)}"?)`;
  return `unknown key "${full}" (valid keys${parent.length ? ` in ${formatPath(parent)}` : ""}: ${siblings.join(", ")})`;
}

function formatPath(path: readonly (string | number)[]): string {
  let out = "";
  for (const seg of path) out += typeof seg === "number" ? `[${seg}]` : out ? `.${seg}` : seg;
  return out;
}

function describeExpected(expected: string): string {
  switch (expected) {
    case "int":
      return "a whole number";
    case "number":
      return "a number";
    case "string":
      return "a string";
    case "boolean":
      return "true or false";
    case "array":
      return "a list";
    case "object":
      return "an object";
    default:
      return expected;
  }
}

function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  if (value !== null && typeof value === "object") return "an object";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** `text` as the type the schema node takes: parsed JSON when its type fits, else the text itself for a string key. */
function coerceByType(text: string, node: SchemaNode | undefined): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  if (!node) return parsed;
  const types = new Set([...[node.type ?? []].flat(), ...(node.anyOf ?? []).flatMap((n) => [n.type ?? []].flat())]);
  if (types.size === 0) return parsed;
  const jsonType =
    parsed === null ? "null" : Array.isArray(parsed) ? "array" : typeof parsed === "number" ? (Number.isInteger(parsed) ? "integer" : "number") : typeof parsed;
  const fits = types.has(jsonType) || (jsonType === "integer" && types.has("number"));
  return fits || !types.has("string") ? parsed : text;
}

// --- the JSON Schema as a map of keys (for suggestions and for "or null") ------------------

interface SchemaNode {
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
}

let jsonSchemaCache: SchemaNode | undefined;
const jsonSchema = (): SchemaNode => (jsonSchemaCache ??= fleetConfigJsonSchema() as SchemaNode);

function schemaAt(path: readonly (string | number)[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = jsonSchema();
  for (const seg of path) {
    if (!node) return undefined;
    const branch: SchemaNode = node.anyOf?.find((n) => n.properties || n.items) ?? node;
    node = typeof seg === "number" ? branch.items : branch.properties?.[seg];
  }
  return node;
}

function typeIncludesNull(node: SchemaNode): boolean {
  const types = Array.isArray(node.type) ? node.type : [node.type];
  return types.includes("null") || (node.anyOf ?? []).some((n) => n.type === "null");
}

/** Every key path outside lists, for "this key lives in another group" suggestions. */
function allKeyPaths(): string[][] {
  const out: string[][] = [];
  const walk = (node: SchemaNode, prefix: string[]) => {
    for (const [key, child] of Object.entries(node.properties ?? {})) {
      if (key === "$schema") continue;
      out.push([...prefix, key]);
      walk(child, [...prefix, key]);
    }
  };
  walk(jsonSchema(), []);
  return out;
}

// --- JSON helpers -----------------------------------------------------------------------

/**
 * Where and why a text is not JSON. JSON.parse says neither in a stable form (V8's message
 * changed between Node versions and sometimes carries no position), so scan it ourselves;
 * this runs only after JSON.parse has refused the text.
 */
export function locateJsonError(text: string): { offset: number; reason: string } {
  let i = 0;
  const fail = (reason: string, at = i): never => {
    throw Object.assign(new Error(reason), { jsonOffset: at });
  };
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };
  const unexpected = (what: string): never => {
    if (i >= text.length) return fail(`unexpected end of file, expected ${what}`);
    const c = text[i]!;
    if (c === "/") return fail("comments are not allowed in JSON");
    if (c === "'") return fail("JSON strings use double quotes");
    const word = /^[A-Za-z_][\w.-]*/.exec(text.slice(i, i + 40))?.[0];
    if (word) return fail(`unexpected word "${word}", expected ${what} (strings need double quotes)`);
    return fail(`unexpected ${JSON.stringify(c)}, expected ${what}`);
  };
  const string = () => {
    const start = i++;
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) fail("line break or control character inside a string");
      if (text[i] === "\\") {
        const esc = text[i + 1] ?? "";
        if (esc === "u" ? !/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6)) : !'"\\/bfnrt'.includes(esc) || esc === "") fail("invalid escape in a string");
        i += esc === "u" ? 6 : 2;
      } else i++;
    }
    if (i >= text.length) fail("unterminated string", start);
    i++;
  };
  const value = (depth: number): void => {
    if (depth > 500) fail("nested too deeply");
    ws();
    const c = text[i];
    if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      i++;
      ws();
      if (text[i] === close) {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (c === "{") {
          if (text[i] !== '"') unexpected("a double-quoted property name");
          string();
          ws();
          if (text[i] !== ":") unexpected('":" after the property name');
          i++;
        }
        value(depth + 1);
        ws();
        if (text[i] === ",") {
          const comma = i++;
          ws();
          if (text[i] === close) fail(`trailing comma before "${close}"`, comma);
          continue;
        }
        if (text[i] === close) {
          i++;
          return;
        }
        unexpected(`"," or "${close}"`);
      }
    }
    if (c === '"') return string();
    const number = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    number.lastIndex = i;
    if (c !== undefined && /[-\d]/.test(c) && number.test(text)) {
      i = number.lastIndex;
      return;
    }
    for (const literal of ["true", "false", "null"]) {
      if (text.startsWith(literal, i)) {
        i += literal.length;
        return;
      }
    }
    unexpected("a value");
  };
  try {
    value(0);
    ws();
    if (i < text.length) fail("unexpected content after the end of the JSON value");
  } catch (err) {
    const offset = (err as { jsonOffset?: number }).jsonOffset;
    if (offset !== undefined) return { offset, reason: (err as Error).message };
    throw err;
  }
  return { offset: text.length, reason: "not valid JSON" };
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const upTo = text.slice(0, Math.min(offset, text.length));
  const lines = upTo.split("\n");
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

// Own-property assignment: a "__proto__" key from JSON stays a plain key (and is then reported
// as unknown) instead of replacing the prototype.
function setOwn(target: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return target;
}

/** Objects merge key by key; anything else (lists included) from `over` replaces `base`. */
function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(base)) setOwn(out, key, value);
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    const prior = Object.prototype.hasOwnProperty.call(out, key) ? out[key] : undefined;
    setOwn(out, key, isPlainObject(prior) && isPlainObject(value) ? deepMerge(prior, value) : value);
  }
  return out;
}

/** A path as a user would type it: relative to the working directory when inside it. */
function displayPath(path: string): string {
  const rel = relative(process.cwd(), resolve(path));
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : resolve(path);
}
