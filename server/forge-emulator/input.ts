// Reading request bodies and query strings the way GitHub validates them: a missing
// required field or a wrong type is a 422 naming the resource and field.
import { invalidField, missingField } from "./http-errors.js";

type Body = Record<string, unknown>;

export function requiredString(body: Body, field: string, resource: string): string {
  const v = body[field];
  if (v === undefined || v === null) throw missingField(resource, field);
  if (typeof v !== "string") throw invalidField(resource, field, v);
  return v;
}

export function optionalString(body: Body, field: string, resource: string): string | undefined {
  const v = body[field];
  if (v === undefined) return undefined;
  if (typeof v !== "string") throw invalidField(resource, field, v);
  return v;
}

/** A string that may be explicitly null (e.g. an issue body being cleared). */
export function nullableString(body: Body, field: string, resource: string): string | null | undefined {
  const v = body[field];
  if (v === null) return null;
  return optionalString(body, field, resource);
}

export function optionalBoolean(body: Body, field: string, resource: string): boolean | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw invalidField(resource, field, v);
  return v;
}

export function requiredInteger(body: Body, field: string, resource: string): number {
  const v = body[field];
  if (v === undefined || v === null) throw missingField(resource, field);
  if (typeof v !== "number" || !Number.isInteger(v)) throw invalidField(resource, field, v);
  return v;
}

export function optionalStringArray(body: Body, field: string, resource: string): string[] | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalidField(resource, field, v);
  return v.map((x) => {
    // GitHub accepts label objects ({name}) as well as names.
    if (typeof x === "string") return x;
    if (x && typeof x === "object" && typeof (x as Body).name === "string") return (x as Body).name as string;
    throw invalidField(resource, field, x);
  });
}

export function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], resource: string, field: string): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw invalidField(resource, field, value);
  return value as T;
}

/** A query parameter restricted to a set of values; GitHub answers 422 for others. */
export function queryEnum<T extends string>(query: URLSearchParams, name: string, allowed: readonly T[], fallback: T): T {
  const v = query.get(name);
  if (v === null || v === "") return fallback;
  if (!(allowed as readonly string[]).includes(v)) throw invalidField("Query", name, v);
  return v as T;
}
