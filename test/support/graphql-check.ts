// Checks GraphQL answers against the checked-in subset of GitHub's schema, the way
// test/support/openapi.ts checks REST answers against GitHub's OpenAPI description: every key
// in `data` must be a field the query selected and the schema declares on that type, every
// value must have the declared type (non-null, list, enum value, scalar kind), and abstract
// types must name a concrete member in `__typename`.
import { parseDocument, parseSchema, type Selection, type TypeDef, type TypeRef } from "../../server/localforge/graphql-parse.js";
import { GITHUB_GRAPHQL_SUBSET } from "../../server/localforge/graphql-subset.js";
import { api, type ApiResponse } from "./forge-fixtures.js";
import type { RunningForge } from "../../server/localforge/index.js";

export const SUBSET = parseSchema(GITHUB_GRAPHQL_SUBSET);

const SCALAR_CHECK: Record<string, (v: unknown) => boolean> = {
  String: (v) => typeof v === "string",
  ID: (v) => typeof v === "string",
  Int: (v) => Number.isInteger(v),
  Float: (v) => typeof v === "number",
  Boolean: (v) => typeof v === "boolean",
  DateTime: (v) => typeof v === "string" && !Number.isNaN(Date.parse(v as string)),
  GitObjectID: (v) => typeof v === "string" && /^[0-9a-f]{40}$/.test(v as string),
  URI: (v) => typeof v === "string",
};

function fieldsFor(
  doc: ReturnType<typeof parseDocument>,
  typeName: string,
  selections: Selection[],
  out: Map<string, { name: string; selections: Selection[] }>,
): void {
  for (const s of selections) {
    if (s.kind === "field") {
      const prev = out.get(s.alias ?? s.name);
      out.set(s.alias ?? s.name, { name: s.name, selections: [...(prev?.selections ?? []), ...(s.selections ?? [])] });
    } else {
      const on = s.kind === "inline" ? s.on : (doc.fragments.get(s.name)?.on ?? null);
      const sel = s.kind === "inline" ? s.selections : (doc.fragments.get(s.name)?.selections ?? []);
      const cond = on ? SUBSET.get(on) : undefined;
      const applies =
        on === null ||
        on === typeName ||
        (cond?.kind === "union" && cond.members.includes(typeName)) ||
        (cond?.kind === "interface" && (SUBSET.get(typeName)?.interfaces.includes(on) ?? false));
      if (applies) fieldsFor(doc, typeName, sel, out);
    }
  }
}

/** Problems with `data` as the answer to `query` (empty when it conforms). */
export function graphqlProblems(query: string, data: unknown): string[] {
  const doc = parseDocument(query);
  const op = doc.operations[0]!;
  const problems: string[] = [];
  const value = (type: TypeRef, v: unknown, selections: Selection[], path: string): void => {
    if (type.kind === "nonnull") {
      if (v === null || v === undefined) problems.push(`${path}: null for a non-null field`);
      else value(type.of, v, selections, path);
      return;
    }
    if (v === null) return;
    if (v === undefined) {
      problems.push(`${path}: missing`);
      return;
    }
    if (type.kind === "list") {
      if (!Array.isArray(v)) problems.push(`${path}: not a list`);
      else v.forEach((x, i) => value(type.of, x, selections, `${path}[${i}]`));
      return;
    }
    const def: TypeDef | undefined = SUBSET.get(type.name);
    const scalar = SCALAR_CHECK[type.name];
    if (scalar) {
      if (!scalar(v)) problems.push(`${path}: ${JSON.stringify(v)} is not a ${type.name}`);
      return;
    }
    if (!def) {
      problems.push(`${path}: type ${type.name} is not in GitHub's schema subset`);
      return;
    }
    if (def.kind === "enum") {
      if (!def.values.includes(v as string)) problems.push(`${path}: ${JSON.stringify(v)} is not a ${type.name}`);
      return;
    }
    object(def, v as Record<string, unknown>, selections, path);
  };
  const object = (def: TypeDef, v: Record<string, unknown>, selections: Selection[], path: string): void => {
    let concrete = def;
    if (def.kind !== "object") {
      const named = SUBSET.get(String(v.__typename));
      if (!named || named.kind !== "object" || !(def.kind === "union" ? def.members.includes(named.name) : named.interfaces.includes(def.name))) {
        problems.push(`${path}: __typename ${JSON.stringify(v.__typename)} is not a ${def.name}`);
        return;
      }
      concrete = named;
    }
    const selected = new Map<string, { name: string; selections: Selection[] }>();
    fieldsFor(doc, concrete.name, selections, selected);
    for (const key of Object.keys(v)) if (!selected.has(key)) problems.push(`${path}.${key}: not selected`);
    for (const [key, s] of selected) {
      if (s.name === "__typename") {
        if (v[key] !== concrete.name) problems.push(`${path}.${key}: ${JSON.stringify(v[key])}, expected ${concrete.name}`);
        continue;
      }
      const field = concrete.fields.get(s.name);
      if (!field) problems.push(`${path}.${key}: ${concrete.name} has no field ${s.name} in GitHub's schema`);
      else value(field.type, v[key], s.selections, `${path}.${key}`);
    }
  };
  const root = SUBSET.get(op.kind === "query" ? "Query" : "Mutation")!;
  if (data !== null && data !== undefined) object(root, data as Record<string, unknown>, op.selections, "data");
  return problems;
}

/** One GraphQL request to the forge; throws if its data do not conform to GitHub's schema. */
export async function gql(forge: RunningForge, query: string, variables: Record<string, unknown> = {}, token?: string): Promise<ApiResponse> {
  const r = await api(forge, "POST", "/graphql", { query, variables }, token === undefined ? {} : { token });
  if (r.status === 200) {
    const problems = graphqlProblems(query, r.body.data);
    if (problems.length > 0) throw new Error(`the forge's GraphQL answer does not conform to GitHub's schema:\n${problems.join("\n")}`);
  }
  return r;
}
