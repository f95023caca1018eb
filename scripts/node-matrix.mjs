#!/usr/bin/env node
// The suite on each supported Node line: `node scripts/node-matrix.mjs 22 24` (or `npm run
// test:node22`, `test:node24`, `test:matrix`). Each line's official binary is a devDependency
// from the npm registry (the `node` package, whose install step puts the platform's binary in
// place): `node` is Node 22, the oldest line afk-mcp supports, and the one npm scripts put first
// on PATH, so `npm test` itself runs on it; `node24` is the newest LTS. Nothing is downloaded at
// run time. It builds once (unless --no-build: `npm test` has just built), then runs the files of
// one kind (--kind K, default `all`) with that Node first on PATH, so child processes the tests
// start use it too. `npm test` ends with `--no-build --kind unit 24`: the pure core on Node 24.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { testFiles } from "./test-files.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
/** Each supported major and the devDependency that holds its binary. */
const LINES = { 22: "node", 24: "node24" };
const usage = `usage: node scripts/node-matrix.mjs [--no-build] [--kind KIND] MAJOR [MAJOR ...]   (MAJOR: ${Object.keys(LINES).join(", ")})`;
const argv = process.argv.slice(2);
const build = !argv.includes("--no-build");
const at = argv.indexOf("--kind");
const kind = at >= 0 ? argv[at + 1] : "all";
const majors = argv.filter((a, i) => a !== "--no-build" && a !== "--kind" && !(at >= 0 && i === at + 1));
if (!kind || majors.length === 0 || majors.some((m) => !(m in LINES))) {
  console.error(usage);
  process.exit(2);
}

/** The node binary of one major line, from its devDependency. */
function nodeBinary(major) {
  const bin = join(root, "node_modules", LINES[major], "bin", "node");
  if (!existsSync(bin)) {
    console.error(`node-matrix: ${bin} is missing: run npm ci (the devDependency ${LINES[major]} holds Node ${major})`);
    process.exit(2);
  }
  return bin;
}

const binaries = majors.map((major) => [major, nodeBinary(major)]);
if (build) execFileSync("npm", ["run", "build"], { cwd: root, stdio: "inherit" });
const files = testFiles(kind, root);

const results = [];
for (const [major, bin] of binaries) {
  const version = execFileSync(bin, ["--version"], { encoding: "utf8" }).trim();
  if (!version.startsWith(`v${major}.`)) {
    console.error(`node-matrix: ${bin} is Node ${version}, not ${major}: run npm ci`);
    process.exit(2);
  }
  console.error(`node-matrix: ${files.length} test files on Node ${version}`);
  const env = { ...process.env, PATH: `${dirname(bin)}:${process.env.PATH ?? ""}` };
  const run = spawnSync(bin, [join(root, "scripts", "test-run.mjs"), "--kind", kind], { cwd: root, env, stdio: "inherit" });
  results.push({ major, version, status: run.status ?? 1 });
}
for (const r of results) console.error(`node-matrix: Node ${r.version}: ${r.status === 0 ? "pass" : `FAIL (exit ${r.status})`}`);
process.exit(results.every((r) => r.status === 0) ? 0 : 1);
