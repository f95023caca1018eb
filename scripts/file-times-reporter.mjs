// A node:test reporter that prints how long each test file took and how many of its tests
// passed, the slowest first, then the whole: `node --test --test-reporter=./scripts/file-times-reporter.mjs
// --test-reporter-destination=stderr …` (beside the default reporter, or alone). Used to measure
// where the suite's time goes (CONTRIBUTING.md, "Tests and tools"); a failure is listed with its file.
export default async function* fileTimes(source) {
  const files = new Map();
  const failures = [];
  const started = Date.now();
  for await (const event of source) {
    const data = event.data ?? {};
    const file = data.file ?? "(unknown)";
    if (event.type === "test:pass" || event.type === "test:fail") {
      if (data.nesting !== 0) continue;
      const entry = files.get(file) ?? { ms: 0, pass: 0, fail: 0 };
      // A file's top-level tests may run at once: the file's span is its longest top-level test
      // when they overlap, their sum when they run in turn; the sum is the cost on a core.
      entry.ms += data.details?.duration_ms ?? 0;
      if (event.type === "test:pass") entry.pass += 1;
      else {
        entry.fail += 1;
        failures.push(`${file}: ${data.name}`);
      }
      files.set(file, entry);
    }
  }
  const rows = [...files].sort((a, b) => b[1].ms - a[1].ms);
  const total = rows.reduce((s, [, e]) => s + e.ms, 0);
  yield `\nfile times (sum of top-level test durations; ${rows.length} files, ${(total / 1000).toFixed(0)} s of tests in ${((Date.now() - started) / 1000).toFixed(0)} s):\n`;
  for (const [file, e] of rows)
    yield `${(e.ms / 1000).toFixed(1).padStart(8)} s  ${String(e.pass).padStart(4)} pass ${e.fail ? `${e.fail} FAIL ` : ""} ${file.replace(/^.*\/dist\/test\//, "")}\n`;
  if (failures.length) yield `failed:\n${failures.map((f) => `  ${f}`).join("\n")}\n`;
}
