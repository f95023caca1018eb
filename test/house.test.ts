// The house rules that hold the code's shape, checked on the source tree: no import cycle
// between files (type imports included), few loose files in server/, files under 500 lines,
// the lint zones of eslint.config.js biting on a file that breaks them, and tests that wait for
// events through one helper.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, existsSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { ESLint } from "eslint";
import { stronglyConnected } from "../server/state/dependencies.js";
import { ROOT } from "./support/paths.js";
import { waitFor } from "./support/wait.js";

/** Entry points: the only files that live directly in server/. */
const LOOSE = ["bin.ts", "cli.ts", "http.ts", "paths.ts", "server.ts", "version.ts"];
/** Files allowed past 500 lines: response renderers and demo data (docs/architecture.md). */
const LONG = new Set(["server/localforge/render.ts", "server/demo/backlog.ts"]);

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** Relative imports of one file (static, type-only, re-exports and dynamic), resolved to files. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  const targets: string[] = [];
  for (const { fileName } of info.importedFiles) {
    if (!fileName.startsWith(".")) continue;
    const base = resolve(dirname(file), fileName).replace(/\.js$/, "");
    const target = [`${base}.ts`, join(base, "index.ts")].find((candidate) => existsSync(candidate));
    assert.ok(target, `${relative(ROOT, file)} imports ${fileName}, which resolves to no file`);
    targets.push(target);
  }
  return targets;
}

