// The committed JSON Schema and README reference are generated from schemas/config.ts; this
// fails while either is stale, and checks that the schema says what the zod schema says.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { DEFAULT_CONFIG, fleetConfigJsonSchema } from "../schemas/config.js";
import { parseConfig } from "../server/host/config-load.js";
import { EXAMPLE, REFERENCE_FILE, REFRESH_COMMAND, SCHEMA_FILE, renderConfigReference, renderConfigSchema, repoRoot } from "../scripts/gen-config-schema.js";

const committed = (file: string): string => readFileSync(join(repoRoot(), file), "utf8");

test(`${SCHEMA_FILE} is up to date with schemas/config.ts`, () => {
  assert.ok(committed(SCHEMA_FILE) === renderConfigSchema(), `${SCHEMA_FILE} is stale: run \`${REFRESH_COMMAND}\` and commit the result`);
});

test(`${REFERENCE_FILE} is up to date with schemas/config.ts`, () => {
  assert.ok(committed(REFERENCE_FILE) === renderConfigReference(), `${REFERENCE_FILE} is stale: run \`${REFRESH_COMMAND}\` and commit the result`);
});

test("the JSON Schema names itself and refuses unknown keys", () => {
  const schema = fleetConfigJsonSchema();
  assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
  assert.equal(schema.title, "afk-mcp fleet config");
  assert.equal(typeof schema.description, "string");
  assert.equal(schema.additionalProperties, false);
});

test("the JSON Schema agrees with zod on what a user may write", () => {
  const validate = new Ajv2020({ strict: false, allErrors: true }).compile(fleetConfigJsonSchema());
  const rows: { name: string; raw: unknown; valid: boolean }[] = [
    { name: "empty", raw: {}, valid: true },
    { name: "the canonical defaults", raw: DEFAULT_CONFIG, valid: true },
    { name: "the README example", raw: EXAMPLE, valid: true },
    { name: "a typo", raw: { gate: { cii: "local" } }, valid: false },
    { name: "a wrong enum", raw: { landing: { strategy: "rebase" } }, valid: false },
    { name: "out of range", raw: { concurrency: 65 }, valid: false },
    { name: "a wrong type", raw: { retry: "2" }, valid: false },
    { name: "an unknown selector facet", raw: { selectors: [{ lable: "x" }] }, valid: false },
  ];
  for (const row of rows) {
    assert.equal(validate(row.raw), row.valid, `${row.name}: ${JSON.stringify(validate.errors)}`);
    let zodValid = true;
    try {
      parseConfig(row.raw);
    } catch {
      zodValid = false;
    }
    assert.equal(zodValid, row.valid, `zod disagrees on ${row.name}`);
  }
});

test("the JSON Schema shows every leaf default", () => {
  const schema = fleetConfigJsonSchema() as { properties: Record<string, { default?: unknown; properties?: Record<string, { default?: unknown }> }> };
  for (const [key, node] of Object.entries(schema.properties)) {
    if (key === "$schema") continue;
    assert.ok("default" in node, `${key} has no default`);
    for (const [sub, child] of Object.entries(node.properties ?? {})) assert.ok("default" in child, `${key}.${sub} has no default`);
  }
});
