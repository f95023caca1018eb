// The `${{ ... }}` expressions the forge's Actions subset evaluates: in `env:` values,
// `concurrency.group` and `run-name`, never inside `run:` scripts (a value spliced into a
// script is a shell injection; the subset refuses it, see actions-runner.ts). Supported:
// context paths (`inputs.x`, `secrets.X`, `github.ref_name`, `env.X`, `vars`-less), string,
// number and boolean literals, `==`, `!=`, `&&`, `||`, `!` and parentheses.

export type ExprValue = string | number | boolean | null | { [k: string]: ExprValue };
export type ExprContext = Record<string, { [k: string]: ExprValue }>;

export class ExpressionError extends Error {}

type Tok = { t: "id" | "str" | "num" | "op"; v: string };

function lex(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) i++;
    else if (c === "'") {
      let s = "";
      i++;
      for (;;) {
        if (i >= src.length) throw new ExpressionError(`unterminated string in \${{ ${src} }}`);
        if (src[i] === "'" && src[i + 1] === "'") {
          s += "'";
          i += 2;
        } else if (src[i] === "'") break;
        else s += src[i++];
      }
      i++;
      out.push({ t: "str", v: s });
    } else if (/[0-9]/.test(c)) {
      const m = /^[0-9]+(\.[0-9]+)?/.exec(src.slice(i))!;
      out.push({ t: "num", v: m[0] });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(src.slice(i))!;
      out.push({ t: "id", v: m[0] });
      i += m[0].length;
    } else {
      const two = src.slice(i, i + 2);
      const op = ["==", "!=", "&&", "||"].includes(two) ? two : "!().".includes(c) ? c : null;
      if (op === null) throw new ExpressionError(`unsupported character ${JSON.stringify(c)} in \${{ ${src} }}`);
      out.push({ t: "op", v: op });
      i += op.length;
    }
  }
  return out;
}

function truthy(v: ExprValue | undefined): boolean {
  return !(v === undefined || v === null || v === false || v === "" || v === 0);
}

/** Evaluates one expression (the text between `${{` and `}}`). */
export function evaluate(src: string, ctx: ExprContext, fns: Record<string, () => boolean> = {}): ExprValue {
  const toks = lex(src);
  let p = 0;
  const peek = (): Tok | undefined => toks[p];
  const isOp = (v: string): boolean => peek()?.t === "op" && peek()!.v === v;
  const primary = (): ExprValue => {
    const tok = toks[p++];
    if (!tok) throw new ExpressionError(`incomplete expression \${{ ${src} }}`);
    if (tok.t === "str") return tok.v;
    if (tok.t === "num") return Number(tok.v);
    if (tok.t === "op" && tok.v === "(") {
      const v = or();
      if (!isOp(")")) throw new ExpressionError(`missing ) in \${{ ${src} }}`);
      p++;
      return v;
    }
    if (tok.t === "op" && tok.v === "!") return !truthy(primary());
    if (tok.t !== "id") throw new ExpressionError(`unexpected ${tok.v} in \${{ ${src} }}`);
    if (tok.v === "true" || tok.v === "false") return tok.v === "true";
    if (tok.v === "null") return null;
    if (isOp("(")) {
      const fn = fns[tok.v];
      if (!fn || toks[p + 1]?.v !== ")")
        throw new ExpressionError(
          `function ${tok.v}() is outside the local forge's expression subset${
            Object.keys(fns).length
              ? ` (here: ${Object.keys(fns)
                  .map((f) => `${f}()`)
                  .join(", ")})`
              : ""
          }`,
        );
      p += 2;
      return fn();
    }
    if (!(tok.v in ctx)) throw new ExpressionError(`unknown context ${tok.v} (the subset knows ${Object.keys(ctx).join(", ")})`);
    let v: ExprValue | undefined = ctx[tok.v];
    while (isOp(".")) {
      p++;
      const key = toks[p++];
      if (key?.t !== "id") throw new ExpressionError(`expected a property name in \${{ ${src} }}`);
      v = v !== null && typeof v === "object" ? v[key.v] : undefined;
    }
    return v ?? null;
  };
  const cmp = (): ExprValue => {
    let l = primary();
    while (isOp("==") || isOp("!=")) {
      const op = toks[p++]!.v;
      const r = primary();
      const eq = typeof l === "string" && typeof r === "string" ? l.toLowerCase() === r.toLowerCase() : l === r;
      l = op === "==" ? eq : !eq;
    }
    return l;
  };
  const and = (): ExprValue => {
    let l = cmp();
    while (isOp("&&")) {
      p++;
      const r = cmp();
      l = truthy(l) ? r : l;
    }
    return l;
  };
  const or = (): ExprValue => {
    let l = and();
    while (isOp("||")) {
      p++;
      const r = and();
      l = truthy(l) ? l : r;
    }
    return l;
  };
  const v = or();
  if (p !== toks.length) throw new ExpressionError(`unexpected ${toks[p]!.v} in \${{ ${src} }}`);
  return v;
}

/** A step's `if:` (bare or wrapped in `${{ }}`), with the status functions; a condition without one means `success() && (...)`. */
export function condition(src: string, ctx: ExprContext, status: { failed: boolean }): boolean {
  const inner = src.trim().replace(/^\$\{\{([\s\S]*)\}\}$/, "$1");
  const fns = { success: () => !status.failed, failure: () => status.failed, always: () => true, cancelled: () => false };
  const v = evaluate(inner, ctx, fns);
  const explicit = /\b(success|failure|always|cancelled)\s*\(/.test(inner);
  return truthy(v) && (explicit || !status.failed);
}

export function asText(v: ExprValue): string {
  if (v === null) return "";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

const EXPR = /\$\{\{([\s\S]*?)\}\}/g;

export function hasExpression(text: string): boolean {
  return /\$\{\{/.test(text);
}

/** A string with every `${{ expr }}` replaced by its value as text. */
export function interpolate(text: string, ctx: ExprContext): string {
  return text.replace(EXPR, (_m, inner: string) => asText(evaluate(inner, ctx)));
}
