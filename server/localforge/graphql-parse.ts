// A small GraphQL reader: the executable documents clients send (operations, variables, fields
// with aliases and arguments, inline fragments, named fragments) and the schema language the
// forge's checked-in subset of GitHub's schema is written in. Enough for the forge's few
// operations; descriptions and directives are read and dropped.

export type TypeRef = { kind: "named"; name: string } | { kind: "list"; of: TypeRef } | { kind: "nonnull"; of: TypeRef };

export type Value =
  | { kind: "var"; name: string }
  | { kind: "int" | "float"; value: number }
  | { kind: "string"; value: string }
  | { kind: "boolean"; value: boolean }
  | { kind: "null" }
  | { kind: "enum"; value: string }
  | { kind: "list"; values: Value[] }
  | { kind: "object"; fields: Record<string, Value> };

export interface Location {
  line: number;
  column: number;
}

export type Selection =
  | { kind: "field"; alias: string | null; name: string; args: Record<string, Value>; selections: Selection[] | null; loc: Location }
  | { kind: "inline"; on: string | null; selections: Selection[] }
  | { kind: "spread"; name: string; loc: Location };

export interface Operation {
  kind: "query" | "mutation";
  name: string | null;
  variables: Array<{ name: string; type: TypeRef; defaultValue: Value | null }>;
  selections: Selection[];
}

export interface ExecutableDocument {
  operations: Operation[];
  fragments: Map<string, { on: string; selections: Selection[] }>;
}

export interface FieldDef {
  type: TypeRef;
  args: Map<string, { type: TypeRef; defaultValue: Value | null }>;
}

export interface TypeDef {
  kind: "object" | "interface" | "union" | "enum" | "input" | "scalar";
  name: string;
  fields: Map<string, FieldDef>;
  interfaces: string[];
  members: string[];
  values: string[];
}

export class GraphQLSyntaxError extends Error {
  constructor(
    message: string,
    readonly loc: Location,
  ) {
    super(message);
  }
}

interface Token {
  kind: "punct" | "name" | "int" | "float" | "string" | "eof";
  value: string;
  loc: Location;
}

const PUNCT = new Set(["!", "$", "&", "(", ")", ":", "=", "@", "[", "]", "{", "|", "}"]);

