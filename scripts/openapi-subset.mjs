#!/usr/bin/env node
// Generates test/openapi/github-subset.json: the part of GitHub's official OpenAPI
// description (@octokit/openapi, generated/api.github.com.json) that covers the REST
// operations afk-mcp and the local forge use, rewritten so that ajv 8 can compile it as
// JSON Schema (OpenAPI 3.0's `nullable: true` becomes `type: [..., "null"]` / `anyOf`).
//
// Run by hand: `npm run gen:openapi` (or `node scripts/openapi-subset.mjs [version]`).
// The package is 385 MB unpacked, so it is NOT a dependency: `npm pack` fetches the tarball
// from the npm registry into a temporary directory and tar extracts just the two files
// needed. Writes test/openapi/github-subset.json and test/openapi/LICENSE.

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE = "@octokit/openapi";
const VERSION = process.argv[2] ?? "23.0.2";
const SPEC_FILE = "package/generated/api.github.com.json";
const LICENSE_FILE = "package/LICENSE";

/** The operations kept, as "METHODS /template" (methods comma-separated). */
const OPERATIONS = [
  "GET /user",
  "GET /rate_limit",
  "GET /repos/{owner}/{repo}",
  "GET /repos/{owner}/{repo}/activity",
  "GET,POST /repos/{owner}/{repo}/issues",
  "GET,PATCH /repos/{owner}/{repo}/issues/{issue_number}",
  "GET,POST /repos/{owner}/{repo}/issues/{issue_number}/labels",
  "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
  "GET,POST /repos/{owner}/{repo}/labels",
  "GET /repos/{owner}/{repo}/labels/{name}",
  "GET,POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
  "GET,PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
  "GET,POST /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by",
  "DELETE /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by/{issue_id}",
  "GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocking",
  "GET,POST /repos/{owner}/{repo}/issues/{issue_number}/sub_issues",
  "DELETE /repos/{owner}/{repo}/issues/{issue_number}/sub_issue",
  "GET /repos/{owner}/{repo}/issues/{issue_number}/parent",
  "GET,POST /repos/{owner}/{repo}/pulls",
  "GET,PATCH /repos/{owner}/{repo}/pulls/{pull_number}",
  "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge",
  "PUT /repos/{owner}/{repo}/pulls/{pull_number}/update-branch",
  "GET,POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
  "GET,POST /repos/{owner}/{repo}/pulls/{pull_number}/comments",
  "GET /repos/{owner}/{repo}/commits/{ref}/check-runs",
  "POST /repos/{owner}/{repo}/check-runs",
  "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}",
  "GET /repos/{owner}/{repo}/commits/{ref}/status",
  "GET /repos/{owner}/{repo}/commits/{ref}/statuses",
  "POST /repos/{owner}/{repo}/statuses/{sha}",
  "GET /repos/{owner}/{repo}/rules/branches/{branch}",
  "POST /repos/{owner}/{repo}/rulesets",
  "GET /repos/{owner}/{repo}/branches/{branch}",
  "GET,PUT /repos/{owner}/{repo}/branches/{branch}/protection",
  "GET /repos/{owner}/{repo}/git/matching-refs/{ref}",
  "GET /repos/{owner}/{repo}/git/ref/{ref}",
  "POST /repos/{owner}/{repo}/git/refs",
  "PATCH,DELETE /repos/{owner}/{repo}/git/refs/{ref}",
  "GET /repos/{owner}/{repo}/actions/workflows",
  "GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}",
  "POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches",
  "GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs",
  "GET /repos/{owner}/{repo}/actions/runs",
  "GET /repos/{owner}/{repo}/actions/runs/{run_id}",
  "POST /repos/{owner}/{repo}/actions/runs/{run_id}/cancel",
  "POST /repos/{owner}/{repo}/actions/runs/{run_id}/rerun-failed-jobs",
  "GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs",
  "GET /repos/{owner}/{repo}/actions/jobs/{job_id}",
  "POST /repos/{owner}/{repo}/actions/jobs/{job_id}/rerun",
];

/** Schemas kept even if no listed operation references them (used as fallbacks). */
const EXTRA_SCHEMAS = ["basic-error", "validation-error"];

/** Schema keywords dropped to keep the subset small: documentation only, no validation. */
const DROPPED_SCHEMA_KEYS = new Set(["description", "example", "examples", "externalDocs"]);
/** Vendor extensions (x-github, x-github-breaking-changes, ...) are dropped from schemas too. */
const isDroppedSchemaKey = (key) => DROPPED_SCHEMA_KEYS.has(key) || key.startsWith("x-");

