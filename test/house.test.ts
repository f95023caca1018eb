// The house rules that hold the code's shape, checked on the source tree: no import cycle
// between files (type imports included), few loose files in server/, files under 500 lines,
// the lint zones of eslint.config.js biting on a file that breaks them, and tests that wait for
// events through one helper.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, existsSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";
import { ESLint } from "eslint";
import { stronglyConnected } from "../server/state/dependencies.js";
import { ROOT } from "./support/paths.js";
import { waitFor } from "./support/wait.js";

/** Entry points: the only files that live directly in server/. */
const LOOSE = ["bin.ts", "cli.ts", "http.ts", "paths.ts", "server.ts", "version.ts"];
/** Files allowed past 500 lines: response renderers and demo data (docs/architecture.md). */
const LONG = new Set(["server/forge-emulator/render.ts", "server/demo/backlog.ts"]);

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

type ZoneCase = { path: string; code: string; allowed: boolean };

/** Lints each probe file's text as if it were at its path: one message of `rule` when refused, none when allowed. */
async function probe(eslint: ESLint, rule: string, cases: ZoneCase[]): Promise<void> {
  for (const c of cases) {
    const [result] = await eslint.lintText(c.code, { filePath: join(ROOT, c.path) });
    const zone = result!.messages.filter((m) => m.ruleId === rule);
    assert.equal(zone.length, c.allowed ? 0 : 1, `${c.path}: ${c.code.split("\n")[0]} → ${JSON.stringify(zone.map((m) => m.message))}`);
  }
}

