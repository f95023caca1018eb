// `npm run test:unit` / `npm run test:integration`: the built tests split in two. Unit tests are
// pure (the core, schemas, pure worker logic, the house rules) and take seconds; integration
// tests run the local forge over HTTP, real git, real processes and the MCP server.
import { readdirSync } from "node:fs";
import { spawnSync } from "node:child_process";

const UNIT = [/^core-/, /^config-schema\./, /^workers-(breaker|env|quota|runtime-failures)\./, /^house\./, /^requests-justified\./, /^cli-words\./];
const kind = process.argv[2];
if (kind !== "unit" && kind !== "integration") {
  console.error("usage: node scripts/test-kind.mjs unit|integration (after npm run build)");
  process.exit(2);
}
const all = readdirSync("dist/test").filter((f) => f.endsWith(".test.js")).sort();
const files = all.filter((f) => UNIT.some((re) => re.test(f)) === (kind === "unit")).map((f) => `dist/test/${f}`);
const result = spawnSync(process.execPath, ["--test", "--test-concurrency=2", ...files], { stdio: "inherit" });
process.exit(result.status ?? 1);
