// The route of an attempt (server/state/route.ts): labels over the ladder over the start, one
// row per case.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { routeFor, type RoutePolicy } from "../server/state/route.js";

const policy: RoutePolicy = { start: { engine: "claude", model: "claude-sonnet-4-5" }, ladder: [{ model: "claude-opus-4-1" }, { engine: "codex" }] };

const rows: Array<{ name: string; labels: string[]; attempt: number; policy?: RoutePolicy; want: { engine: string; model: string | null; from: string } }> = [
  { name: "the first attempt runs the start's engine and model", labels: [], attempt: 1, want: { engine: "claude", model: "claude-sonnet-4-5", from: "start" } },
  { name: "attempt 2 runs the first rung: a stronger model of the same engine", labels: [], attempt: 2, want: { engine: "claude", model: "claude-opus-4-1", from: "ladder rung 1" } },
  { name: "attempt 3 runs the second rung: another engine, its default model", labels: [], attempt: 3, want: { engine: "codex", model: null, from: "ladder rung 2" } },
  { name: "later attempts stay on the last rung", labels: [], attempt: 7, want: { engine: "codex", model: null, from: "ladder rung 2" } },
  { name: "no ladder: every attempt runs the start's", labels: [], attempt: 3, policy: { ...policy, ladder: [] }, want: { engine: "claude", model: "claude-sonnet-4-5", from: "start" } },
  { name: "an engine label outranks the ladder (case-insensitive prefix and name)", labels: ["bug", "AFK-Engine/Codex"], attempt: 2, want: { engine: "codex", model: null, from: "label afk-engine/codex" } },
  { name: "a model label keeps the routed engine", labels: ["afk-model/claude-haiku-4-5"], attempt: 1, want: { engine: "claude", model: "claude-haiku-4-5", from: "label afk-model/claude-haiku-4-5" } },
  { name: "engine and model labels together", labels: ["afk-engine/codex", "afk-model/gpt-5"], attempt: 3, want: { engine: "codex", model: "gpt-5", from: "label afk-engine/codex afk-model/gpt-5" } },
  { name: "a bare prefix names nothing", labels: ["afk-engine/"], attempt: 1, want: { engine: "claude", model: "claude-sonnet-4-5", from: "start" } },
];

describe("routeFor", () => {
  for (const row of rows) it(row.name, () => assert.deepEqual(routeFor(row.policy ?? policy, row.labels, row.attempt), row.want));
});
