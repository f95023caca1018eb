// Runs a GraphQL document against the checked-in subset of GitHub's schema (graphql-subset.ts)
// and plain resolver objects, with graphql-js: the document is validated first (the refusals
// clients meet most, an unknown field or argument and a missing one, in GitHub's words and codes;
// the rest in graphql-js's), then executed, so every value is completed by its declared type and
// an answer can never carry a field or an enum value GitHub's schema does not have.
import {
  buildSchema,
  execute,
  getOperationAST,
  GraphQLError,
  isNonNullType,
  parse,
  specifiedRules,
  TypeInfo,
  validate,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLSchema,
  type SourceLocation,
} from "graphql";

/** A resolver object: `__typename` for abstract types, fields as values or functions of the arguments. */
export type Resolved = { __typename?: string; [field: string]: unknown };

export interface GraphQLErrorEntry {
  message: string;
  type?: string;
  path?: ReadonlyArray<string | number>;
  locations?: readonly SourceLocation[];
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

/** The schema an SDL describes (the subset's custom scalars pass through as strings, as GitHub sends them). */
export function schemaOf(sdl: string): GraphQLSchema {
  return buildSchema(sdl);
}

/** GitHub's wording and codes for the refusals a client meets most; the path is the response keys to the field. */
function githubRefusals(schema: GraphQLSchema, doc: DocumentNode): GraphQLErrorEntry[] {
  const errors: GraphQLErrorEntry[] = [];
  const info = new TypeInfo(schema);
  const path: string[] = [];
  visit(
    doc,
    visitWithTypeInfo(info, {
      OperationDefinition: { enter: (node) => void path.push(node.operation), leave: () => void path.pop() },
      Field: {
        enter(node) {
          const key = node.alias?.value ?? node.name.value;
          const here = [...path, key];
          path.push(key);
          const parent = info.getParentType();
          const field = info.getFieldDef();
          const at = node.loc ? [{ line: node.loc.startToken.line, column: node.loc.startToken.column }] : [];
          if (!field) {
            if (parent && node.name.value !== "__typename") {
              errors.push({
                message: `Field '${node.name.value}' doesn't exist on type '${parent.name}'`,
                path: here,
                locations: at,
                extensions: { code: "undefinedField", typeName: parent.name, fieldName: node.name.value },
              });
            }
            return;
          }
          const given = new Set((node.arguments ?? []).map((a) => a.name.value));
          for (const arg of given) {
            if (field.args.some((a) => a.name === arg)) continue;
            errors.push({
              message: `Field '${field.name}' doesn't accept argument '${arg}'`,
              path: here,
              locations: at,
              extensions: { code: "argumentNotAccepted", name: field.name, typeName: "Field", argumentName: arg },
            });
          }
          for (const arg of field.args) {
            if (!isNonNullType(arg.type) || arg.defaultValue !== undefined || given.has(arg.name)) continue;
            errors.push({
              message: `Field '${field.name}' is missing required arguments: ${arg.name}`,
              path: here,
              locations: at,
              extensions: { code: "missingRequiredArguments", className: "Field", name: field.name, arguments: arg.name },
            });
          }
        },
        leave: () => void path.pop(),
      },
    }),
  );
  return errors;
}

const entry = (e: GraphQLError): GraphQLErrorEntry => ({
  message: e.message,
  ...(e.locations ? { locations: e.locations } : {}),
  ...(e.path ? { path: e.path } : {}),
});

/**
 * Answers `body` as GitHub's `POST /graphql` does: HTTP 200 with `data` and `errors`. A refused
 * document (syntax, validation, variables) has errors and no data; a resolver's GraphQLFieldError
 * is an error with GitHub's `type` at its path. Any other throw is the forge's own fault and
 * propagates (a 500), never an answer.
 */
export async function executeGraphQL(
  schema: GraphQLSchema,
  body: { query?: unknown; variables?: unknown; operationName?: unknown },
  roots: { query: Resolved; mutation: Resolved },
): Promise<GraphQLResult> {
  if (typeof body.query !== "string" || body.query.trim() === "") {
    return { errors: [{ message: "A query attribute must be specified and must be a string." }] };
  }
  let doc: DocumentNode;
  try {
    doc = parse(body.query);
  } catch (error) {
    if (error instanceof GraphQLError) return { errors: [entry(error)] };
    throw error;
  }
  const refused = githubRefusals(schema, doc);
  if (refused.length > 0) return { errors: refused };
  const invalid = validate(schema, doc, specifiedRules);
  if (invalid.length > 0) return { errors: invalid.map(entry) };
  const name = typeof body.operationName === "string" ? body.operationName : null;
  const op = getOperationAST(doc, name);
  if (!op) return { errors: [{ message: name ? `No operation named "${name}"` : "An operation name is required when the document has several operations" }] };
  const variables = body.variables && typeof body.variables === "object" ? (body.variables as Record<string, unknown>) : {};
  const result = await execute({
    schema,
    document: doc,
    operationName: name,
    variableValues: variables,
    rootValue: op.operation === "mutation" ? roots.mutation : roots.query,
  });
  const errors: GraphQLErrorEntry[] = [];
  for (const error of result.errors ?? []) {
    const cause = error.originalError;
    if (cause instanceof GraphQLFieldError) errors.push({ type: cause.type, ...entry(error), message: cause.message });
    else if (cause && !(cause instanceof GraphQLError)) throw cause;
    else errors.push(entry(error));
  }
  const data = (result.data ?? null) as Record<string, unknown> | null;
  return errors.length > 0 ? { ...(result.data !== undefined ? { data } : {}), errors } : { data };
}
