// Runs a GraphQL document against a schema (the checked-in subset of GitHub's) and plain
// resolver objects: the document is validated first (unknown fields, arguments and types are
// refused with GitHub's messages), then every value is completed by its declared type, so an
// answer can never carry a field or an enum value GitHub's schema does not have.
import {
  namedType,
  parseDocument,
  printType,
  GraphQLSyntaxError,
  type ExecutableDocument,
  type Location,
  type Selection,
  type TypeDef,
  type TypeRef,
  type Value,
} from "./graphql-parse.js";

/** A resolver object: `__typename` for abstract types, fields as values or functions of the arguments. */
export type Resolved = { __typename?: string; [field: string]: unknown };

export interface GraphQLErrorEntry {
  message: string;
  type?: string;
  path?: Array<string | number>;
  locations?: Location[];
  extensions?: Record<string, unknown>;
}

export interface GraphQLResult {
  data?: Record<string, unknown> | null;
  errors?: GraphQLErrorEntry[];
}

/** What a resolver throws for a field that cannot be resolved (GitHub's `type`: NOT_FOUND, FORBIDDEN, UNPROCESSABLE, ...). */
export class GraphQLFieldError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

class NullBubble extends Error {}

type Schema = Map<string, TypeDef>;

const BUILTIN_SCALARS = new Set(["String", "Int", "Float", "Boolean", "ID"]);

function typeOf(schema: Schema, name: string): TypeDef | null {
  if (BUILTIN_SCALARS.has(name)) return { kind: "scalar", name, fields: new Map(), interfaces: [], members: [], values: [] };
  return schema.get(name) ?? null;
}

/** Whether an object type `concrete` satisfies a fragment's type condition `on`. */
function applies(schema: Schema, on: string | null, concrete: string): boolean {
  if (on === null || on === concrete) return true;
  const cond = schema.get(on);
  if (!cond) return false;
  if (cond.kind === "union") return cond.members.includes(concrete);
  if (cond.kind === "interface") return schema.get(concrete)?.interfaces.includes(on) ?? false;
  return false;
}

function validate(
  schema: Schema,
  doc: ExecutableDocument,
  opName: string,
  typeName: string,
  selections: Selection[],
  path: string[],
  errors: GraphQLErrorEntry[],
): void {
  const def = typeOf(schema, typeName);
  if (!def) return;
  for (const s of selections) {
    if (s.kind === "spread") {
      const frag = doc.fragments.get(s.name);
      if (!frag)
        errors.push({
          message: `Fragment ${s.name} was used, but not defined`,
          locations: [s.loc],
          path,
          extensions: { code: "useAndDefineFragment", fragmentName: s.name },
        });
      else if (!schema.has(frag.on))
        errors.push({
          message: `No such type ${frag.on}, so it can't be a fragment condition`,
          path,
          extensions: { code: "undefinedType", typeName: frag.on },
        });
      else validate(schema, doc, opName, frag.on, frag.selections, path, errors);
      continue;
    }
    if (s.kind === "inline") {
      if (s.on !== null && !schema.has(s.on)) {
        errors.push({ message: `No such type ${s.on}, so it can't be a fragment condition`, path, extensions: { code: "undefinedType", typeName: s.on } });
        continue;
      }
      validate(schema, doc, opName, s.on ?? typeName, s.selections, path, errors);
      continue;
    }
    const here = [...path, s.alias ?? s.name];
    if (s.name === "__typename") continue;
    const field = def.kind === "object" || def.kind === "interface" ? def.fields.get(s.name) : undefined;
    if (!field) {
      errors.push({
        message: `Field '${s.name}' doesn't exist on type '${typeName}'`,
        path: here,
        locations: [s.loc],
        extensions: { code: "undefinedField", typeName, fieldName: s.name },
      });
      continue;
    }
    for (const arg of Object.keys(s.args)) {
      if (!field.args.has(arg)) {
        errors.push({
          message: `Field '${s.name}' doesn't accept argument '${arg}'`,
          path: here,
          locations: [s.loc],
          extensions: { code: "argumentNotAccepted", name: s.name, typeName: "Field", argumentName: arg },
        });
      }
    }
    for (const [arg, a] of field.args) {
      if (a.type.kind === "nonnull" && a.defaultValue === null && s.args[arg] === undefined) {
        errors.push({
          message: `Field '${s.name}' is missing required arguments: ${arg}`,
          path: here,
          locations: [s.loc],
          extensions: { code: "missingRequiredArguments", className: "Field", name: s.name, arguments: arg },
        });
      }
    }
    const target = typeOf(schema, namedType(field.type));
    const leaf = target === null || target.kind === "scalar" || target.kind === "enum";
    if (leaf && s.selections) {
      errors.push({
        message: `Selections can't be made on ${target?.kind === "enum" ? "enums" : "scalars"} (field '${s.name}' returns ${namedType(field.type)} but has selections [${s.selections.map((x) => (x.kind === "field" ? x.name : "...")).join(", ")}])`,
        path: here,
        locations: [s.loc],
        extensions: { code: "selectionMismatch", nodeName: `field '${s.name}'` },
      });
    } else if (!leaf && !s.selections) {
      errors.push({
        message: `Field must have selections (field '${s.name}' returns ${namedType(field.type)} but has no selections. Did you mean '${s.name} { ... }'?)`,
        path: here,
        locations: [s.loc],
        extensions: { code: "selectionMismatch", nodeName: `field '${s.name}'` },
      });
    } else if (!leaf && s.selections) {
      validate(schema, doc, opName, namedType(field.type), s.selections, here, errors);
    }
  }
}