function lex(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const loc = (): Location => ({ line, column: i - lineStart + 1 });
  while (i < source.length) {
    const c = source[i]!;
    if (c === "\n") {
      i++;
      line++;
      lineStart = i;
    } else if (c === " " || c === "\t" || c === "\r" || c === "," || c === "\ufeff") {
      i++;
    } else if (c === "#") {
      while (i < source.length && source[i] !== "\n") i++;
    } else if (source.startsWith("...", i)) {
      tokens.push({ kind: "punct", value: "...", loc: loc() });
      i += 3;
    } else if (PUNCT.has(c)) {
      tokens.push({ kind: "punct", value: c, loc: loc() });
      i++;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i, i + 256))!;
      tokens.push({ kind: "name", value: m[0], loc: loc() });
      i += m[0].length;
    } else if (/[-0-9]/.test(c)) {
      const m = /^-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(source.slice(i, i + 64));
      if (!m) throw new GraphQLSyntaxError(`Parse error on "${c}"`, loc());
      tokens.push({ kind: m[1] || m[2] ? "float" : "int", value: m[0], loc: loc() });
      i += m[0].length;
    } else if (source.startsWith('"""', i)) {
      const at = loc();
      const end = source.indexOf('"""', i + 3);
      if (end < 0) throw new GraphQLSyntaxError("Unterminated string", at);
      const raw = source.slice(i + 3, end);
      for (const ch of raw) if (ch === "\n") line++;
      const lastNewline = source.lastIndexOf("\n", end);
      if (lastNewline >= i) lineStart = lastNewline + 1;
      tokens.push({ kind: "string", value: raw.replace(/\\"""/g, '"""').trim(), loc: at });
      i = end + 3;
    } else if (c === '"') {
      const at = loc();
      let j = i + 1;
      let out = "";
      while (j < source.length && source[j] !== '"') {
        if (source[j] === "\n") throw new GraphQLSyntaxError("Unterminated string", at);
        if (source[j] === "\\") {
          const e = source[j + 1];
          if (e === "u") {
            out += String.fromCharCode(parseInt(source.slice(j + 2, j + 6), 16));
            j += 6;
            continue;
          }
          out += ({ n: "\n", t: "\t", r: "\r", b: "\b", f: "\f" } as Record<string, string>)[e ?? ""] ?? e ?? "";
          j += 2;
          continue;
        }
        out += source[j];
        j++;
      }
      if (j >= source.length) throw new GraphQLSyntaxError("Unterminated string", at);
      tokens.push({ kind: "string", value: out, loc: at });
      i = j + 1;
    } else {
      throw new GraphQLSyntaxError(`Parse error on "${c}"`, loc());
    }
  }
  tokens.push({ kind: "eof", value: "", loc: loc() });
  return tokens;
}

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

  peek(value?: string): boolean {
    const t = this.tokens[this.pos]!;
    return value === undefined ? t.kind !== "eof" : t.kind !== "string" && t.value === value;
  }

  get token(): Token {
    return this.tokens[this.pos]!;
  }

  next(): Token {
    return this.tokens[this.pos++]!;
  }

  expect(value: string): Token {
    const t = this.next();
    if (t.kind === "string" || t.value !== value)
      throw new GraphQLSyntaxError(`Expected "${value}", found ${t.kind === "eof" ? "end of document" : `"${t.value}"`}`, t.loc);
    return t;
  }

  name(): string {
    const t = this.next();
    if (t.kind !== "name") throw new GraphQLSyntaxError(`Expected a name, found ${t.kind === "eof" ? "end of document" : `"${t.value}"`}`, t.loc);
    return t.value;
  }

  skipDescription(): void {
    if (this.token.kind === "string") this.pos++;
  }

  skipDirectives(): void {
    while (this.peek("@")) {
      this.next();
      this.name();
      if (this.peek("(")) this.args();
    }
  }

  type(): TypeRef {
    let t: TypeRef;
    if (this.peek("[")) {
      this.next();
      t = { kind: "list", of: this.type() };
      this.expect("]");
    } else {
      t = { kind: "named", name: this.name() };
    }
    if (this.peek("!")) {
      this.next();
      return { kind: "nonnull", of: t };
    }
    return t;
  }

  value(): Value {
    const t = this.next();
    if (t.kind === "punct" && t.value === "$") return { kind: "var", name: this.name() };
    if (t.kind === "int") return { kind: "int", value: Number(t.value) };
    if (t.kind === "float") return { kind: "float", value: Number(t.value) };
    if (t.kind === "string") return { kind: "string", value: t.value };
    if (t.kind === "name") {
      if (t.value === "true" || t.value === "false") return { kind: "boolean", value: t.value === "true" };
      if (t.value === "null") return { kind: "null" };
      return { kind: "enum", value: t.value };
    }
    if (t.value === "[") {
      const values: Value[] = [];
      while (!this.peek("]")) values.push(this.value());
      this.next();
      return { kind: "list", values };
    }
    if (t.value === "{") {
      const fields: Record<string, Value> = {};
      while (!this.peek("}")) {
        const n = this.name();
        this.expect(":");
        fields[n] = this.value();
      }
      this.next();
      return { kind: "object", fields };
    }
    throw new GraphQLSyntaxError(`Unexpected "${t.value}"`, t.loc);
  }

  args(): Record<string, Value> {
    const out: Record<string, Value> = {};
    this.expect("(");
    while (!this.peek(")")) {
      const n = this.name();
      this.expect(":");
      out[n] = this.value();
    }
    this.next();
    return out;
  }

  selectionSet(): Selection[] {
    this.expect("{");
    const out: Selection[] = [];
    while (!this.peek("}")) {
      if (!this.peek()) throw new GraphQLSyntaxError('Expected "}", found end of document', this.token.loc);
      out.push(this.selection());
    }
    this.next();
    return out;
  }

  selection(): Selection {
    const loc = this.token.loc;
    if (this.peek("...")) {
      this.next();
      if (this.peek("on")) {
        this.next();
        const on = this.name();
        this.skipDirectives();
        return { kind: "inline", on, selections: this.selectionSet() };
      }
      if (this.peek("{") || this.peek("@")) {
        this.skipDirectives();
        return { kind: "inline", on: null, selections: this.selectionSet() };
      }
      const name = this.name();
      this.skipDirectives();
      return { kind: "spread", name, loc };
    }
    let name = this.name();
    let alias: string | null = null;
    if (this.peek(":")) {
      this.next();
      alias = name;
      name = this.name();
    }
    const args = this.peek("(") ? this.args() : {};
    this.skipDirectives();
    const selections = this.peek("{") ? this.selectionSet() : null;
    return { kind: "field", alias, name, args, selections, loc };
  }

  /** `: Type [= default] @directives`, after a variable's, an argument's or an input field's name. */
  typeAndDefault(): { type: TypeRef; defaultValue: Value | null } {
    this.expect(":");
    const type = this.type();
    let defaultValue: Value | null = null;
    if (this.peek("=")) {
      this.next();
      defaultValue = this.value();
    }
    this.skipDirectives();
    return { type, defaultValue };
  }

  variables(): Operation["variables"] {
    const out: Operation["variables"] = [];
    if (!this.peek("(")) return out;
    this.next();
    while (!this.peek(")")) {
      this.expect("$");
      const name = this.name();
      out.push({ name, ...this.typeAndDefault() });
    }
    this.next();
    return out;
  }
}

