// `npm run test:unit` / `test:integration` / `test:long`: one kind of the built tests (the kinds are
// in scripts/test-files.mjs). Unit tests are pure (the core, schemas, pure worker logic, the house
// rules) and take seconds; integration tests run the local forge over HTTP, real git, real
// processes and the MCP server; the long ones are the end-to-end scenarios `npm test` leaves out.
import { spawnSync } from "node:child_process";
import { testFiles } from "./test-files.mjs";

const kind = process.argv[2];
let files;
try {
  files = testFiles(kind);
} catch (error) {
  console.error(`usage: node scripts/test-kind.mjs unit|integration|long|ci|all (after npm run build): ${error.message}`);
  process.exit(2);
}
const result = spawnSync(process.execPath, ["--test", "--test-concurrency=2", ...files], { stdio: "inherit" });
process.exit(result.status ?? 1);
