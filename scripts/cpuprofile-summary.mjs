#!/usr/bin/env node
// Summarises a V8 .cpuprofile (node --cpu-prof, or the bench's AFK_BENCH_CPU_PROFILE): the
// functions by self time, the files by self time, and the time under each of our own functions
// (inclusive: every sample with the function anywhere on its stack, counted once per sample).
//
//   node scripts/cpuprofile-summary.mjs PROFILE [--top N] [--ticks N] [--grep TEXT]
//
// --ticks N divides every figure by N (the ticks in the profiled window): ms per tick.
// --grep TEXT keeps the inclusive table to functions whose name or file holds TEXT.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: "string", default: "30" }, ticks: { type: "string" }, grep: { type: "string" } },
});
if (positionals.length !== 1) {
  process.stderr.write("usage: node scripts/cpuprofile-summary.mjs PROFILE [--top N] [--ticks N] [--grep TEXT]\n");
  process.exit(2);
}
const profile = JSON.parse(readFileSync(positionals[0], "utf8"));
const top = Number(values.top);
const per = values.ticks ? Number(values.ticks) : 1;
const unit = values.ticks ? "ms/tick" : "ms";

const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Each sample's duration: the delta after it (the last one gets the median).
const samples = profile.samples;
const deltas = profile.timeDeltas.slice(1).concat([0]);
const sorted = [...deltas].sort((a, b) => a - b);
deltas[deltas.length - 1] = sorted[Math.floor(sorted.length / 2)] ?? 0;
const sampleMs = deltas.map((d) => Math.max(0, d) / 1000);

const short = (url) => {
  if (!url) return "";
  const i = url.indexOf("/dist/");
  if (i >= 0) return url.slice(i + 6);
  const m = url.indexOf("node_modules/");
  if (m >= 0) return url.slice(m);
  return url.replace(/^file:\/\//, "");
};
const label = (n) => {
  const f = n.callFrame;
  const name = f.functionName || "(anonymous)";
  const file = short(f.url);
  return file ? `${name} ${file}:${f.lineNumber + 1}` : name;
};

const self = new Map();
const byFile = new Map();
const incl = new Map();
let total = 0;
let idle = 0;
for (let i = 0; i < samples.length; i += 1) {
  const ms = sampleMs[i];
  const n = nodes.get(samples[i]);
  const name = n.callFrame.functionName;
  total += ms;
  if (name === "(idle)") {
    idle += ms;
    continue;
  }
  const l = label(n);
  self.set(l, (self.get(l) ?? 0) + ms);
  const file = short(n.callFrame.url) || `(${name || "native"})`;
  byFile.set(file, (byFile.get(file) ?? 0) + ms);
  const seen = new Set();
  for (let id = n.id; id !== undefined; id = parent.get(id)) {
    const k = label(nodes.get(id));
    if (seen.has(k)) continue;
    seen.add(k);
    incl.set(k, (incl.get(k) ?? 0) + ms);
  }
}

const fmt = (ms) => (ms / per).toFixed(1).padStart(8);
const table = (title, map, filter = () => true) => {
  process.stdout.write(`\n${title}\n`);
  const rows = [...map]
    .filter(([k]) => filter(k))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top);
  for (const [k, ms] of rows) process.stdout.write(`${fmt(ms)} ${unit}  ${((100 * ms) / (total - idle)).toFixed(1).padStart(5)}%  ${k}\n`);
};
process.stdout.write(
  `profile: ${(total / 1000).toFixed(1)} s sampled, busy ${((total - idle) / per).toFixed(1)} ${unit}, idle ${(idle / 1000).toFixed(1)} s\n`,
);
table("self time by function", self);
table("self time by file", byFile);
const ours = (k) => (values.grep ? k.includes(values.grep) : /(server|bench)\//.test(k));
table(`inclusive time${values.grep ? ` (matching ${values.grep})` : " (our own functions)"}`, incl, ours);
