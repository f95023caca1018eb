// The docs point at what exists: every relative link of README.md, CONTRIBUTING.md and
// docs/*.md resolves to a file (and its #anchor to a heading there), every repository path a
// doc names in backticks (`server/fleet/repo-fleet.ts`, `server/runtimes/actions/`) exists, and
// the room tables (docs/architecture.md's, CONTRIBUTING.md's layout) name exactly the folders
// under server/. Reads files only: seconds.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { ROOT } from "./support/paths.js";

/** The docs a cloner reads (README-CONFIG.md is generated from schemas/ and checked by config-schema.test). */
function docs(): string[] {
  const inDocs = readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => join("docs", f));
  return ["README.md", "CONTRIBUTING.md", ...inDocs.sort()];
}

/** The text outside fenced code blocks. */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/** GitHub's anchor of each heading, duplicates numbered as GitHub numbers them. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of prose(text).matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const base = heading!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Each relative link's target that does not resolve, as "doc: target (why)". */
export function brokenLinks(doc: string, text: string, read: (path: string) => string | null): string[] {
  const problems: string[] = [];
  const body = prose(text).replace(/`[^`\n]*`/g, "");
  for (const [, raw] of body.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = raw!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …
    const [path, anchor] = target.split("#", 2) as [string, string | undefined];
    const file = path === "" ? doc : join(dirname(doc), decodeURIComponent(path));
    const content = read(file);
    if (content === null) {
      problems.push(`${doc}: ${target} (no such file or folder: ${file})`);
      continue;
    }
    if (anchor && file.endsWith(".md") && !anchors(content).has(anchor.toLowerCase())) problems.push(`${doc}: ${target} (no heading #${anchor} in ${file})`);
  }
  return problems;
}

/** The repository paths named in inline code that do not exist, as "doc: path". */
export function missingPaths(doc: string, text: string, tops: ReadonlySet<string>, exists: (path: string) => boolean): string[] {
  const problems: string[] = [];
  for (const [, code] of prose(text).matchAll(/`([^`\n]+)`/g)) {
    const path = code!;
    // A path: no spaces or placeholders (`server/runtimes/<name>/`, `test/*.test.ts`), under a top-level folder of this repository.
    if (!/^[A-Za-z0-9._/-]+$/.test(path) || !path.includes("/")) continue;
    if (!tops.has(path.split("/")[0]!)) continue;
    if (!exists(path)) problems.push(`${doc}: ${path}`);
  }
  return problems;
}

/** The folders a table's first column names as `server/<room>/`, in the section that starts with `heading`. */
export function roomsInTable(text: string, heading: string): Set<string> {
  const start = text.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `no section "${heading}"`);
  const next = text.slice(start + heading.length + 2).search(/^#{1,2} /m);
  const section = next < 0 ? text.slice(start) : text.slice(start, start + heading.length + 2 + next);
  const rooms = new Set<string>();
  for (const line of section.split("\n")) {
    const first = /^\|([^|]*)\|/.exec(line)?.[1] ?? "";
    for (const [, room] of first.matchAll(/`server\/([a-z-]+)\/`/g)) rooms.add(room!);
  }
  return rooms;
}

const onDisk = (path: string): string | null => {
  const full = join(ROOT, path);
  if (!existsSync(full)) return null;
  return statSync(full).isDirectory() ? "" : readFileSync(full, "utf8");
};

const TOPS = new Set(
  readdirSync(ROOT).filter((name) => !["node_modules", "dist", ".git"].includes(name) && !name.startsWith(".node") && statSync(join(ROOT, name)).isDirectory()),
);

const SERVER_ROOMS = readdirSync(join(ROOT, "server"))
  .filter((name) => statSync(join(ROOT, "server", name)).isDirectory())
  .sort();

describe("the docs' links and paths", () => {
  it("the checks find what is broken (rows)", () => {
    const files: Record<string, string> = { "docs/a.md": "# A\n\n## Two words, `code`!\n\n## Two words, `code`!\n", "docs/b.png": "" };
    const read = (p: string): string | null => files[p] ?? null;
    const rows: { name: string; text: string; broken: string[] }[] = [
      { name: "a file beside", text: "[a](a.md) ![b](b.png)", broken: [] },
      { name: "a heading's anchor, and its duplicate", text: "[a](a.md#two-words-code) [a](a.md#two-words-code-1)", broken: [] },
      { name: "an anchor of this file", text: "# Here\n[h](#here)", broken: [] },
      { name: "a missing file", text: "[c](c.md)", broken: ["docs/x.md: c.md (no such file or folder: docs/c.md)"] },
      { name: "a missing anchor", text: "[a](a.md#three)", broken: ["docs/x.md: a.md#three (no heading #three in docs/a.md)"] },
      { name: "web links and links in code are not checked", text: "[w](https://example.com/x) `[c](c.md)`\n```\n[c](c.md)\n```", broken: [] },
    ];
    for (const row of rows) {
      const withSelf = (p: string): string | null => (p === "docs/x.md" ? row.text : read(p));
      assert.deepEqual(brokenLinks("docs/x.md", row.text, withSelf), row.broken, row.name);
    }
    const tops = new Set(["server", "test"]);
    const have = new Set(["server/fleet/repo-fleet.ts", "server/runtimes/actions/"]);
    const exists = (p: string): boolean => have.has(p);
    assert.deepEqual(
      missingPaths(
        "d.md",
        "`server/fleet/repo-fleet.ts` `server/runtimes/actions/` `server/gone.ts` `server/runtimes/<name>/` `ledger.jsonl` `.github/afk.json` `test/x.ts`",
        tops,
        exists,
      ),
      ["d.md: server/gone.ts", "d.md: test/x.ts"],
    );
    assert.deepEqual(
      [
        ...roomsInTable(
          "# T\n\n## Rooms\n\n| room | holds |\n|---|---|\n| `server/state/` | x `server/gh/` |\n| `server/gh/` | y |\n\n## Next\n| `server/no/` |\n",
          "## Rooms",
        ),
      ],
      ["state", "gh"],
    );
  });

  for (const doc of docs()) {
    it(`${doc}: every relative link and every repository path it names exists`, () => {
      const text = readFileSync(join(ROOT, doc), "utf8");
      assert.deepEqual(brokenLinks(doc, text, onDisk), [], "broken links");
      const missing = missingPaths(doc, text, TOPS, (p) => existsSync(join(ROOT, p)));
      assert.deepEqual(missing, [], "paths that do not exist");
    });
  }

  for (const [doc, heading] of [
    ["docs/architecture.md", "## Rooms"],
    ["CONTRIBUTING.md", "## Layout"],
  ] as const) {
    it(`${doc}'s room table names every folder in server/, and no folder that is gone`, () => {
      const named = roomsInTable(readFileSync(join(ROOT, doc), "utf8"), heading);
      assert.deepEqual(
        SERVER_ROOMS.filter((room) => !named.has(room)),
        [],
        `folders under server/ missing from ${doc}`,
      );
      assert.deepEqual([...named].filter((room) => !SERVER_ROOMS.includes(room)).sort(), [], `rooms in ${doc} that are not in server/`);
    });
  }
});