function argValue(v: Value, variables: Record<string, unknown>): unknown {
  switch (v.kind) {
    case "var":
      return variables[v.name] ?? null;
    case "null":
      return null;
    case "list":
      return v.values.map((x) => argValue(x, variables));
    case "object":
      return Object.fromEntries(Object.entries(v.fields).map(([k, x]) => [k, argValue(x, variables)]));
    default:
      return v.value;
  }
}

class Executor {
  readonly errors: GraphQLErrorEntry[] = [];

  constructor(
    private readonly schema: Schema,
    private readonly doc: ExecutableDocument,
    private readonly variables: Record<string, unknown>,
  ) {}

  /** Fields of `selections` that apply to the object type `typeName`, grouped by response key. */
  private collect(
    typeName: string,
    selections: Selection[],
    out = new Map<string, Extract<Selection, { kind: "field" }>[]>(),
  ): Map<string, Extract<Selection, { kind: "field" }>[]> {
    for (const s of selections) {
      if (s.kind === "field") {
        const key = s.alias ?? s.name;
        out.set(key, [...(out.get(key) ?? []), s]);
      } else if (s.kind === "inline") {
        if (applies(this.schema, s.on, typeName)) this.collect(typeName, s.selections, out);
      } else {
        const frag = this.doc.fragments.get(s.name);
        if (frag && applies(this.schema, frag.on, typeName)) this.collect(typeName, frag.selections, out);
      }
    }
    return out;
  }

  async object(typeName: string, source: Resolved, selections: Selection[], path: Array<string | number>): Promise<Record<string, unknown>> {
    const def = this.schema.get(typeName)!;
    const out: Record<string, unknown> = {};
    for (const [key, nodes] of this.collect(typeName, selections)) {
      const node = nodes[0]!;
      const here = [...path, key];
      if (node.name === "__typename") {
        out[key] = typeName;
        continue;
      }
      const field = def.fields.get(node.name)!;
      const args: Record<string, unknown> = {};
      for (const [name, a] of field.args) {
        const given = node.args[name];
        const value = given === undefined ? (a.defaultValue ? argValue(a.defaultValue, {}) : undefined) : argValue(given, this.variables);
        if (value !== undefined) args[name] = value;
      }
      const sub = nodes.flatMap((n) => n.selections ?? []);
      try {
        const raw = source[node.name];
        const value = typeof raw === "function" ? await (raw as (a: Record<string, unknown>) => unknown).call(source, args) : raw;
        out[key] = await this.complete(field.type, value, sub, here, node.loc);
      } catch (error) {
        if (error instanceof GraphQLFieldError) this.errors.push({ type: error.type, path: here, locations: [node.loc], message: error.message });
        else if (!(error instanceof NullBubble)) throw error;
        if (field.type.kind === "nonnull") throw new NullBubble();
        out[key] = null;
      }
    }
    return out;
  }

