// Which built test files a test command runs. One list, read by scripts/test-run.mjs --kind (npm test,
// test:long, test:all, test:unit, test:integration), `test:loaded` and the Node matrix.
//
//   unit        the pure core, schemas, pure worker logic, the house rules: seconds
//   long        the long end-to-end scenarios: each file keeps two cores busy for minutes
//   ci          everything but `long`: what `npm test` and CI run
//   integration everything but `unit`
//   all         every file
//
// Why `long` is apart: on a small CI machine (2 cores, where starting a process costs ~10 ms) the
// whole suite took ~43 minutes, ~33 of them in these files, and CI killed such a run after 909 s.
// They still run before a change lands (`npm run test:long`, or `npm run test:all`); the README says
// so. Each room keeps integration tests of its own in the `ci` set.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const UNIT = [/^core-/, /^config-schema\./, /^workers-(breaker|env|quota|runtime-failures)\./, /^house\./, /^requests-justified\./, /^cli-words\./];

/** Each long file (its name without `.test.js`) and the minutes its tests took in a whole run on that machine. */
export const LONG = new Map([
  ["daemon", 10], // survives kill -9 of the session and of the daemon, lapses, drains (17 real-process scenarios)
  ["fleet", 8], // the fleet end to end through MCP with scripted workers (10 scenarios at once)
  ["fleet-review", 8],
  ["fleet-events", 6],
  ["landing-train", 5],
  ["landing", 4],
  ["e2e-demo", 4], // the demo's backlog through a real MCP client
  ["fleet-ci-silence", 3],
  ["fleet-kill-landing", 2],
  ["daemon-faults", 2],
  ["fleet-mergequeue", 2],
  ["fleet-trains", 2],
  ["daemon-idle", 2],
  ["landing-git-contention", 2],
  ["fleet-requests", 2],
  ["daemon-drain", 1], // daemon stop drains first; afk-mcp run's registration lapses after kill -9
  ["landing-default", 1],
  ["host-shutdown", 1],
  ["fleet-checkpoint", 1],
  ["fleet-faults", 1],
]);

const KINDS = ["unit", "integration", "ci", "long", "all"];

/** The built test files (paths relative to `root`) of one kind, sorted; throws on an unknown kind. */
export function testFiles(kind, root = ".") {
  if (!KINDS.includes(kind)) throw new Error(`unknown test kind "${kind}": one of ${KINDS.join(", ")}`);
  const dir = join(root, "dist", "test");
  const names = readdirSync(dir).filter((f) => f.endsWith(".test.js")).sort();
  const missing = [...LONG.keys()].filter((name) => !names.includes(`${name}.test.js`));
  if (missing.length > 0) throw new Error(`scripts/test-files.mjs lists long test files that do not exist: ${missing.join(", ")} (renamed? run npm run build)`);
  const isUnit = (f) => UNIT.some((re) => re.test(f));
  const isLong = (f) => LONG.has(f.slice(0, -".test.js".length));
  const pick = {
    unit: isUnit,
    integration: (f) => !isUnit(f),
    ci: (f) => !isLong(f),
    long: isLong,
    all: () => true,
  }[kind];
  return names.filter(pick).map((f) => join("dist", "test", f));
}

// `node scripts/test-files.mjs KIND`: the files, one per line (for shell scripts).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    for (const file of testFiles(process.argv[2] ?? "ci")) console.log(file);
  } catch (error) {
    console.error(`test-files: ${error.message}`);
    process.exit(2);
  }
}
