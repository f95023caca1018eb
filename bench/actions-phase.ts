// One phase of the `actions` section (bench/fleet-actions.ts) in a node process of its own, as a
// user runs one host: its RSS and CPU are then the host's alone, not what earlier phases or
// sections of the same bench run left in the process (V8 keeps memory it grew). Started by the
// section; writes the phase's figures as JSON to the file its last argument names. With `init`,
// it is instead the one-time `afk-mcp actions init` a user runs, kept out of the host's process.
//
//   node dist/bench/actions-phase.js <local|actions> <workers> <spec as JSON> <out file>
//   GITHUB_TOKEN=… node dist/bench/actions-phase.js init <api url> <repo> <state dir>
import { writeFile } from "node:fs/promises";
import { initWorkflow, phase, type ActionsBenchSpec } from "./fleet-actions.js";
import { benchContext } from "./section.js";

async function main(argv: string[]): Promise<number> {
  if (argv[0] === "init") {
    // `afk-mcp actions init` and its PR merged, as a user does once (the token comes in the environment).
    const [, apiUrl, repo, stateDir] = argv;
    const token = process.env.GITHUB_TOKEN;
    if (!apiUrl || !repo || !stateDir || !token) throw new Error("usage: GITHUB_TOKEN=… node dist/bench/actions-phase.js init <api url> <repo> <state dir>");
    await initWorkflow(apiUrl, repo, token, stateDir);
    return 0;
  }
  const [runtime, workers, spec, out] = argv;
  if ((runtime !== "local" && runtime !== "actions") || !workers || !spec || !out) {
    process.stderr.write("usage: node dist/bench/actions-phase.js <local|actions> <workers> <spec as JSON> <out file>\n");
    return 2;
  }
  const { ctx, memory, cleanUp } = benchContext();
  memory.start();
  try {
    const result = await phase(ctx, runtime, Number(workers), JSON.parse(spec) as ActionsBenchSpec);
    await writeFile(out, JSON.stringify(result));
    return 0;
  } finally {
    memory.stop();
    await cleanUp();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench: actions phase failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
