// Every request the fleet makes of GitHub is accounted for (docs/requests.md): the page lists
// each route the adapter uses (and nothing it does not), and each place in server/ that calls a
// request-making Forge method says why in a comment right there.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "./support/paths.js";

const DOC = join(ROOT, "docs", "requests.md");
const ADAPTER = ["server/gh/github-forge.ts", "server/gh/branch-rules.ts", "server/gh/merge-queue.ts"];

/** Routes ("GET /repos/...") and GraphQL operation names a source text uses. */
function routesIn(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/"((?:GET|POST|PUT|PATCH|DELETE) \/[^"\s]*)"/g)) out.add(m[1]!);
  for (const m of text.matchAll(/\b(?:query|mutation) (afk\w+)\s*\(/g)) out.add(`GraphQL ${m[1]!}`);
  return out;
}

/** The Forge interface's methods that make requests (all but the local `rateLimit`). */
function requestMethods(): string[] {
  const text = readFileSync(join(ROOT, "server/gh/forge.ts"), "utf8");
  const body = /export interface Forge \{([\s\S]*?)\n\}/.exec(text)?.[1] ?? "";
  return [...body.matchAll(/^\s{2}(\w+)\(.*\): Promise</gm)].map((m) => m[1]!);
}

/** How far up a call site its comment may be, within one paragraph of code. */
const REACH = 16;

/** Call sites of `methods` in `text` with no comment mentioning a request above them in the same paragraph. */
export function unjustified(text: string, methods: readonly string[]): Array<{ line: number; method: string }> {
  const call = new RegExp(`\\.(${methods.join("|")})\\(`);
  const lines = text.split("\n");
  const out: Array<{ line: number; method: string }> = [];
  lines.forEach((line, i) => {
    const m = call.exec(line);
    if (!m || /^\s*(\*|\/\/|\/\*)/.test(line)) return;
    for (let j = i; j >= 0 && j > i - REACH; j--) {
      const t = lines[j]!;
      if (j < i && t.trim() === "") break;
      if (/(\/\/|\*).*\brequests?\b/i.test(t)) return;
    }
    out.push({ line: i + 1, method: m[1]! });
  });
  return out;
}

function* sources(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      // The local forge is GitHub's stand-in, not a client of it.
      if (name !== "forge-emulator") yield* sources(path);
    } else if (name.endsWith(".ts")) yield path;
  }
}

describe("requests: every one accounted for", () => {
  it("docs/requests.md lists every route the GitHub adapter uses, and no other", () => {
    const used = new Set<string>();
    for (const file of ADAPTER) for (const route of routesIn(readFileSync(join(ROOT, file), "utf8"))) used.add(route);
    assert.ok(used.size >= 25, `expected the adapter's routes, found ${used.size}`);
    const doc = readFileSync(DOC, "utf8");
    const listed = new Set([...doc.matchAll(/`((?:GET|POST|PUT|PATCH|DELETE) \/[^`]*)`/g)].map((m) => m[1]!));
    for (const m of doc.matchAll(/GraphQL `(afk\w+)`/g)) listed.add(`GraphQL ${m[1]!}`);
    const missing = [...used].filter((r) => !listed.has(r));
    assert.deepEqual(missing, [], `docs/requests.md does not say when and why these are made: ${missing.join(", ")}`);
    const stale = [...listed].filter((r) => !used.has(r));
    assert.deepEqual(stale, [], `docs/requests.md lists requests the adapter no longer makes: ${stale.join(", ")}`);
  });

  it("each call of a request-making Forge method in server/ says why, where it is made", () => {
    const methods = requestMethods();
    assert.ok(
      methods.includes("mergePull") && methods.includes("listOpenIssues") && !methods.includes("rateLimit"),
      `methods read from the Forge interface: ${methods.join(", ")}`,
    );
    let sites = 0;
    const bare: string[] = [];
    for (const file of sources(join(ROOT, "server"))) {
      const rel = relative(ROOT, file);
      if (ADAPTER.includes(rel)) continue; // where requests are made for the callers below
      const text = readFileSync(file, "utf8");
      sites += (text.match(new RegExp(`\\.(${methods.join("|")})\\(`, "g")) ?? []).length;
      for (const site of unjustified(text, methods)) bare.push(`${rel}:${site.line} (${site.method})`);
    }
    assert.ok(sites >= 60, `expected the fleet's request sites, found ${sites}`);
    assert.deepEqual(bare, [], `say in a comment why each of these requests is made (and what it costs): ${bare.join("; ")}`);
  });

  it("the check finds a call with no comment, and one whose comment is a paragraph away", () => {
    const methods = ["mergePull", "createComment"];
    assert.deepEqual(unjustified("async function f() {\n  const x = 1;\n  await forge.mergePull(1, m);\n}", methods), [{ line: 3, method: "mergePull" }]);
    assert.deepEqual(unjustified("  // One request: the landing.\n  await forge.mergePull(1, m);", methods), []);
    assert.deepEqual(unjustified("  // One request: the landing.\n\n  await forge.createComment(1, b);", methods), [{ line: 3, method: "createComment" }]);
    assert.deepEqual(unjustified("  /** Calls forge.mergePull(): docs only. */", methods), []);
  });
});
