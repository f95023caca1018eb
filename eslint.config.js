// Lint: typescript-eslint's recommended rules, the house rule that the server never writes to
// stdout (it is the MCP JSON-RPC stream; the CLI's own printing goes through server/cli/print.ts,
// the one exemption), and the rooms' import boundaries (docs/architecture.md, "Rooms"):
// - server/state (the pure core) imports only its own files, the schemas and node:crypto;
// - server/tools import only the host interface (server/host/api.ts), the shared mechanisms
//   (server/kit), the schemas, the MCP SDK, zod and node:timers/promises;
// - server/dashboard imports only the host interface, the shared mechanisms, node:http and node:crypto;
// - only server/gh talks to GitHub (Octokit);
// - only the worker runtimes (server/runtimes/**) spawn processes (node:child_process, execa,
//   simple-git; the local gate command is the local runtime's too:
//   server/runtimes/local/gate-command.ts), except where a process is the thing itself: an
//   engine's version probe (server/agent/engine-probe.ts),
//   server/gh/git.ts (git is the transport to GitHub's repositories)
//   and server/gh/auth.ts (`gh auth token`); the local forge, which stands in for GitHub
//   (git http-backend, its bare repository); and the demo's CI runner and scripted worker. The
//   sandbox runtime (server/runtimes/sandbox/) spawns its launcher, bwrap and socat: a worker's
//   sandbox is a process tree of its own.
// - the fleet and the host (server/fleet, server/host) talk to workers through the WorkerRuntime
//   port (server/worker-port/port.ts) and the registry (server/runtimes/registry.ts) only: no
//   runtime's insides (server/runtimes/<name>/), no process spawning, no /proc, no process
//   groups, no signals to pids; the port itself names no runtime.
// Type-only imports count: a type is a dependency too.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import { roomsRule } from "./scripts/rooms.mjs";

const OCTOKIT = { regex: "^@octokit/", message: "only server/gh talks to GitHub: go through the Forge interface (server/gh/forge.ts)" };
const SPAWN = {
  regex: "^(node:)?child_process$|^execa$|^simple-git$",
  message:
    "only the worker runtimes (server/runtimes/) spawn processes (git goes through server/gh/git.ts): see eslint.config.js for the documented exceptions",
};
/** The files that may spawn processes: the runtimes, and the exceptions named above. */
const SPAWNERS = ["server/runtimes/**/*.ts", "server/agent/engine-probe.ts"];
const RUNTIME_INSIDES = {
  regex: "(^|/)runtimes/[^/]+/",
  message:
    "talk to workers through the WorkerRuntime port (server/worker-port/port.ts) and server/runtimes/registry.ts, never a runtime's insides (server/runtimes/<name>/)",
};
const restrict = (...patterns) => ["error", { patterns }];
/** What the fleet and the host may not do with processes themselves: the port does it (server/worker-port/port.ts). */
const NO_PROCESSES = [
  "error",
  {
    selector: "Literal[value=/^\\/proc(\\/|$)/]",
    message: "/proc is the local runtime's (server/runtimes/local/proc.ts): observe a worker through its handle",
  },
  {
    selector: "TemplateElement[value.raw=/^\\/proc(\\/|$)/]",
    message: "/proc is the local runtime's (server/runtimes/local/proc.ts): observe a worker through its handle",
  },
  { selector: "Identifier[name=/^(pgid|pidFile|pidFilePath)$/]", message: "process groups and pid files are the local runtime's: use the WorkerRuntime port" },
  {
    selector: "CallExpression[callee.object.name='process'][callee.property.name='kill']",
    message: "signals are the runtime's: stop a worker through its handle (WorkerHandle.stop)",
  },
];

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "scripts/*.mjs", "scratch/**", ".dist-check/**", ".node-matrix/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "error",
    },
  },
  // Which room may import which (scripts/rooms.mjs, the table of docs/architecture.md "Rooms").
  {
    files: ["server/**/*.ts", "schemas/**/*.ts"],
    plugins: { afk: { rules: { rooms: roomsRule } } },
    rules: { "afk/rooms": "error" },
  },
  {
    files: ["server/**/*.ts"],
    ignores: ["server/cli/print.ts"],
    rules: {
      "no-console": ["error", { allow: ["error", "warn"] }],
      "no-restricted-properties": [
        "error",
        { object: "process", property: "stdout", message: "stdout is the MCP stream: print through server/cli/print.ts (CLI only)" },
      ],
    },
  },
  // The rooms. Each file falls in exactly one of these blocks (a later block would replace an
  // earlier one's rule, not add to it).
  {
    files: ["server/**/*.ts"],
    ignores: [
      "server/state/**",
      "server/tools/**",
      "server/dashboard/**",
      "server/gh/**",
      ...SPAWNERS,
      "server/forge-emulator/**",
      "server/demo/**",
      "server/fleet/**",
      "server/host/**",
    ],
    rules: { "no-restricted-imports": restrict(OCTOKIT, SPAWN) },
  },
  {
    files: ["server/fleet/**/*.ts", "server/host/**/*.ts"],
    rules: { "no-restricted-imports": restrict(OCTOKIT, SPAWN, RUNTIME_INSIDES), "no-restricted-syntax": NO_PROCESSES },
  },
  {
    files: ["server/state/**/*.ts"],
    ignores: ["server/state/decide/**"],
    rules: {
      "no-restricted-imports": restrict({
        regex: "^(?!\\./|\\.\\./\\.\\./schemas/|node:crypto$)",
        message: "server/state is the pure core: it imports only its own files and the schemas; what it needs of GitHub is a port (server/state/ports.ts)",
      }),
    },
  },
  {
    // decide's concerns, one floor down: the core's files are "../", the schemas "../../../schemas/".
    files: ["server/state/decide/**/*.ts"],
    rules: {
      "no-restricted-imports": restrict({
        regex: "^(?!\\./|\\.\\./(?!\\.\\./)|\\.\\./\\.\\./\\.\\./schemas/|node:crypto$)",
        message: "server/state is the pure core: it imports only its own files and the schemas; what it needs of GitHub is a port (server/state/ports.ts)",
      }),
    },
  },
  {
    files: ["server/tools/**/*.ts"],
    rules: {
      "no-restricted-imports": restrict({
        regex: "^(?!\\./|\\.\\./host/api\\.js$|\\.\\./kit/|node:timers/promises$|\\.\\./\\.\\./schemas/|@modelcontextprotocol/server$|zod$)",
        message: "a tool talks to the Host interface (server/host/api.ts) and the schemas only: put the logic in the host",
      }),
    },
  },
  {
    files: ["server/dashboard/**/*.ts"],
    rules: {
      "no-restricted-imports": restrict({
        regex: "^(?!\\./|\\.\\./host/api\\.js$|\\.\\./kit/|node:(crypto|http)$)",
        message: "the dashboard reads what a tool reads: the Host interface (server/host/api.ts), node:http and node:crypto",
      }),
    },
  },
  {
    files: ["server/gh/**/*.ts"],
    ignores: ["server/gh/git.ts", "server/gh/auth.ts"],
    rules: { "no-restricted-imports": restrict(SPAWN) },
  },
  {
    files: [...SPAWNERS, "server/forge-emulator/**/*.ts", "server/demo/**/*.ts"],
    rules: { "no-restricted-imports": restrict(OCTOKIT) },
  },
);