/** Parses a query or mutation document; throws GraphQLSyntaxError. */
export function parseDocument(source: string): ExecutableDocument {
  const p = new Parser(lex(source));
  const doc: ExecutableDocument = { operations: [], fragments: new Map() };
  while (p.peek()) {
    if (p.peek("{")) {
      doc.operations.push({ kind: "query", name: null, variables: [], selections: p.selectionSet() });
      continue;
    }
    const t = p.next();
    if (t.value === "fragment") {
      const name = p.name();
      p.expect("on");
      const on = p.name();
      p.skipDirectives();
      doc.fragments.set(name, { on, selections: p.selectionSet() });
    } else if (t.value === "query" || t.value === "mutation") {
      const name = p.peek("(") || p.peek("{") || p.peek("@") ? null : p.name();
      const variables = p.variables();
      p.skipDirectives();
      doc.operations.push({ kind: t.value, name, variables, selections: p.selectionSet() });
    } else {
      throw new GraphQLSyntaxError(`Parse error on "${t.value}"${t.value === "subscription" ? " (subscriptions are not supported)" : ""}`, t.loc);
    }
  }
  if (doc.operations.length === 0) throw new GraphQLSyntaxError("The document has no operation", { line: 1, column: 1 });
  return doc;
}

/** Parses schema language (type, interface, union, enum, input, scalar definitions). */
export function parseSchema(source: string): Map<string, TypeDef> {
  const p = new Parser(lex(source));
  const types = new Map<string, TypeDef>();
  const fieldsOf = (input: boolean): Map<string, FieldDef> => {
    const fields = new Map<string, FieldDef>();
    p.expect("{");
    while (!p.peek("}")) {
      p.skipDescription();
      const name = p.name();
      const args = new Map<string, { type: TypeRef; defaultValue: Value | null }>();
      if (!input && p.peek("(")) {
        p.next();
        while (!p.peek(")")) {
          p.skipDescription();
          const arg = p.name();
          args.set(arg, p.typeAndDefault());
        }
        p.next();
      }
      // An input field may carry a default (the forge needs none of them); an output field cannot.
      let type: TypeRef;
      if (input) type = p.typeAndDefault().type;
      else {
        p.expect(":");
        type = p.type();
        p.skipDirectives();
      }
      fields.set(name, { type, args });
    }
    p.next();
    return fields;
  };
  while (p.peek()) {
    p.skipDescription();
    const keyword = p.name();
    const name = p.name();
    const def: TypeDef = { kind: "scalar", name, fields: new Map(), interfaces: [], members: [], values: [] };
    if (keyword === "type" || keyword === "interface") {
      def.kind = keyword === "type" ? "object" : "interface";
      if (p.peek("implements")) {
        p.next();
        if (p.peek("&")) p.next();
        def.interfaces.push(p.name());
        while (p.peek("&")) {
          p.next();
          def.interfaces.push(p.name());
        }
      }
      p.skipDirectives();
      def.fields = fieldsOf(false);
    } else if (keyword === "input") {
      def.kind = "input";
      p.skipDirectives();
      def.fields = fieldsOf(true);
    } else if (keyword === "union") {
      def.kind = "union";
      p.skipDirectives();
      p.expect("=");
      if (p.peek("|")) p.next();
      def.members.push(p.name());
      while (p.peek("|")) {
        p.next();
        def.members.push(p.name());
      }
    } else if (keyword === "enum") {
      def.kind = "enum";
      p.skipDirectives();
      p.expect("{");
      while (!p.peek("}")) {
        p.skipDescription();
        def.values.push(p.name());
        p.skipDirectives();
      }
      p.next();
    } else if (keyword === "scalar") {
      p.skipDirectives();
    } else {
      throw new GraphQLSyntaxError(`Unsupported schema definition "${keyword}"`, p.token.loc);
    }
    types.set(name, def);
  }
  return types;
}

/** The named type at the bottom of a list/non-null wrapper. */
export function namedType(t: TypeRef): string {
  return t.kind === "named" ? t.name : namedType(t.of);
}

export function printType(t: TypeRef): string {
  return t.kind === "named" ? t.name : t.kind === "list" ? `[${printType(t.of)}]` : `${printType(t.of)}!`;
}
