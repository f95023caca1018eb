// Which built test files a test command runs, and in what order. One list, read by
// scripts/test-run.mjs --kind (npm test, test:quick, test:long, test:unit, test:integration),
// `test:loaded` and the Node matrix.
//
//   all          every file: what `npm test` and CI run
//   quick        everything but `long`: the inner loop, a few minutes
//   long         the long end-to-end scenarios: each file keeps two cores busy for minutes
//   unit         the pure core, schemas, pure worker logic, the house rules: seconds
//   integration  everything but `unit`
//
// Nothing is left out of CI: `ci` is another name for `all`. Files run two at a time, the
// longest first (by the minutes below), so that the run does not end with one long file alone
// on a core while the other idles.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const UNIT = [
  /^core-/,
  /^fakes-/,
  /^config-schema\./,
  /^workers-(breaker|env|quota|runtime-failures)\./,
  /^house\./,
  /^kit\./,
  /^requests-justified\./,
  /^cli-words\./,
  /^docs-links\./,
];

/** Each long file (its name without `.test.js`) and about the minutes it takes in a whole run on a 2-core machine. */
export const LONG = new Map([
  ["chaos", 9], // `npm run chaos -- --quick`: kills, restarts, faults, then a 30-issue two-host drain
  ["daemon", 6], // survives kill -9 of the session and of the daemon, lapses, drains (17 real-process scenarios)
  ["fleet", 5], // the fleet end to end through MCP with scripted workers (10 scenarios at once)
  ["fleet-review", 5],
  ["fleet-events", 4],
  ["landing-train", 3],
  ["landing", 3],
  ["e2e-demo", 3], // the demo's backlog through a real MCP client
  ["e2e-demo-engine", 2], // the demo's backlog drained by the real claude against the scripted model
  ["e2e-demo-actions", 2], // the demo's backlog with every worker a run on the local forge's Actions runner
  ["mcp-push", 2], // what the server pushes (list changes, board updates, log messages, progress), through the daemon too: 104 s in a whole run (SDK v2)
  ["runtimes-actions", 2], // five issues on the local forge's Actions runner with the real afk-mcp worker, then a run nobody picks up
  ["runtimes-adopt", 1], // a host killed mid-attempt, its actions run and its sandboxed worker adopted by the next
  ["runtimes-actions-cross", 2], // one issue's runner pushes into another's branch (a held victim, then one whose last push meets it): put back, blamed on the pusher
  ["runtimes-actions-waiting", 2], // a runner pushes onto a PR that waits to land: put back at the landing's turn; a user's push by hand still lands
  ["fleet-ci-silence", 2],
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

const KINDS = ["all", "ci", "quick", "long", "unit", "integration"];

/** The built test files (paths relative to `root`) of one kind, longest first; throws on an unknown kind. */
export function testFiles(kind, root = ".") {
  if (!KINDS.includes(kind)) throw new Error(`unknown test kind "${kind}": one of ${KINDS.join(", ")}`);
  const dir = join(root, "dist", "test");
  const names = readdirSync(dir)
    .filter((f) => f.endsWith(".test.js"))
    .sort();
  const missing = [...LONG.keys()].filter((name) => !names.includes(`${name}.test.js`));
  if (missing.length > 0) throw new Error(`scripts/test-files.mjs lists long test files that do not exist: ${missing.join(", ")} (renamed? run npm run build)`);
  const base = (f) => f.slice(0, -".test.js".length);
  const isUnit = (f) => UNIT.some((re) => re.test(f));
  const isLong = (f) => LONG.has(base(f));
  const pick = {
    all: () => true,
    ci: () => true,
    quick: (f) => !isLong(f),
    long: isLong,
    unit: isUnit,
    integration: (f) => !isUnit(f),
  }[kind];
  // Longest first; a file not on the long list counts as under a minute. Stable within a weight.
  const weight = (f) => LONG.get(base(f)) ?? 0;
  return names
    .filter(pick)
    .sort((a, b) => weight(b) - weight(a))
    .map((f) => join("dist", "test", f));
}

// `node scripts/test-files.mjs KIND`: the files, one per line (for shell scripts).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    for (const file of testFiles(process.argv[2] ?? "all")) console.log(file);
  } catch (error) {
    console.error(`test-files: ${error.message}`);
    process.exit(2);
  }
}
