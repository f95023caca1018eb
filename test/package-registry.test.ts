// Listing in the MCP Registry: server.json validates against the Registry's published schema
// (vendored in test/registry/, so the test runs offline), describes the npm package over stdio
// with its environment (secrets marked), ships in the package, and cannot drift from
// package.json: its name is package.json's mcpName, its versions are package.json's version.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";
import { ROOT } from "./support/paths.js";

type AddFormats = (ajv: Ajv) => Ajv;
const addFormats: AddFormats = (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

interface EnvVar {
  name: string;
  isSecret?: boolean;
  isRequired?: boolean;
}
interface ServerJson {
  $schema: string;
  name: string;
  version: string;
  packages: Array<{ registryType: string; identifier: string; version: string; transport: { type: string }; environmentVariables?: EnvVar[] }>;
}
interface PackageJson {
  name: string;
  version: string;
  mcpName?: string;
  files: string[];
}

const read = <T>(path: string): T => JSON.parse(readFileSync(join(ROOT, path), "utf8")) as T;
const schema = read<{ $id: string }>("test/registry/server.schema.json");
// strictRequired off: the published schema requires "valueHint" in an anyOf branch that does not define it (the property is defined beside it).
const validate = addFormats(new Ajv({ strict: true, strictRequired: false, allErrors: true })).compile(schema);

/** What keeps server.json in step with package.json; [] when it is. */
export function drift(server: ServerJson, pkg: PackageJson): string[] {
  const out: string[] = [];
  if (server.name !== pkg.mcpName) out.push(`name ${server.name} is not package.json's mcpName ${String(pkg.mcpName)}`);
  if (server.version !== pkg.version) out.push(`version ${server.version} is not package.json's ${pkg.version}`);
  const npm = server.packages.filter((p) => p.registryType === "npm");
  if (npm.length !== 1) out.push(`${npm.length} npm packages, expected one`);
  for (const p of npm) {
    if (p.identifier !== pkg.name) out.push(`package ${p.identifier} is not package.json's name ${pkg.name}`);
    if (p.version !== pkg.version) out.push(`package version ${p.version} is not package.json's ${pkg.version}`);
  }
  return out;
}

describe("server.json for the MCP Registry", () => {
  const server = read<ServerJson>("server.json");
  const pkg = read<PackageJson>("package.json");

  it("validates against the Registry's published server.json schema", () => {
    assert.equal(validate(server), true, JSON.stringify(validate.errors, null, 2));
    assert.equal(server.$schema, schema.$id, "names the schema it was checked against");
  });

  it("the schema refuses what the Registry refuses (so the check means something)", () => {
    const bad = structuredClone(server) as unknown as Record<string, unknown> & ServerJson;
    bad.packages[0]!.version = "latest";
    assert.equal(validate(bad), false, "a floating version");
    assert.equal(validate({ ...server, name: "no-slash" }), false, "a name without its namespace");
    assert.equal(validate({ ...server, description: "x".repeat(101) }), false, "a description over 100 characters");
  });

  it("describes the npm package over stdio, its token variables secret and none required", () => {
    const npm = server.packages.find((p) => p.registryType === "npm")!;
    assert.equal(npm.transport.type, "stdio");
    const vars = new Map((npm.environmentVariables ?? []).map((v) => [v.name, v]));
    for (const name of ["GITHUB_TOKEN", "GH_TOKEN"]) assert.deepEqual([vars.get(name)?.isSecret, vars.get(name)?.isRequired], [true, false], name);
    for (const name of ["GITHUB_API_URL", "AFK_STATE_DIR"]) assert.equal(vars.get(name)?.isSecret, false, name);
    for (const v of vars.values()) assert.equal(typeof v.isRequired, "boolean", `${v.name} says whether it is required`);
  });

  it("is in step with package.json, and a drifted copy fails", () => {
    assert.deepEqual(drift(server, pkg), []);
    assert.match(pkg.mcpName ?? "", /^io\.github\.[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/);
    assert.deepEqual(drift({ ...server, version: "9.9.9" }, pkg), ["version 9.9.9 is not package.json's 0.1.0".replace("0.1.0", pkg.version)]);
    assert.equal(drift({ ...server, name: "io.github.someone/else" }, pkg).length, 1);
    const renamed = structuredClone(server);
    renamed.packages[0]!.identifier = "afk-mcp-fork";
    assert.match(drift(renamed, pkg).join("; "), /package afk-mcp-fork is not package.json's name/);
  });

  it("ships in the package", () => {
    assert.ok(pkg.files.includes("server.json"), `package.json files: ${pkg.files.join(", ")}`);
  });
});
