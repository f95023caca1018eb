// The demo's sample project as data: `textkit`, a tiny dependency-free JS library of string
// utilities whose `npm test` (node --test) runs without an install. These files are the local
// forge's initial commit; the backlog's recipes add one module (and its test) per issue.

export const SAMPLE_NAME = "textkit";

/** The command CI runs in a checkout of the sample (no install step: there are no dependencies). */
export const SAMPLE_TEST_ARGS: readonly string[] = ["--test"];

const PACKAGE_JSON = `${JSON.stringify(
  {
    name: SAMPLE_NAME,
    version: "0.1.0",
    description: "Small, dependency-free string utilities.",
    type: "module",
    // A wildcard export: every new module under src/ is importable as textkit/<name> without
    // touching this file, so parallel changes never collide here.
    exports: { "./*": "./src/*.js" },
    scripts: { test: "node --test" },
    engines: { node: ">=20" },
    license: "MIT",
  },
  null,
  2,
)}\n`;

const README = `# textkit

Small, dependency-free string utilities: one module per helper under \`src/\`, one test file
per module under \`test/\`.

    import { capitalize } from "textkit/case";

Run the tests with \`npm test\` (Node 20 or newer; nothing to install).

This repository is the sample project of \`afk-mcp demo\`: its issues are worked by a fleet
of scripted agents.
`;

const CASE_JS = `// Case helpers: the first letter of a text, or of every word, in upper case.

/** "hello world" -> "Hello world". The rest of the text is left as it is. */
export function capitalize(text) {
  if (typeof text !== "string") throw new TypeError("capitalize: expected a string");
  if (text.length === 0) return text;
  const first = String.fromCodePoint(text.codePointAt(0));
  return first.toUpperCase() + text.slice(first.length);
}

/** "the QUICK  fox" -> "The Quick  Fox". Whitespace is kept as it is. */
export function titleCase(text) {
  if (typeof text !== "string") throw new TypeError("titleCase: expected a string");
  return text.replace(/\\S+/g, (word) => capitalize(word.toLowerCase()));
}
`;

const CASE_TEST_JS = `import assert from "node:assert/strict";
import { test } from "node:test";
import { capitalize, titleCase } from "../src/case.js";

test("capitalize upper-cases the first letter only", () => {
  assert.equal(capitalize("hello world"), "Hello world");
  assert.equal(capitalize("élan"), "Élan");
  assert.equal(capitalize("x"), "X");
  assert.equal(capitalize(""), "");
});

test("capitalize refuses a non-string", () => {
  assert.throws(() => capitalize(42), TypeError);
});

test("titleCase capitalizes every word and keeps the spacing", () => {
  assert.equal(titleCase("the QUICK  fox"), "The Quick  Fox");
  assert.equal(titleCase(""), "");
});
`;

const WHITESPACE_JS = `// Whitespace helpers.

/** Runs of whitespace become one space; the ends are trimmed. */
export function collapseWhitespace(text) {
  if (typeof text !== "string") throw new TypeError("collapseWhitespace: expected a string");
  return text.replace(/\\s+/g, " ").trim();
}
`;

const WHITESPACE_TEST_JS = `import assert from "node:assert/strict";
import { test } from "node:test";
import { collapseWhitespace } from "../src/whitespace.js";

test("collapseWhitespace joins runs of spaces, tabs and newlines", () => {
  assert.equal(collapseWhitespace("  a \\t b\\n\\nc  "), "a b c");
  assert.equal(collapseWhitespace(""), "");
});
`;

/** path -> content of the sample's initial commit. */
export const SAMPLE_FILES: Readonly<Record<string, string>> = Object.freeze({
  ".gitignore": "node_modules/\n",
  "README.md": README,
  "package.json": PACKAGE_JSON,
  "src/case.js": CASE_JS,
  "src/whitespace.js": WHITESPACE_JS,
  "test/case.test.js": CASE_TEST_JS,
  "test/whitespace.test.js": WHITESPACE_TEST_JS,
});
