#!/usr/bin/env node
// Generates server/forge-emulator/graphql-subset.ts: the part of GitHub's public GraphQL schema
// (schema.graphql of @octokit/graphql-schema, MIT) that the local forge serves and the fleet
// uses — the merge queue's operations and fields — with descriptions and directives dropped,
// fields trimmed to the kept ones, and `implements`/union members trimmed to kept types.
// Everything else is copied as GitHub publishes it, so the forge's answers are checked against
// GitHub's own types (test/graphql-schema.test.ts).
//
// Run by hand: `npm run gen:graphql` (or `node scripts/graphql-subset.mjs [schema.graphql]`).
// Without a path, `npm pack @octokit/graphql-schema` fetches the package into a temporary
// directory (it is not a dependency) and its schema.graphql is read.

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(ROOT, "server", "forge-emulator", "graphql-subset.ts");

/** Kept types: "*" keeps every field (or value, or member); a list keeps those fields only. */
const KEEP = {
  Query: ["id", "repository"],
  Mutation: ["dequeuePullRequest", "enqueuePullRequest"],
  Node: ["id"],
  Actor: ["login"],
  User: ["id", "login"],
  Repository: ["id", "mergeQueue", "nameWithOwner", "pullRequest"],
  PullRequest: ["baseRefName", "headRefName", "headRefOid", "id", "isInMergeQueue", "mergeQueueEntry", "merged", "number", "state", "timelineItems"],
  PullRequestState: "*",
  PullRequestMergeMethod: "*",
  Commit: ["id", "oid"],
  MergeQueue: ["configuration", "entries", "id"],
  MergeQueueConfiguration: "*",
  MergeQueueMergingStrategy: "*",
  MergeQueueEntryConnection: ["nodes", "totalCount"],
  MergeQueueEntry: ["baseCommit", "enqueuedAt", "enqueuer", "headCommit", "id", "jump", "position", "pullRequest", "solo", "state"],
  MergeQueueEntryState: "*",
  EnqueuePullRequestInput: "*",
  EnqueuePullRequestPayload: "*",
  DequeuePullRequestInput: "*",
  DequeuePullRequestPayload: "*",
  PullRequestTimelineItemsConnection: ["nodes", "totalCount"],
  PullRequestTimelineItems: ["AddedToMergeQueueEvent", "RemovedFromMergeQueueEvent"],
  PullRequestTimelineItemsItemType: "*",
  AddedToMergeQueueEvent: ["actor", "createdAt", "enqueuer", "id"],
  RemovedFromMergeQueueEvent: ["actor", "beforeCommit", "createdAt", "enqueuer", "id", "reason"],
  DateTime: "*",
  GitObjectID: "*",
};

function schemaText() {
  const path = process.argv[2];
  if (path) return readFileSync(path, "utf8");
  const tmp = mkdtempSync(join(tmpdir(), "gql-schema-"));
  try {
    const file = execFileSync("npm", ["pack", "--silent", "@octokit/graphql-schema", "--pack-destination", tmp], { encoding: "utf8" }).trim().split("\n").pop();
    execFileSync("tar", ["-xzf", join(tmp, file), "-C", tmp, "package/schema.graphql"]);
    return readFileSync(join(tmp, "package", "schema.graphql"), "utf8");
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The schema without descriptions and directives, one definition per chunk keyed by name. */
function definitions(text) {
  const bare = text
    .replace(/"""[\s\S]*?"""/g, "")
    .replace(/^\s*"[^"\n]*"\s*$/gm, "")
    .replace(/ @deprecated\((?:[^()"]|"(?:[^"\\]|\\.)*")*\)/g, "")
    .replace(/ @[A-Za-z_]+\b(?!\()/g, "")
    .replace(/\n\s*\n/g, "\n");
  const defs = new Map();
  const re = /^(type|interface|input|enum|union|scalar) ([A-Za-z_][A-Za-z0-9_]*)([^\n]*)\n?/gm;
  let m;
  while ((m = re.exec(bare))) {
    const [head, keyword, name, rest] = m;
    if (keyword === "union" || keyword === "scalar" || !rest.includes("{")) {
      defs.set(name, { keyword, name, rest: rest.trim(), body: [] });
      continue;
    }
    const end = bare.indexOf("\n}", m.index + head.length - 1);
    const body = bare.slice(m.index + head.length, end + 1);
    defs.set(name, { keyword, name, rest: rest.replace("{", "").trim(), body: body.split("\n").filter((l) => l.trim() !== "") });
    re.lastIndex = end + 2;
  }
  return defs;
}

/** A block's members: a field with its (possibly multi-line) arguments, or an enum value. */
function members(lines) {
  const out = [];
  for (const line of lines) {
    if (/^ {2}[A-Za-z_]/.test(line)) out.push([line]);
    else out[out.length - 1]?.push(line);
  }
  return out.map((chunk) => ({ name: /^ {2}([A-Za-z_][A-Za-z0-9_]*)/.exec(chunk[0])[1], text: chunk.join("\n") }));
}

function render(def, keep) {
  const kept = new Set(Object.keys(KEEP));
  if (def.keyword === "scalar") return `scalar ${def.name}`;
  if (def.keyword === "union") {
    const all = def.rest
      .replace(/^=\s*/, "")
      .split("|")
      .map((s) => s.trim());
    const chosen = keep === "*" ? all : all.filter((n) => keep.includes(n));
    for (const n of keep === "*" ? [] : keep) if (!all.includes(n)) throw new Error(`union ${def.name} has no member ${n}`);
    return `union ${def.name} = ${chosen.join(" | ")}`;
  }
  let head = `${def.keyword} ${def.name}`;
  const impl = /implements (.*)$/.exec(def.rest);
  if (impl) {
    const ifaces = impl[1]
      .split("&")
      .map((s) => s.trim())
      .filter((n) => kept.has(n));
    if (ifaces.length > 0) head += ` implements ${ifaces.join(" & ")}`;
  }
  const all = members(def.body);
  if (keep !== "*") for (const n of keep) if (!all.some((f) => f.name === n)) throw new Error(`${def.name} has no field ${n}`);
  const chosen = keep === "*" ? all : all.filter((f) => keep.includes(f.name));
  return `${head} {\n${chosen.map((f) => f.text).join("\n")}\n}`;
}

const defs = definitions(schemaText());
const parts = [];
for (const [name, keep] of Object.entries(KEEP).sort(([a], [b]) => a.localeCompare(b))) {
  const def = defs.get(name);
  if (!def) throw new Error(`GitHub's schema has no type ${name}`);
  parts.push(render(def, keep));
}
const sdl = parts.join("\n\n");
const out = `// Generated by scripts/graphql-subset.mjs from GitHub's public GraphQL schema (as published in
// @octokit/graphql-schema, MIT): the types and fields the local forge serves and the fleet
// uses, descriptions and directives dropped. Do not edit by hand; regenerate.
export const GITHUB_GRAPHQL_SUBSET = \`
${sdl.replace(/\\/g, "\\\\").replace(/`/g, "\\`")}
\`;
`;
writeFileSync(OUT, out);
console.error(`graphql-subset: wrote ${OUT} (${parts.length} types, ${sdl.length} characters)`);
