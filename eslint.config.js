// Lint: typescript-eslint's recommended rules, plus the house rule that the server never
// writes to stdout (it is the MCP JSON-RPC stream); the CLI's own printing goes through
// server/cli/print.ts, which is the one exemption.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "scripts/*.mjs", "scratch/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "error",
    },
  },
  {
    files: ["server/**/*.ts"],
    ignores: ["server/cli/print.ts"],
    rules: {
      "no-console": ["error", { allow: ["error", "warn"] }],
      "no-restricted-properties": ["error", { object: "process", property: "stdout", message: "stdout is the MCP stream: print through server/cli/print.ts (CLI only)" }],
    },
  },
);
