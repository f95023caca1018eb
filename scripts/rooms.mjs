// The rooms of the house and what each may import (docs/architecture.md, "Rooms"), one table
// for the linter (`afk/rooms` in eslint.config.js) and the house test (test/house.test.ts, which
// also holds the table in docs/architecture.md to this one and every arrow to a lower floor).
//
// A room is a folder of server/ (or `schemas`); `leaf` is server/paths.ts and server/version.ts,
// which import nothing of ours and anyone may import; `mcp` is server/server.ts and
// server/http.ts (the MCP server put together, over stdio or HTTP); `entry` is server/bin.ts and
// server/cli.ts. A room may import its own files, `leaf`, and the rooms in its `may`,
// each on a lower floor: no arrow runs back up. Packages are the other rules' business.
import { dirname, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** room → its floor and the rooms it may import. */
export const ROOMS = {
  leaf: { floor: 0, may: [] },
  schemas: { floor: 0, may: [] },
  text: { floor: 0, may: [] },
  kit: { floor: 0, may: [] },
  state: { floor: 1, may: ["schemas"] },
  lanes: { floor: 1, may: ["kit", "schemas", "text"] },
  "worker-port": { floor: 1, may: ["kit", "schemas"] },
  gh: { floor: 2, may: ["kit", "schemas", "state", "text"] },
  agent: { floor: 2, may: ["kit", "schemas", "state", "text"] },
  runtimes: { floor: 3, may: ["kit", "schemas", "text", "gh", "agent", "worker-port"] },
  worktrees: { floor: 3, may: ["kit", "schemas", "state", "text", "gh"] },
  "forge-emulator": { floor: 3, may: ["kit", "schemas", "gh"] },
  board: { floor: 4, may: ["kit", "state", "text", "gh"] },
  landing: { floor: 4, may: ["kit", "schemas", "state", "text", "gh", "agent", "worktrees", "runtimes"] },
  fleet: { floor: 5, may: ["kit", "schemas", "state", "text", "lanes", "gh", "agent", "worker-port", "runtimes", "worktrees", "board", "landing"] },
  host: { floor: 6, may: ["kit", "schemas", "state", "text", "lanes", "gh", "agent", "worker-port", "runtimes", "worktrees", "board", "landing", "fleet"] },
  daemon: { floor: 7, may: ["kit", "schemas", "state", "lanes", "gh", "agent", "runtimes", "host"] },
  tools: { floor: 7, may: ["kit", "schemas", "host"] },
  dashboard: { floor: 7, may: ["kit", "host"] },
  demo: { floor: 7, may: ["kit", "schemas", "text", "gh", "agent", "runtimes", "forge-emulator", "host"] },
  mcp: { floor: 8, may: ["kit", "host", "tools", "dashboard"] },
  cli: {
    floor: 9,
    may: [
      "kit",
      "schemas",
      "state",
      "text",
      "lanes",
      "gh",
      "agent",
      "worker-port",
      "runtimes",
      "worktrees",
      "forge-emulator",
      "board",
      "landing",
      "fleet",
      "host",
      "daemon",
      "tools",
      "dashboard",
      "demo",
      "mcp",
    ],
  },
  entry: { floor: 10, may: ["kit", "gh", "cli"] },
};

/** The room of a file (a path relative to the repository, or absolute), or null outside the house. */
export function roomOf(file) {
  const parts = relative(ROOT, resolve(ROOT, file)).split(sep);
  if (parts[0] === "schemas") return "schemas";
  if (parts[0] !== "server") return null;
  if (parts.length === 2) {
    const base = parts[1].replace(/\.[jt]s$/, "");
    return base === "paths" || base === "version" ? "leaf" : base === "server" || base === "http" ? "mcp" : "entry";
  }
  return parts[1];
}

/** Why `from` may not import `to`, or null when it may. */
export function refusal(from, to) {
  if (from === null || to === null || from === to || to === "leaf") return null;
  const room = ROOMS[from];
  if (!room) return `server/${from} is not a room of the house: add it to scripts/rooms.mjs and docs/architecture.md`;
  if (room.may.includes(to)) return null;
  const up = ROOMS[to] && ROOMS[to].floor >= room.floor ? ` (${to} is on floor ${ROOMS[to].floor}, ${from} on ${room.floor}: an arrow may not run up)` : "";
  return `${from} may not import ${to}${up}: it may import ${room.may.join(", ") || "nothing of ours"} (scripts/rooms.mjs, docs/architecture.md "Rooms")`;
}

/** The ESLint rule: every relative import (type-only ones too) of a file in a room is checked against the table. */
export const roomsRule = {
  meta: { type: "problem", schema: [], messages: { refused: "{{why}}" } },
  create(context) {
    const from = roomOf(context.filename);
    if (from === null) return {};
    const check = (node) => {
      const spec = node.source && typeof node.source.value === "string" ? node.source.value : null;
      if (spec === null || !spec.startsWith(".")) return;
      const why = refusal(from, roomOf(resolve(dirname(context.filename), spec)));
      if (why) context.report({ node: node.source, messageId: "refused", data: { why } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};
