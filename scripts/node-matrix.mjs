#!/usr/bin/env node
// The suite on other Node lines: `node scripts/node-matrix.mjs 22 24` (or `npm run
// test:node22`, `test:node24`, `test:matrix`). Each major's official binary comes from the npm
// registry — the `node-<platform>-<arch>` package that the `node` package installs, fetched
// directly so no install script runs — into .node-matrix/<major>/. It builds once, then runs
// every test file with that Node first on PATH, so child processes the tests start use it too.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { testFiles } from "./test-files.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const majors = process.argv.slice(2);
if (majors.length === 0 || majors.some((m) => !/^\d+$/.test(m))) {
  console.error("usage: node scripts/node-matrix.mjs MAJOR [MAJOR ...]   (e.g. 22 24)");
  process.exit(2);
}

/** The node binary of one major line, installed on first use. */
function nodeBinary(major) {
  const pkg = `node-${process.platform}-${process.arch}`;
  const prefix = join(root, ".node-matrix", major);
  const bin = join(prefix, "node_modules", pkg, "bin", "node");
  if (!existsSync(bin)) {
    console.error(`node-matrix: fetching ${pkg}@${major} into ${prefix}`);
    execFileSync("npm", ["install", "--prefix", prefix, "--no-save", "--no-package-lock", "--ignore-scripts", "--no-audit", "--no-fund", `${pkg}@${major}`], { stdio: "inherit" });
  }
  return bin;
}

const binaries = majors.map((major) => [major, nodeBinary(major)]);
execFileSync("npm", ["run", "build"], { cwd: root, stdio: "inherit" });
const files = testFiles(process.env.AFK_TEST_KIND ?? "all", root);

const results = [];
for (const [major, bin] of binaries) {
  const version = execFileSync(bin, ["--version"], { encoding: "utf8" }).trim();
  console.error(`node-matrix: the suite on Node ${version}`);
  const env = { ...process.env, PATH: `${dirname(bin)}:${process.env.PATH ?? ""}` };
  const run = spawnSync(bin, ["--test", "--test-concurrency=2", ...files], { cwd: root, env, stdio: "inherit" });
  results.push({ major, version, status: run.status ?? 1 });
}
for (const r of results) console.error(`node-matrix: Node ${r.version}: ${r.status === 0 ? "pass" : `FAIL (exit ${r.status})`}`);
process.exit(results.every((r) => r.status === 0) ? 0 : 1);
