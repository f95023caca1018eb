// The result budget's backstop (server/tools/budget.ts): whatever a tool returns leaves within
// the budget, and the text says what was left out.
import { test } from "node:test";
import assert from "node:assert/strict";
import { bound, cutText, utf8Prefix } from "../server/tools/budget.js";

const budget = { textBytes: 2048, structuredBytes: 4096 };

test("bound: the largest list is halved until the JSON fits; the text and _meta say what was kept", () => {
  const rows = Array.from({ length: 500 }, (_, i) => ({ number: i + 1, text: `row ${i + 1}` }));
  const result = bound({ rows, note: "small" }, (s) => `${(s.rows as unknown[]).length} rows`, budget);
  const size = Buffer.byteLength(JSON.stringify(result.structuredContent));
  assert.ok(size <= budget.structuredBytes, `${size} bytes`);
  const kept = (result.structuredContent as { rows: unknown[] }).rows.length;
  assert.ok(kept > 0 && kept < 500);
  assert.deepEqual(result._meta, { "afk/trimmed": [{ path: "rows", kept, total: 500, unit: "items" }] });
  const text = (result.content[0] as { text: string }).text;
  assert.match(text, new RegExp(`^${kept} rows\\n\\(answer trimmed to fit 4 KB: rows shows ${kept} of 500 items; ask for less or page with cursor\\)$`));
  assert.equal(rows.length, 500, "the caller's object is not mutated");
});

test("bound: one huge string is shortened with a marker", () => {
  const result = bound({ msg: "y".repeat(100_000) }, () => "one record", budget);
  const msg = (result.structuredContent as { msg: string }).msg;
  assert.ok(Buffer.byteLength(JSON.stringify(result.structuredContent)) <= budget.structuredBytes);
  assert.match(msg, /…\[cut\]$/);
});

test("bound: a result within budget passes untouched", () => {
  const result = bound({ a: [1, 2, 3] }, () => "three", budget);
  assert.deepEqual(result, { content: [{ type: "text", text: "three" }], structuredContent: { a: [1, 2, 3] } });
});

test("cutText: cut at a line boundary, the marker counts the bytes cut, never over the limit", () => {
  const text = Array.from({ length: 400 }, (_, i) => `line ${i}`).join("\n");
  const cut = cutText(text, 1024);
  assert.ok(Buffer.byteLength(cut) <= 1024);
  const [head, marker] = cut.split("\n… ");
  assert.ok(text.startsWith(head!));
  assert.match(head!, /line \d+$/, "whole lines only");
  assert.equal(marker, `[${Buffer.byteLength(text) - Buffer.byteLength(head!)} more bytes cut: the answer is limited to 1 KB]`);
  const oneLine = cutText("z".repeat(5000), 1024);
  assert.ok(Buffer.byteLength(oneLine) <= 1024, "a single long line is cut too");
});

test("utf8Prefix: never splits a character", () => {
  const text = "é".repeat(10);
  assert.equal(utf8Prefix(text, 5), "éé");
  assert.equal(utf8Prefix(text, 100), text);
});
