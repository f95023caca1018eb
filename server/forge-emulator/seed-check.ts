// The seed file's format, checked before anything is created: every key known, every value of its
// type, every issue reference another issue of the seed. A refusal names each problem at its
// path (the first 10, then a count) and where the format is written down, so a typo in a seed is
// not a forge that silently lacks a label or an issue. The format: docs/operations.md, "The local forge".
import { nearestKey } from "../../schemas/nearest.js";
import { isValidLogin } from "./core.js";

const TOP = ["files", "labels", "issues"];
const LABEL = ["name", "color", "description"];
const ISSUE = ["title", "body", "labels", "author", "state", "blocked_by", "sub_issues", "assignees"];
const SHOWN = 10;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const kind = (v: unknown) =>
  v === null ? "null" : Array.isArray(v) ? "a list" : typeof v === "object" ? "an object" : `${typeof v} ${JSON.stringify(v).slice(0, 40)}`;

function unknownKeys(at: string, value: Record<string, unknown>, keys: readonly string[], problems: string[]): void {
  for (const key of Object.keys(value).filter((k) => !keys.includes(k))) {
    const near = nearestKey(key, keys);
    problems.push(`${at}${at ? "." : ""}${key}: unknown key${near ? ` (did you mean "${near}"?)` : ` (valid keys: ${keys.join(", ")})`}`);
  }
}

function strings(at: string, value: unknown, what: string, problems: string[], check?: (s: string) => string | null): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) return void problems.push(`${at}: expected a list of ${what}, got ${kind(value)}`);
  value.forEach((s, i) => {
    if (typeof s !== "string" || s === "") problems.push(`${at}[${i}]: expected ${what.replace(/s$/, "")} (a non-empty string), got ${kind(s)}`);
    else {
      const bad = check?.(s);
      if (bad) problems.push(`${at}[${i}]: ${bad}`);
    }
  });
}

function checkIssue(issue: unknown, i: number, total: number, problems: string[]): void {
  const at = `issues[${i}]`;
  if (!isObject(issue)) return void problems.push(`${at}: expected an issue object ({"title": ...}), got ${kind(issue)}`);
  unknownKeys(at, issue, ISSUE, problems);
  if (typeof issue.title !== "string" || issue.title.trim() === "") problems.push(`${at}.title: required, a non-empty string`);
  if (issue.body !== undefined && typeof issue.body !== "string") problems.push(`${at}.body: expected a string, got ${kind(issue.body)}`);
  if (issue.state !== undefined && issue.state !== "open" && issue.state !== "closed")
    problems.push(`${at}.state: expected "open" or "closed", got ${kind(issue.state)}`);
  if (issue.author !== undefined && !isValidLogin(issue.author))
    problems.push(`${at}.author: ${JSON.stringify(issue.author)} is not a valid login (letters, digits, inner hyphens; at most 39)`);
  strings(`${at}.labels`, issue.labels, "label names", problems);
  strings(`${at}.assignees`, issue.assignees, "logins", problems, (s) => (isValidLogin(s) ? null : `${JSON.stringify(s)} is not a valid login`));
  for (const key of ["blocked_by", "sub_issues"] as const) {
    const refs = issue[key];
    if (refs === undefined) continue;
    if (!Array.isArray(refs)) {
      problems.push(`${at}.${key}: expected a list of issue positions (1..${total}), got ${kind(refs)}`);
      continue;
    }
    refs.forEach((n, j) => {
      if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > total || n === i + 1)
        problems.push(`${at}.${key}[${j}]: ${kind(n)} is not another issue of this seed: a position from 1 to ${total}, not its own (${i + 1})`);
    });
  }
}

/** The problems of a parsed seed file, each at its path; empty when it is a valid seed. */
export function seedProblems(data: unknown): string[] {
  if (!isObject(data)) return [`expected a JSON object with "files", "labels" and/or "issues", got ${kind(data)}`];
  const problems: string[] = [];
  unknownKeys("", data, TOP, problems);
  if (data.files !== undefined) {
    if (!isObject(data.files)) problems.push(`files: expected an object of path → file content, got ${kind(data.files)}`);
    else
      for (const [path, content] of Object.entries(data.files))
        if (typeof content !== "string") problems.push(`files.${path}: expected the file's content as a string, got ${kind(content)}`);
  }
  if (data.labels !== undefined) {
    if (!Array.isArray(data.labels)) problems.push(`labels: expected a list of {"name", "color"?, "description"?}, got ${kind(data.labels)}`);
    else
      data.labels.forEach((label: unknown, i) => {
        if (!isObject(label)) return void problems.push(`labels[${i}]: expected {"name", "color"?, "description"?}, got ${kind(label)}`);
        unknownKeys(`labels[${i}]`, label, LABEL, problems);
        if (typeof label.name !== "string" || label.name.trim() === "") problems.push(`labels[${i}].name: required, a non-empty string`);
        if (label.color !== undefined && !(typeof label.color === "string" && /^#?[0-9a-fA-F]{6}$/.test(label.color)))
          problems.push(`labels[${i}].color: expected six hex digits ("0e8a16"), got ${kind(label.color)}`);
        if (label.description !== undefined && typeof label.description !== "string")
          problems.push(`labels[${i}].description: expected a string, got ${kind(label.description)}`);
      });
  }
  if (data.issues !== undefined) {
    if (!Array.isArray(data.issues)) problems.push(`issues: expected a list of issues, got ${kind(data.issues)}`);
    else data.issues.forEach((issue: unknown, i) => checkIssue(issue, i, (data.issues as unknown[]).length, problems));
  }
  return problems;
}

/** One refusal for all of a seed's problems: the first 10 and a count of the rest. */
export function seedRefusal(path: string, problems: readonly string[]): string {
  const more = problems.length - SHOWN;
  return `seed ${path} is not a valid seed (the format: docs/operations.md, "The local forge"): ${problems.slice(0, SHOWN).join("; ")}${more > 0 ? `; … and ${more} more problem(s)` : ""}`;
}