describe("the house", () => {
  const files = [...sources(join(ROOT, "server")), ...sources(join(ROOT, "schemas"))].sort();

  it("has no import cycle between files, type imports included", () => {
    const index = new Map(files.map((f, i) => [f, i]));
    const edges = files.map((f) =>
      importsOf(f)
        .map((t) => index.get(t)!)
        .filter((t) => t !== undefined),
    );
    const cycles = stronglyConnected(
      files.map((_, i) => i),
      (n) => edges[n]!,
    ).filter((scc) => scc.length > 1 || edges[scc[0]!]!.includes(scc[0]!));
    const named = cycles.map((scc) => scc.map((n) => relative(ROOT, files[n]!)).sort());
    assert.deepEqual(named, [], `import cycles:\n${named.map((c) => c.join(" <-> ")).join("\n")}`);
    assert.ok(files.length > 100, `read ${files.length} files`);
  });

  it("keeps only entry points directly in server/", () => {
    const loose = readdirSync(join(ROOT, "server"))
      .filter((name) => name.endsWith(".ts"))
      .sort();
    assert.deepEqual(loose, LOOSE);
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
      .flatMap((file) =>
        readFileSync(file, "utf8")
          .split("\n")
          .map((line, i) => ({ where: `${relative(ROOT, file)}:${i + 1}`, line })),
      )
      .filter(({ line }) => /Date\.now\(\)\s*[<>]=?\s*(deadline|cap)\b/.test(line));
    assert.deepEqual(
      loops.map((l) => l.where),
      [],
      "use waitFor(what, probe, { deadlineMs }) instead",
    );
  });

  it("waitFor returns the probe's answer, and fails naming what it waited for, at the deadline or a stall", async () => {
    let calls = 0;
    assert.equal(await waitFor("the third call", () => (++calls >= 3 ? `call ${calls}` : null), { deadlineMs: 60_000, intervalMs: 1 }), "call 3");
    await assert.rejects(
      waitFor("a thing that never comes", () => false, { deadlineMs: 20, intervalMs: 5, explain: () => "the scene" }),
      (e: Error) => {
        assert.match(e.message, /^timed out waiting for a thing that never comes \(gave up after \d+s\)\nthe scene$/);
        return true;
      },
    );
    await assert.rejects(
      waitFor("progress", () => false, { deadlineMs: 60_000, intervalMs: 5, stall: { ms: 30, signature: () => "same" } }),
      /timed out waiting for progress \(nothing moved for \d+s\)/,
    );
  });

  it("lint zones: the core, the tools, GitHub and processes each stay in their room", { timeout: 120_000 }, async () => {
    const eslint = new ESLint({ cwd: ROOT });
    const cases: ZoneCase[] = [
      { path: "server/state/zone-probe.ts", code: `import type { Forge } from "../gh/forge.js";\nexport type X = Forge;\n`, allowed: false },
      {
        path: "server/state/zone-probe.ts",
        code: `import type { FleetConfig } from "../../schemas/config.js";\nexport type X = FleetConfig;\n`,
        allowed: true,
      },
      { path: "server/state/zone-probe.ts", code: `import { readFile } from "node:fs/promises";\nexport const x = readFile;\n`, allowed: false },
      { path: "server/tools/zone-probe.ts", code: `import { rebuild } from "../state/rebuild.js";\nexport const x = rebuild;\n`, allowed: false },
      { path: "server/tools/zone-probe.ts", code: `import type { Host } from "../host/api.js";\nexport type X = Host;\n`, allowed: true },
      { path: "server/fleet/zone-probe.ts", code: `import { Octokit } from "@octokit/rest";\nexport const x = Octokit;\n`, allowed: false },
      { path: "server/fleet/zone-probe.ts", code: `import { spawn } from "node:child_process";\nexport const x = spawn;\n`, allowed: false },
      {
        path: "server/fleet/zone-probe.ts",
        code: `import { startWorker } from "../runtimes/local/spawn.js";\nexport const x = startWorker;\n`,
        allowed: false,
      },
      {
        path: "server/host/zone-probe.ts",
        code: `import { readProcTable } from "../runtimes/local/proc.js";\nexport const x = readProcTable;\n`,
        allowed: false,
      },
      {
        path: "server/fleet/zone-probe.ts",
        code: `import { workerRuntime } from "../runtimes/registry.js";\nexport const x = workerRuntime;\n`,
        allowed: true,
      },
      { path: "server/landing/zone-probe.ts", code: `import { execa } from "execa";\nexport const x = execa;\n`, allowed: false },
      { path: "server/runtimes/local/zone-probe.ts", code: `import { execa } from "execa";\nexport const x = execa;\n`, allowed: true },
      { path: "server/gh/zone-probe.ts", code: `import { spawn } from "child_process";\nexport const x = spawn;\n`, allowed: false },
    ];
    await probe(eslint, "no-restricted-imports", cases);
  });

  /** scripts/rooms.mjs: the rooms' table the linter's afk/rooms rule keeps. */
  type RoomTable = { ROOMS: Record<string, { floor: number; may: string[] }>; roomOf(file: string): string | null };
  const rooms = (): Promise<RoomTable> => import(pathToFileURL(join(ROOT, "scripts", "rooms.mjs")).href) as Promise<RoomTable>;

  it("every folder of server/ is a room, and every room's imports run down a floor", async () => {
    const { ROOMS, roomOf } = await rooms();
    const found = new Set(files.map((f) => roomOf(f)).filter((r): r is string => r !== null));
    assert.deepEqual([...found].filter((r) => !(r in ROOMS)).sort(), [], "folders of server/ missing from scripts/rooms.mjs");
    assert.deepEqual(
      Object.keys(ROOMS)
        .filter((r) => !found.has(r))
        .sort(),
      [],
      "rooms in scripts/rooms.mjs with no file",
    );
    const up = Object.entries(ROOMS).flatMap(([room, { floor, may }]) =>
      may.filter((m) => !(m in ROOMS) || ROOMS[m]!.floor >= floor).map((m) => `${room} (floor ${floor}) → ${m} (floor ${ROOMS[m]?.floor})`),
    );
    assert.deepEqual(up, [], "an arrow that does not run down a floor");
    // And what the files import is what the table allows (the linter says the same, file by file).
    const arrows = new Set(
      files
        .flatMap((f) => importsOf(f).map((t) => [roomOf(f), roomOf(t)] as const))
        .filter(([a, b]) => a !== b && b !== "leaf")
        .map(([a, b]) => `${a} → ${b}`),
    );
    const refused = [...arrows].filter((arrow) => {
      const [from, to] = arrow.split(" → ") as [string, string];
      return !ROOMS[from]!.may.includes(to);
    });
    assert.deepEqual(refused, [], "imports the rooms' table does not allow");
  });

  it("docs/architecture.md's rooms table says what scripts/rooms.mjs says", async () => {
    const { ROOMS } = await rooms();
    const doc = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");
    const section = doc.slice(doc.indexOf("## Rooms"), doc.indexOf("## One tick"));
    const said: Record<string, { floor: number; may: string[] }> = {};
    for (const line of section.split("\n").filter((l) => l.startsWith("| `"))) {
      const cells = line.split(" | ");
      const first = cells[0]!.slice(2);
      const room = first.startsWith("`schemas/`")
        ? "schemas"
        : first.startsWith("`server/server.ts`")
          ? "mcp"
          : first.startsWith("`server/bin.ts`")
            ? "entry"
            : /^`server\/([a-z-]+)\/`/.exec(first)?.[1];
      if (room === undefined) continue;
      const cell = /^floor (\d+): ([^;|]*)/.exec(cells.at(-1)!);
      assert.ok(cell, `the rooms table's row for ${room} gives no "floor N: rooms"`);
      said[room] = { floor: Number(cell[1]), may: [...cell[2]!.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!) };
    }
    const want = Object.fromEntries(
      Object.entries(ROOMS)
        .filter(([r]) => r !== "leaf")
        .map(([r, v]) => [r, { floor: v.floor, may: [...v.may] }]),
    );
    assert.deepEqual(said, want);
  });

  it("lint zones: the rooms' table bites (afk/rooms), on type imports too", { timeout: 120_000 }, async () => {
    const eslint = new ESLint({ cwd: ROOT });
    const cases: ZoneCase[] = [
      { path: "server/landing/zone-probe.ts", code: `import type { RepoFleet } from "../fleet/repo-fleet.js";\nexport type X = RepoFleet;\n`, allowed: false },
      { path: "server/landing/zone-probe.ts", code: `import { connect } from "../host/connection.js";\nexport const x = connect;\n`, allowed: false },
      { path: "server/host/zone-probe.ts", code: `import { daemonPaths } from "../daemon/paths.js";\nexport const x = daemonPaths;\n`, allowed: false },
      { path: "server/daemon/zone-probe.ts", code: `import { statusTool } from "../tools/status.js";\nexport const x = statusTool;\n`, allowed: false },
      { path: "server/gh/zone-probe.ts", code: `export { laneDir } from "../lanes/index.js";\n`, allowed: false },
      { path: "server/fleet/effects/zone-probe.ts", code: `import { landPull } from "../../landing/land.js";\nexport const x = landPull;\n`, allowed: true },
      { path: "server/landing/zone-probe.ts", code: `import { version } from "../version.js";\nexport const x = version;\n`, allowed: true },
      {
        path: "server/worker-port/zone-probe.ts",
        code: `import { LocalRuntime } from "../runtimes/local/runtime.js";\nexport const x = LocalRuntime;\n`,
        allowed: false,
      },
      {
        path: "server/fleet/zone-probe.ts",
        code: `import type { WorkerRuntime } from "../worker-port/port.js";\nexport type X = WorkerRuntime;\n`,
        allowed: true,
      },
    ];
    await probe(eslint, "afk/rooms", cases);
  });
});