const METHOD_ORDER = ["get", "put", "post", "patch", "delete"];
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT_DIR = join(ROOT, "test", "openapi");

function fail(message) {
  console.error(`openapi-subset: ${message}`);
  process.exit(1);
}

function run(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], ...opts });
}

// ---------------------------------------------------------------------------------------
// Fetch

function fetchPackage(tmp) {
  const out = run("npm", ["pack", `${PACKAGE}@${VERSION}`, "--pack-destination", tmp, "--json", "--silent"], { cwd: tmp });
  const info = JSON.parse(out)[0];
  if (!info?.filename) fail(`npm pack gave no file name: ${out.slice(0, 300)}`);
  const tarball = join(tmp, info.filename.replace(/^@/, "").replace(/\//g, "-"));
  run("tar", ["-xzf", tarball, "-C", tmp, SPEC_FILE, LICENSE_FILE, "package/package.json"]);
  rmSync(tarball, { force: true });
  let published = null;
  try {
    published = JSON.parse(run("npm", ["view", `${PACKAGE}@${VERSION}`, "time", "--json"]))[VERSION] ?? null;
  } catch {
    // the publication date is informative only
  }
  return {
    spec: JSON.parse(readFileSync(join(tmp, SPEC_FILE), "utf8")),
    license: readFileSync(join(tmp, LICENSE_FILE), "utf8"),
    pkg: JSON.parse(readFileSync(join(tmp, "package/package.json"), "utf8")),
    integrity: info.integrity ?? null,
    published,
  };
}

// ---------------------------------------------------------------------------------------
// Subset

function refName(ref, kind) {
  const prefix = `#/components/${kind}/`;
  if (typeof ref !== "string" || !ref.startsWith(prefix)) return null;
  return decodeURIComponent(ref.slice(prefix.length)).replace(/~1/g, "/").replace(/~0/g, "~");
}

function resolve(spec, obj, kind) {
  if (obj && typeof obj === "object" && "$ref" in obj) {
    const name = refName(obj.$ref, kind);
    const target = name === null ? undefined : spec.components?.[kind]?.[name];
    if (target === undefined) fail(`unresolvable ${obj.$ref}`);
    return { name, target };
  }
  return { name: null, target: obj };
}

/** Keeps only a response's description and its JSON schema (drops examples, headers, links). */
function trimResponse(resp) {
  const out = { description: resp.description ?? "" };
  const content = resp.content ?? {};
  const jsonTypes = Object.keys(content).filter((t) => t === "application/json" || /\+json$/.test(t));
  // GitHub's REST API answers application/json; other media types are alternative
  // representations (diff, patch, sha) that the forge does not serve.
  const type = jsonTypes.includes("application/json") ? "application/json" : jsonTypes[0];
  if (type && content[type]?.schema) out.content = { "application/json": { schema: content[type].schema } };
  return out;
}

function isJsonPointerRef(v) {
  return typeof v === "string" && v.startsWith("#/");
}

/** Collects "#/components/schemas/..." references found anywhere under `value`. */
function collectSchemaRefs(value, into) {
  if (Array.isArray(value)) {
    for (const v of value) collectSchemaRefs(v, into);
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "$ref" && isJsonPointerRef(v)) {
        const name = refName(v, "schemas");
        if (name === null) fail(`unexpected reference ${v} inside a schema`);
        into.add(name);
      } else {
        collectSchemaRefs(v, into);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// OpenAPI 3.0 schema -> JSON Schema (draft-07, as ajv 8 reads it)

const COMPOSITE = ["allOf", "anyOf", "oneOf"];

/** Rewrites one schema (deeply): `nullable`, dropped documentation keys. Returns a new object. */
function convertSchema(schema) {
  if (Array.isArray(schema)) return schema.map(convertSchema);
  if (!schema || typeof schema !== "object") return schema;
  const out = {};
  for (const [key, value] of Object.entries(schema)) {
    if (isDroppedSchemaKey(key) || key === "nullable") continue;
    if (key === "properties" || key === "patternProperties" || key === "definitions") {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, convertSchema(v)]));
    } else if (key === "items" || key === "additionalProperties" || key === "not" || key === "additionalItems") {
      out[key] = typeof value === "object" ? convertSchema(value) : value;
    } else if (COMPOSITE.includes(key)) {
      out[key] = value.map(convertSchema);
    } else {
      out[key] = value; // type, enum, required, format, $ref, ... (no sub-schemas)
    }
  }
  if (schema.nullable !== true) return out;
  return makeNullable(out);
}

/**
 * OpenAPI 3.0 `nullable: true` means "or null". A plain `type` (without $ref or
 * composition) takes "null" as a second type, and an `enum` gets a null member; in every
 * other case -- no type at all, `$ref` with siblings, allOf/anyOf/oneOf -- the schema is
 * wrapped: `{anyOf: [schema, {type: "null"}]}`.
 */
function makeNullable(s) {
  const simple = typeof s.type === "string" && !("$ref" in s) && !COMPOSITE.some((k) => k in s) && !("not" in s);
  if (simple) {
    const r = { ...s, type: [s.type, "null"] };
    if (Array.isArray(s.enum) && !s.enum.includes(null)) r.enum = [...s.enum, null];
    return r;
  }
  if (Array.isArray(s.type)) {
    if (!("$ref" in s) && !COMPOSITE.some((k) => k in s) && !("not" in s)) {
      const r = { ...s, type: s.type.includes("null") ? s.type : [...s.type, "null"] };
      if (Array.isArray(s.enum) && !s.enum.includes(null)) r.enum = [...s.enum, null];
      return r;
    }
  }
  // Keep the human-readable title on the outside; everything that constrains goes inside.
  const { title, ...inner } = s;
  const r = {};
  if (title !== undefined) r.title = title;
  r.anyOf = [inner, { type: "null" }];
  return r;
}

/** Sanity check: no `nullable` key left anywhere in schema positions. */
function assertNoNullable(schema, where) {
  if (Array.isArray(schema)) return schema.forEach((s, i) => assertNoNullable(s, `${where}/${i}`));
  if (!schema || typeof schema !== "object") return;
  if ("nullable" in schema) fail(`nullable left at ${where}`);
  for (const key of ["properties", "patternProperties", "definitions"]) {
    for (const [k, v] of Object.entries(schema[key] ?? {})) assertNoNullable(v, `${where}/${key}/${k}`);
  }
  for (const key of ["items", "additionalProperties", "not", "additionalItems", ...COMPOSITE]) {
    if (schema[key] && typeof schema[key] === "object") assertNoNullable(schema[key], `${where}/${key}`);
  }
}

// ---------------------------------------------------------------------------------------
// Output: JSON, indented, but short objects/arrays on one line (compact, still diffable)

function format(value, indent = "", width = 110) {
  const flat = JSON.stringify(value);
  if (flat === undefined) return "null";
  if (value === null || typeof value !== "object" || indent.length + flat.length <= width) return flat;
  const next = indent + " ";
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((v) => next + format(v, next, width)).join(",\n")}\n${indent}]`;
  }
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return "{}";
  return `{\n${entries.map(([k, v]) => `${next}${JSON.stringify(k)}: ${format(v, next, width)}`).join(",\n")}\n${indent}}`;
}

// ---------------------------------------------------------------------------------------

function main() {
  const tmp = mkdtempSync(join(tmpdir(), "openapi-subset-"));
  let fetched;
  try {
    fetched = fetchPackage(tmp);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const { spec, license, pkg, integrity, published } = fetched;
  if (!/^3\.0\./.test(spec.openapi)) fail(`expected OpenAPI 3.0.x, got ${spec.openapi}`);

  const wanted = [];
  for (const line of OPERATIONS) {
    const [methods, template] = line.split(" ");
    for (const m of methods.split(",")) wanted.push({ method: m.toLowerCase(), template });
  }

  const missing = [];
  const paths = {};
  const responseNames = new Set();
  const schemaNames = new Set(EXTRA_SCHEMAS);
  for (const { method, template } of wanted) {
    const item = spec.paths[template];
    const op = item?.[method];
    if (!op) {
      missing.push(`${method.toUpperCase()} ${template}`);
      continue;
    }
    const params = [...(item.parameters ?? []), ...(op.parameters ?? [])]
      .map((p) => resolve(spec, p, "parameters").target)
      .filter((p) => p.in === "path")
      .map((p) => {
        const kept = { name: p.name, in: "path", required: true, schema: convertSchema(p.schema ?? {}) };
        if (p["x-multi-segment"]) kept["x-multi-segment"] = true;
        return kept;
      });
    const responses = {};
    for (const status of Object.keys(op.responses ?? {}).sort()) {
      const raw = op.responses[status];
      const { name, target } = resolve(spec, raw, "responses");
      if (name !== null) {
        responseNames.add(name);
        responses[status] = { $ref: raw.$ref };
      } else {
        responses[status] = trimResponse(target);
      }
      collectSchemaRefs(trimResponse(target).content, schemaNames);
    }
    paths[template] ??= {};
    paths[template][method] = {
      operationId: op.operationId,
      summary: op.summary,
      ...(op.externalDocs?.url ? { externalDocs: { url: op.externalDocs.url } } : {}),
      parameters: params,
      responses,
    };
  }
  if (missing.length) fail(`operations missing from ${PACKAGE}@${VERSION}: ${missing.join("; ")}`);

  // Transitive closure of referenced schemas.
  const queue = [...schemaNames];
  while (queue.length) {
    const name = queue.pop();
    const schema = spec.components.schemas[name];
    if (!schema) fail(`missing schema #/components/schemas/${name}`);
    const refs = new Set();
    collectSchemaRefs(schema, refs);
    for (const r of refs) {
      if (!schemaNames.has(r)) {
        schemaNames.add(r);
        queue.push(r);
      }
    }
  }

  const schemas = {};
  for (const name of [...schemaNames].sort()) {
    schemas[name] = convertSchema(spec.components.schemas[name]);
    assertNoNullable(schemas[name], `#/components/schemas/${name}`);
  }
  const responsesOut = {};
  for (const name of [...responseNames].sort()) {
    responsesOut[name] = trimResponse(spec.components.responses[name]);
  }
  // Convert inline response schemas too (those not behind a component reference).
  const sortedPaths = {};
  for (const template of Object.keys(paths).sort()) {
    sortedPaths[template] = {};
    for (const m of METHOD_ORDER) {
      const op = paths[template][m];
      if (!op) continue;
      for (const r of Object.values(op.responses)) {
        const c = r.content?.["application/json"];
        if (c) c.schema = convertSchema(c.schema);
      }
      sortedPaths[template][m] = op;
    }
  }
  for (const r of Object.values(responsesOut)) {
    const c = r.content?.["application/json"];
    if (c) c.schema = convertSchema(c.schema);
  }

  const subset = {
    openapi: spec.openapi,
    info: { title: spec.info.title, version: spec.info.version, description: "Subset for afk-mcp's forge conformance tests." },
    "x-afk-source": {
      package: `${PACKAGE}@${pkg.version}`,
      file: SPEC_FILE.replace(/^package\//, ""),
      integrity,
      published,
      generated: new Date().toISOString().slice(0, 10),
      generator: "scripts/openapi-subset.mjs (npm run gen:openapi)",
      transformations: [
        "kept only the listed operations, their path parameters and their JSON response schemas",
        "kept the referenced #/components/schemas and #/components/responses (transitively); dropped examples, headers, parameters",
        "dropped schema keys: " + [...DROPPED_SCHEMA_KEYS, "x-*"].join(", "),
        'nullable: true -> type: [T, "null"] (enum gets null), or anyOf: [schema, {type: "null"}] when there is no single type, a $ref or allOf/anyOf/oneOf',
      ],
      operations: wanted.length,
    },
    paths: sortedPaths,
    components: { responses: responsesOut, schemas },
  };

  mkdirSync(OUT_DIR, { recursive: true });
  const text = format(subset) + "\n";
  writeFileSync(join(OUT_DIR, "github-subset.json"), text);
  const licenseText =
    `The file github-subset.json in this directory is derived from generated/api.github.com.json\n` +
    `in the npm package ${PACKAGE}@${pkg.version} (https://github.com/octokit/openapi),\n` +
    `trimmed and converted by scripts/openapi-subset.mjs. That package's license follows.\n\n` +
    license.trimEnd() +
    "\n";
  writeFileSync(join(OUT_DIR, "LICENSE"), licenseText);

  console.error(
    `openapi-subset: ${PACKAGE}@${pkg.version}: ${wanted.length} operations, ` +
      `${Object.keys(schemas).length} schemas, ${Object.keys(responsesOut).length} shared responses, ` +
      `${(text.length / 1024).toFixed(0)} KiB -> test/openapi/github-subset.json`,
  );
}

// Importable (for checking the conversion by hand) without fetching anything.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
export { convertSchema };
