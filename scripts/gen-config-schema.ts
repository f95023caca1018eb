// Writes schemas/config.schema.json (the JSON Schema editors and validators use for
// .github/afk.json) and README-CONFIG.md (the key reference) from the one zod schema in
// schemas/config.ts. Run `npx tsx scripts/gen-config-schema.ts` after changing that schema;
// test/config-schema.test.ts fails while either file is stale.
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { fleetConfigJsonSchema } from "../schemas/config.js";

export const SCHEMA_FILE = "schemas/config.schema.json";
export const REFERENCE_FILE = "README-CONFIG.md";
export const REFRESH_COMMAND = "npx tsx scripts/gen-config-schema.ts";

/** The committed JSON Schema, byte for byte. */
export function renderConfigSchema(): string {
  return `${JSON.stringify(fleetConfigJsonSchema(), null, 2)}\n`;
}

interface Node {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  properties?: Record<string, Node>;
  items?: Node;
  anyOf?: Node[];
}

/** The README section: every key with its type, default and meaning. */
export function renderConfigReference(): string {
  const root = fleetConfigJsonSchema() as Node;
  const props = Object.entries(root.properties ?? {}).filter(([key]) => key !== "$schema");
  const out: string[] = [
    "## Configuration reference",
    "",
    "<!-- Generated from schemas/config.ts by `" + REFRESH_COMMAND + "`; do not edit by hand. -->",
    "",
    "A repository commits its fleet config as `.github/afk.json`; `project_start`'s `config` and",
    "`afk-mcp config --set key.path=value` override it for one run (objects merge, lists replace).",
    "Every key is optional. Unknown keys are errors, so a typo never passes silently;",
    "`afk-mcp config` validates the file and prints it with every default filled in.",
    "",
    "```json",
    JSON.stringify(EXAMPLE, null, 2),
    "```",
    "",
    "Point `$schema` at `schemas/config.schema.json` (shipped in the package) for completion in editors.",
    "",
    "| key | type | default | meaning |",
    "|---|---|---|---|",
  ];
  for (const [key, node] of props) {
    if (node.properties || node.items?.properties) continue;
    out.push(row(key, node));
  }
  for (const [key, node] of props) {
    const item = node.items?.properties ? node.items : undefined;
    const group = node.properties ? node : item;
    if (!group) continue;
    out.push("", `### \`${key}\``, "", cell(node.description ?? ""), "");
    if (item) out.push(`Default: \`${JSON.stringify(node.default)}\`. Each selector:`, "");
    out.push("| key | type | default | meaning |", "|---|---|---|---|");
    for (const [sub, child] of Object.entries(group.properties ?? {})) {
      out.push(row(`${key}${item ? "[]" : ""}.${sub}`, child, key === "selectors" && sub === "label" ? "`labels.ready`" : undefined));
    }
  }
  return `${out.join("\n")}\n`;
}

/** The example shown in the reference (test/config-schema.test.ts checks that it is valid). */
export const EXAMPLE = {
  $schema: "../node_modules/afk-mcp/schemas/config.schema.json",
  selectors: [{ tags: ["api"] }, {}],
  concurrency: 4,
  gate: { ci: "local", local_command: "npm ci && npm test" },
  worker: { env_passthrough: ["AFK_USER_*", "ANTHROPIC_API_KEY"] },
};

function row(key: string, node: Node, defaultText?: string): string {
  return `| \`${key}\` | ${cell(typeOf(node))} | ${defaultText ?? cell(defaultOf(node))} | ${cell(node.description ?? "")} |`;
}

function typeOf(node: Node): string {
  if (node.anyOf) return node.anyOf.map(typeOf).join(" or ");
  if (node.enum) return node.enum.map((v) => JSON.stringify(v)).join(" | ");
  const types = (Array.isArray(node.type) ? node.type : [node.type ?? "any"]).map((t) => {
    if (t === "array") return `list of ${node.items?.type === "integer" ? "integers" : node.items?.type === "string" ? "strings" : "objects"}`;
    if (t === "integer" && node.minimum !== undefined && node.maximum !== undefined) return `integer ${node.minimum}–${node.maximum}`;
    return t;
  });
  return types.join(" or ");
}

function defaultOf(node: Node): string {
  if (!("default" in node)) return "—";
  const value = node.default;
  if (Array.isArray(value) && JSON.stringify(value).length > 40) return `${value.length} entries (\`afk-mcp config\`)`;
  return `\`${JSON.stringify(value)}\``;
}

// Pipes would end a table cell; newlines would end the row.
function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("cannot find the repository root (no package.json above the script)");
    dir = parent;
  }
  return dir;
}

export { repoRoot };

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = repoRoot();
  writeFileSync(join(root, SCHEMA_FILE), renderConfigSchema());
  writeFileSync(join(root, REFERENCE_FILE), renderConfigReference());
  process.stderr.write(`wrote ${SCHEMA_FILE} and ${REFERENCE_FILE}\n`);
}