  private async complete(type: TypeRef, value: unknown, selections: Selection[], path: Array<string | number>, loc: Location): Promise<unknown> {
    if (type.kind === "nonnull") {
      const inner = await this.complete(type.of, value, selections, path, loc);
      if (inner === null) {
        this.errors.push({ message: `Cannot return null for non-nullable field (${printType(type)})`, path, locations: [loc] });
        throw new NullBubble();
      }
      return inner;
    }
    if (value === null || value === undefined) return null;
    if (type.kind === "list") {
      if (!Array.isArray(value)) throw new Error(`the forge resolved a list field at ${path.join(".")} to a non-list`);
      const out: unknown[] = [];
      for (let i = 0; i < value.length; i++) {
        try {
          out.push(await this.complete(type.of, value[i], selections, [...path, i], loc));
        } catch (error) {
          if (!(error instanceof NullBubble)) throw error;
          out.push(null);
        }
      }
      return out;
    }
    const def = typeOf(this.schema, type.name);
    if (!def) throw new Error(`the schema subset lacks type ${type.name}`);
    if (def.kind === "enum") {
      if (!def.values.includes(String(value))) throw new Error(`the forge resolved ${path.join(".")} to ${String(value)}, not a value of ${def.name}`);
      return value;
    }
    if (def.kind === "scalar") return value;
    const obj = value as Resolved;
    const concrete = def.kind === "object" ? def.name : obj.__typename;
    if (!concrete || this.schema.get(concrete)?.kind !== "object" || !applies(this.schema, def.name, concrete)) {
      throw new Error(`the forge resolved ${path.join(".")} to type ${String(concrete)}, which is not a ${def.name}`);
    }
    return this.object(concrete, obj, selections, path);
  }
}

/**
 * Parses, validates and runs one request body (`{query, variables, operationName}`) with the
 * given root resolvers. Syntax and validation errors come back as GitHub sends them: errors
 * and no data.
 */
export async function executeGraphQL(
  schema: Schema,
  body: { query?: unknown; variables?: unknown; operationName?: unknown },
  roots: { query: Resolved; mutation: Resolved },
): Promise<GraphQLResult> {
  if (typeof body.query !== "string" || body.query.trim() === "") {
    return { errors: [{ message: "A query attribute must be specified and must be a string." }] };
  }
  let doc: ExecutableDocument;
  try {
    doc = parseDocument(body.query);
  } catch (error) {
    if (error instanceof GraphQLSyntaxError) return { errors: [{ message: error.message, locations: [error.loc] }] };
    throw error;
  }
  const name = typeof body.operationName === "string" ? body.operationName : null;
  const op = name ? doc.operations.find((o) => o.name === name) : doc.operations.length === 1 ? doc.operations[0] : undefined;
  if (!op) return { errors: [{ message: name ? `No operation named "${name}"` : "An operation name is required when the document has several operations" }] };
  const rootType = op.kind === "query" ? "Query" : "Mutation";
  const errors: GraphQLErrorEntry[] = [];
  validate(schema, doc, op.name ?? "anonymous", rootType, op.selections, [op.kind], errors);
  const given = body.variables && typeof body.variables === "object" ? (body.variables as Record<string, unknown>) : {};
  const variables: Record<string, unknown> = {};
  for (const v of op.variables) {
    const value = given[v.name] ?? (v.defaultValue ? argValue(v.defaultValue, {}) : undefined);
    if ((value === undefined || value === null) && v.type.kind === "nonnull") {
      errors.push({
        message: `Variable $${v.name} of type ${printType(v.type)} was provided invalid value`,
        extensions: { code: "variableMismatch", variableName: v.name, typeName: printType(v.type) },
      });
    }
    if (value !== undefined) variables[v.name] = value;
  }
  if (errors.length > 0) return { errors };
  const exec = new Executor(schema, doc, variables);
  let data: Record<string, unknown> | null;
  try {
    data = await exec.object(rootType, op.kind === "query" ? roots.query : roots.mutation, op.selections, []);
  } catch (error) {
    if (!(error instanceof NullBubble)) throw error;
    data = null;
  }
  return exec.errors.length > 0 ? { data, errors: exec.errors } : { data };
}
