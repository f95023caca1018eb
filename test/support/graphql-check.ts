// Checks GraphQL answers against the checked-in subset of GitHub's schema, the way
// test/support/openapi.ts checks REST answers against GitHub's OpenAPI description: every key
// in `data` must be a field the query selected and the schema declares on that type, every
// value must have the declared type (non-null, list, enum value, scalar kind), and abstract
// types must name a concrete member in `__typename`.
import {
  getNamedType,
  isAbstractType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  parse,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type SelectionSetNode,
} from "graphql";
import { schemaOf } from "../../server/forge-emulator/graphql-exec.js";
import { GITHUB_GRAPHQL_SUBSET } from "../../server/forge-emulator/graphql-subset.js";
import { api, type ApiResponse } from "./forge-fixtures.js";
import type { RunningForge } from "../../server/forge-emulator/index.js";

export const SUBSET = schemaOf(GITHUB_GRAPHQL_SUBSET);

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

/** The fields `selections` select on the object type `on` (fragments whose condition it meets included), by response key. */
function fieldsFor(
  doc: DocumentNode,
  on: GraphQLObjectType,
  set: SelectionSetNode | undefined,
  out: Map<string, { name: string; sets: SelectionSetNode[] }>,
): void {
  for (const s of set?.selections ?? []) {
    if (s.kind === Kind.FIELD) {
      const key = s.alias?.value ?? s.name.value;
      const prev = out.get(key);
      out.set(key, { name: s.name.value, sets: [...(prev?.sets ?? []), ...(s.selectionSet ? [s.selectionSet] : [])] });
      continue;
    }
    const frag =
      s.kind === Kind.INLINE_FRAGMENT
        ? s
        : doc.definitions.find((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === s.name.value);
    const cond = frag?.typeCondition ? SUBSET.getType(frag.typeCondition.name.value) : on;
    const applies = cond === on || (cond !== undefined && isAbstractType(cond) && SUBSET.isSubType(cond, on));
    if (frag && applies) fieldsFor(doc, on, frag.selectionSet, out);
  }
}

/** Problems with `data` as the answer to `query` (empty when it conforms). */
export function graphqlProblems(query: string, data: unknown): string[] {
  const doc = parse(query);
  const op = doc.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION)!;
  const problems: string[] = [];
  const value = (type: GraphQLOutputType, v: unknown, sets: SelectionSetNode[], path: string): void => {
    if (isNonNullType(type)) {
      if (v === null || v === undefined) problems.push(`${path}: null for a non-null field`);
      else value(type.ofType, v, sets, path);
      return;
    }
    if (v === null) return;
    if (v === undefined) {
      problems.push(`${path}: missing`);
      return;
    }
    if (isListType(type)) {
      if (!Array.isArray(v)) problems.push(`${path}: not a list`);
      else v.forEach((x, i) => value(type.ofType, x, sets, `${path}[${i}]`));
      return;
    }
    if (isScalarType(type)) {
      const check = SCALAR_CHECK[type.name];
      if (!check) problems.push(`${path}: scalar ${type.name} has no check here`);
      else if (!check(v)) problems.push(`${path}: ${JSON.stringify(v)} is not a ${type.name}`);
      return;
    }
    if (isEnumType(type)) {
      if (!type.getValues().some((e) => e.name === v)) problems.push(`${path}: ${JSON.stringify(v)} is not a ${type.name}`);
      return;
    }
    object(getNamedType(type) as GraphQLObjectType, v as Record<string, unknown>, sets, path);
  };
  const object = (def: GraphQLObjectType | ReturnType<typeof getNamedType>, v: Record<string, unknown>, sets: SelectionSetNode[], path: string): void => {
    let concrete: GraphQLObjectType;
    if (isAbstractType(def)) {
      const named = SUBSET.getType(String(v.__typename));
      if (!named || !isObjectType(named) || !SUBSET.isSubType(def, named)) {
        problems.push(`${path}: __typename ${JSON.stringify(v.__typename)} is not a ${def.name}`);
        return;
      }
      concrete = named;
    } else concrete = def as GraphQLObjectType;
    const selected = new Map<string, { name: string; sets: SelectionSetNode[] }>();
    for (const set of sets) fieldsFor(doc, concrete, set, selected);
    for (const key of Object.keys(v)) if (!selected.has(key)) problems.push(`${path}.${key}: not selected`);
    for (const [key, s] of selected) {
      if (s.name === "__typename") {
        if (v[key] !== concrete.name) problems.push(`${path}.${key}: ${JSON.stringify(v[key])}, expected ${concrete.name}`);
        continue;
      }
      const field = concrete.getFields()[s.name];
      if (!field) problems.push(`${path}.${key}: ${concrete.name} has no field ${s.name} in GitHub's schema`);
      else value(field.type, v[key], s.sets, `${path}.${key}`);
    }
  };
  const root = op.operation === "mutation" ? SUBSET.getMutationType() : SUBSET.getQueryType();
  if (data !== null && data !== undefined && root) object(root, data as Record<string, unknown>, [op.selectionSet], "data");
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