describe("the house", () => {
  const files = [...sources(join(ROOT, "server")), ...sources(join(ROOT, "schemas"))].sort();

  it("has no import cycle between files, type imports included", () => {
    const index = new Map(files.map((f, i) => [f, i]));
    const edges = files.map((f) => importsOf(f).map((t) => index.get(t)!).filter((t) => t !== undefined));
    const cycles = stronglyConnected(
      files.map((_, i) => i),
      (n) => edges[n]!,
    ).filter((scc) => scc.length > 1 || edges[scc[0]!]!.includes(scc[0]!));
    const named = cycles.map((scc) => scc.map((n) => relative(ROOT, files[n]!)).sort());
    assert.deepEqual(named, [], `import cycles:\n${named.map((c) => c.join(" <-> ")).join("\n")}`);
    assert.ok(files.length > 100, `read ${files.length} files`);
  });

  it("keeps only entry points directly in server/", () => {
    const loose = readdirSync(join(ROOT, "server")).filter((name) => name.endsWith(".ts")).sort();
    assert.deepEqual(loose, LOOSE);
  });

  it("the README's layout table names every room in server/, and no room that is gone", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const layout = readme.slice(readme.indexOf("### Layout"));
    const named = new Set([...layout.matchAll(/`server\/([a-z-]+)\/`/g)].map((m) => m[1]!));
    const rooms = readdirSync(join(ROOT, "server")).filter((name) => statSync(join(ROOT, "server", name)).isDirectory());
    assert.deepEqual(rooms.filter((room) => !named.has(room)).sort(), [], "rooms missing from the README's layout");
    assert.deepEqual([...named].filter((room) => !rooms.includes(room)).sort(), [], "rooms in the README that are not in the tree");
  });

  it("keeps every server/ file under 500 lines, except response renderers and demo data", () => {
    const long = files
      .filter((f) => f.startsWith(join(ROOT, "server")))
      .map((f) => ({ file: relative(ROOT, f), lines: readFileSync(f, "utf8").split("\n").length }))
      .filter(({ file, lines }) => lines > 500 && !LONG.has(file));
    assert.deepEqual(long, []);
  });

  it("tests wait through test/support/wait.ts, never a hand-rolled deadline loop", () => {
    const loops = sources(join(ROOT, "test"))
      .filter((file) => !file.endsWith(join("support", "wait.ts")))
      .flatMap((file) => readFileSync(file, "utf8").split("\n").map((line, i) => ({ where: `${relative(ROOT, file)}:${i + 1}`, line })))
      .filter(({ line }) => /Date\.now\(\)\s*[<>]=?\s*(deadline|cap)\b/.test(line));
    assert.deepEqual(loops.map((l) => l.where), [], "use waitFor(what, probe, { deadlineMs }) instead");
  });

  it("waitFor returns the probe's answer, and fails naming what it waited for, at the deadline or a stall", async () => {
    let calls = 0;
    assert.equal(await waitFor("the third call", () => (++calls >= 3 ? `call ${calls}` : null), { deadlineMs: 60_000, intervalMs: 1 }), "call 3");
    await assert.rejects(waitFor("a thing that never comes", () => false, { deadlineMs: 20, intervalMs: 5, explain: () => "the scene" }), (e: Error) => {
      assert.match(e.message, /^timed out waiting for a thing that never comes \(gave up after \d+s\)\nthe scene$/);
      return true;
    });
    await assert.rejects(waitFor("progress", () => false, { deadlineMs: 60_000, intervalMs: 5, stall: { ms: 30, signature: () => "same" } }), /timed out waiting for progress \(nothing moved for \d+s\)/);
  });

  it("lint zones: the core, the tools, GitHub and processes each stay in their room", { timeout: 120_000 }, async () => {
    const eslint = new ESLint({ cwd: ROOT });
    const cases: Array<{ path: string; code: string; allowed: boolean }> = [
      { path: "server/state/zone-probe.ts", code: `import type { Forge } from "../gh/forge.js";\nexport type X = Forge;\n`, allowed: false },
      { path: "server/state/zone-probe.ts", code: `import type { FleetConfig } from "../../schemas/config.js";\nexport type X = FleetConfig;\n`, allowed: true },
      { path: "server/state/zone-probe.ts", code: `import { readFile } from "node:fs/promises";\nexport const x = readFile;\n`, allowed: false },
      { path: "server/tools/zone-probe.ts", code: `import { rebuild } from "../state/rebuild.js";\nexport const x = rebuild;\n`, allowed: false },
      { path: "server/tools/zone-probe.ts", code: `import type { Host } from "../host/api.js";\nexport type X = Host;\n`, allowed: true },
      { path: "server/fleet/zone-probe.ts", code: `import { Octokit } from "@octokit/rest";\nexport const x = Octokit;\n`, allowed: false },
      { path: "server/fleet/zone-probe.ts", code: `import { spawn } from "node:child_process";\nexport const x = spawn;\n`, allowed: false },
      { path: "server/fleet/zone-probe.ts", code: `import { startWorker } from "../runtimes/local/spawn.js";\nexport const x = startWorker;\n`, allowed: false },
      { path: "server/host/zone-probe.ts", code: `import { readProcTable } from "../runtimes/local/proc.js";\nexport const x = readProcTable;\n`, allowed: false },
      { path: "server/fleet/zone-probe.ts", code: `import { workerRuntime } from "../runtime/registry.js";\nexport const x = workerRuntime;\n`, allowed: true },
      { path: "server/runtime/zone-probe.ts", code: `import { LocalRuntime } from "../runtimes/local/runtime.js";\nexport const x = LocalRuntime;\n`, allowed: false },
      { path: "server/landing/zone-probe.ts", code: `import { execa } from "execa";\nexport const x = execa;\n`, allowed: false },
      { path: "server/runtimes/local/zone-probe.ts", code: `import { execa } from "execa";\nexport const x = execa;\n`, allowed: true },
      { path: "server/gh/zone-probe.ts", code: `import { spawn } from "child_process";\nexport const x = spawn;\n`, allowed: false },
    ];
    for (const c of cases) {
      const [result] = await eslint.lintText(c.code, { filePath: join(ROOT, c.path) });
      const zone = result!.messages.filter((m) => m.ruleId === "no-restricted-imports");
      assert.equal(zone.length, c.allowed ? 0 : 1, `${c.path}: ${c.code.split("\n")[0]} → ${JSON.stringify(zone.map((m) => m.message))}`);
    }
  });
});
