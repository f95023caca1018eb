// The demo's seeded backlog: eleven issues over the `textkit` sample, each with the end the
// demo expects and the recipe the scripted worker follows (what to commit, or which verdict to
// write, per attempt). Together they walk every path of the fleet: a dependency chain, an epic
// that is never dispatched, a CI failure fixed on retry, an already-satisfied issue, and two
// issues that can only be escalated.
//
// Every recipe writes its own module and its own test file: no two recipes touch the same path,
// so landings in any order merge cleanly (there is deliberately no conflict case). The chain's
// modules import each other, so the dependency is real: dispatched early, #2 would fail CI.
import type { Seed, SeedIssue } from "../forge-emulator/index.js";
import { SAMPLE_FILES } from "./sample.js";

/** `epic_done`: an epic the fleet closes once its sub-issues are closed (epics.close_when_done); `open_epic`: one that stays open. */
export type DemoEnd = "merged" | "closed_done" | "escalated" | "epic_done" | "open_epic";

export interface CommitStep {
  kind: "commit";
  message: string;
  /**
   * Repository-relative path -> full content. `{{attempt}}` in a content is replaced by the
   * attempt number, so a step that repeats still makes a new commit (a new head for CI).
   */
  files: Record<string, string>;
  /**
   * More commits, each after the worker's delay: a worker killed between them leaves part of
   * its work committed (the chaos harness measures whether a later run continues it).
   */
  then?: { message: string; files: Record<string, string> }[];
}

export interface VerdictStep {
  kind: "verdict";
  verdict: "already-satisfied" | "blocked" | "giving-up";
  reason: string;
}

export type RecipeStep = CommitStep | VerdictStep;

/** What the scripted worker does for one issue: `steps[attempt - 1]`, the last one repeating. */
export interface Recipe {
  key: string;
  title: string;
  steps: RecipeStep[];
}

export interface BacklogItem {
  /** Stable id; also the `afk-demo-recipe:` marker in the issue body that the worker looks for. */
  key: string;
  title: string;
  /** The issue's prose, without the marker and the `## Blocked by` section (buildSeed adds them). */
  description: string;
  labels: string[];
  /** Keys of blockers linked natively (GitHub's issue dependencies). */
  blockedBy?: string[];
  /** Keys of blockers listed in a `## Blocked by` body section. */
  blockedBySection?: string[];
  /** Keys of native sub-issues. */
  subIssues?: string[];
  /** One line on the structure this item demonstrates. */
  structure: string;
  end: DemoEnd;
  /** null: the worker never sees it (an epic). */
  steps: RecipeStep[] | null;
}

export interface Expectation {
  key: string;
  /** The issue number in a freshly seeded forge (= the seed position). */
  number: number;
  title: string;
  end: DemoEnd;
  /** Attempts the fleet makes (the final `afk-attempt/N`); absent when never dispatched. */
  attempts?: number;
}

export const READY_LABEL = "ready-for-agent";
export const ESCALATE_LABEL = "ready-for-human";
export const EPIC_LABEL = "epic";
/** The config default: two more attempts after the first before escalating. */
export const DEFAULT_RETRY = 2;
export const RECIPE_MARKER = "afk-demo-recipe";

const READY = [READY_LABEL];

// ---- module sources ------------------------------------------------------------------------

const WORDS_JS = `// Splits text into words: runs of letters and digits. A camelCase hump starts a new word and
// an apostrophe inside a word ("don't") keeps it whole.

export function words(text) {
  if (typeof text !== "string") throw new TypeError("words: expected a string");
  const humps = text.replace(/([\\p{Ll}\\p{N}])(\\p{Lu})/gu, "$1 $2");
  return humps.match(/[\\p{L}\\p{N}]+(?:'\\p{L}+)*/gu) ?? [];
}
`;

const WORDS_TEST_JS = `import assert from "node:assert/strict";
import { test } from "node:test";
import { words } from "../src/words.js";

test("words drops punctuation and whitespace", () => {
  assert.deepEqual(words("Hello, world!"), ["Hello", "world"]);
  assert.deepEqual(words("  \\t "), []);
});

test("words splits camelCase humps, underscores and dashes", () => {
  assert.deepEqual(words("fooBar baz_qux-quux"), ["foo", "Bar", "baz", "qux", "quux"]);
});

test("words keeps apostrophes inside a word", () => {
  assert.deepEqual(words("don't stop"), ["don't", "stop"]);
});
`;

const CAMEL_JS = `// camelCase, built on words().
import { words } from "./words.js";

export function camelCase(text) {
  return words(text)
    .map((word, i) => {
      const lower = word.toLowerCase();
      return i === 0 ? lower : lower.charAt(0).toUpperCase() + lower.slice(1);
    })
    .join("");
}
`;

const CAMEL_TEST_JS = `import assert from "node:assert/strict";
import { test } from "node:test";
import { camelCase } from "../src/camel-case.js";

test("camelCase joins words with humps", () => {
  assert.equal(camelCase("hello world"), "helloWorld");
  assert.equal(camelCase("Foo-bar_baz"), "fooBarBaz");
  assert.equal(camelCase("ALL CAPS"), "allCaps");
  assert.equal(camelCase(""), "");
});
`;

const PASCAL_JS = `// PascalCase, built on camelCase().
import { camelCase } from "./camel-case.js";

export function pascalCase(text) {
  const camel = camelCase(text);
  return camel.charAt(0).toUpperCase() + camel.slice(1);
}
`;

const PASCAL_TEST_JS = `import assert from "node:assert/strict";
import { test } from "node:test";
import { pascalCase } from "../src/pascal-case.js";

test("pascalCase upper-cases every word's first letter", () => {
  assert.equal(pascalCase("hello world"), "HelloWorld");
  assert.equal(pascalCase("foo_bar-baz"), "FooBarBaz");
  assert.equal(pascalCase(""), "");
});
`;

const FREQUENCY_JS = `// How often each character occurs, most frequent first (ties in code point order).

export function charFrequency(text, { ignoreCase = true, ignoreWhitespace = true } = {}) {
  if (typeof text !== "string") throw new TypeError("charFrequency: expected a string");
  const counts = new Map();
  for (const ch of ignoreCase ? text.toLowerCase() : text) {
    if (ignoreWhitespace && /\\s/.test(ch)) continue;
    counts.set(ch, (counts.get(ch) ?? 0) + 1);
  }
  const order = (a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
  return new Map([...counts].sort(order));
}
`;

const FREQUENCY_TEST_JS = `import assert from "node:assert/strict";
import { test } from "node:test";
import { charFrequency } from "../src/frequency.js";

test("charFrequency counts characters, most frequent first", () => {
  assert.deepEqual([...charFrequency("Hello")], [["l", 2], ["e", 1], ["h", 1], ["o", 1]]);
});

test("charFrequency can keep case and whitespace", () => {
  assert.deepEqual([...charFrequency("a A a", { ignoreCase: false, ignoreWhitespace: false })], [[" ", 2], ["a", 2], ["A", 1]]);
});
`;

const READING_TIME_JS = `// Estimated reading time of a text, in whole minutes (at least one for a non-empty text).

export function readingTime(text, { wordsPerMinute = 200 } = {}) {
  if (typeof text !== "string") throw new TypeError("readingTime: expected a string");
  if (!(wordsPerMinute > 0)) throw new RangeError("readingTime: wordsPerMinute must be positive");
  const count = text.split(/\\s+/).filter(Boolean).length;
  return { words: count, minutes: count === 0 ? 0 : Math.max(1, Math.ceil(count / wordsPerMinute)) };
}
`;

const READING_TIME_TEST_JS = `import assert from "node:assert/strict";
import { test } from "node:test";
import { readingTime } from "../src/reading-time.js";

test("readingTime rounds up to whole minutes", () => {
  assert.deepEqual(readingTime(""), { words: 0, minutes: 0 });
  assert.deepEqual(readingTime("one two"), { words: 2, minutes: 1 });
  assert.deepEqual(readingTime("word ".repeat(450)), { words: 450, minutes: 3 });
  assert.deepEqual(readingTime("word ".repeat(450), { wordsPerMinute: 450 }), { words: 450, minutes: 1 });
});

test("readingTime refuses a non-positive speed", () => {
  assert.throws(() => readingTime("x", { wordsPerMinute: 0 }), RangeError);
});
`;

// Attempt 1 forgets that the ellipsis counts towards the limit; its own test catches it.
const TRUNCATE_BUGGY_JS = `// Shortens a text to at most \`max\` characters, ending in an ellipsis when cut.

export function truncate(text, max, ellipsis = "…") {
  if (text.length <= max) return text;
  return text.slice(0, max) + ellipsis;
}
`;

const TRUNCATE_FIXED_JS = `// Shortens a text to at most \`max\` characters, ending in an ellipsis when cut. The ellipsis
// counts towards the limit.

export function truncate(text, max, ellipsis = "…") {
  if (typeof text !== "string") throw new TypeError("truncate: expected a string");
  if (!Number.isInteger(max) || max < 0) throw new RangeError("truncate: max must be a non-negative integer");
  if (text.length <= max) return text;
  if (max <= ellipsis.length) return ellipsis.slice(0, max);
  return text.slice(0, max - ellipsis.length).trimEnd() + ellipsis;
}
`;

const TRUNCATE_TEST_JS = `import assert from "node:assert/strict";
import { test } from "node:test";
import { truncate } from "../src/truncate.js";

test("truncate leaves a short text alone", () => {
  assert.equal(truncate("short", 10), "short");
});

test("truncate fits the ellipsis within max", () => {
  const out = truncate("hello world", 8);
  assert.equal(out, "hello w…");
  assert.ok(out.length <= 8, \`\${JSON.stringify(out)} is longer than 8\`);
});

test("truncate takes a custom ellipsis", () => {
  assert.equal(truncate("hello world", 8, "..."), "hello...");
});
`;

// Three honest-looking attempts at hyphenation, each wrong: real hyphenation needs patterns
// (TeX's Liang algorithm and its dictionaries), which a dependency-free library does not have.
const HYPHENATE_TEST_JS = `import assert from "node:assert/strict";
import { test } from "node:test";
import { hyphenate } from "../src/hyphenate.js";

test("hyphenate splits English words at syllable boundaries", () => {
  assert.equal(hyphenate("hyphenation"), "hy-phen-a-tion");
  assert.equal(hyphenate("computer"), "com-put-er");
  assert.equal(hyphenate("cat"), "cat");
});
`;

const HYPHENATE_VOWELS_JS = `// Hyphenation, first try: break after every vowel that is followed by a consonant.

export function hyphenate(word) {
  return word.replace(/([aeiouy])(?=[^aeiouy])/gi, "$1-").replace(/-$/, "");
}
`;

const HYPHENATE_CONSONANTS_JS = `// Hyphenation, second try: break between two consonants (VC-CV).

export function hyphenate(word) {
  return word.replace(/([aeiouy][^aeiouy])(?=[^aeiouy][aeiouy])/gi, "$1-");
}
`;

const HYPHENATE_CHUNKS_JS = `// Hyphenation, attempt {{attempt}}: fixed three-letter chunks, a placeholder until we have
// hyphenation patterns.

export function hyphenate(word) {
  return word.length <= 3 ? word : word.match(/.{1,3}/g).join("-");
}
`;

const PAD_JS = `// Centres a text in a field of \`width\` characters; an odd remainder goes to the right.

export function padCenter(text, width, fill = " ") {
  if (typeof text !== "string") throw new TypeError("padCenter: expected a string");
  if (fill.length === 0) throw new RangeError("padCenter: fill must not be empty");
  const total = width - text.length;
  if (total <= 0) return text;
  const left = Math.floor(total / 2);
  return repeatTo(fill, left) + text + repeatTo(fill, total - left);
}

function repeatTo(fill, n) {
  return fill.repeat(Math.ceil(n / fill.length)).slice(0, n);
}
`;

const PAD_TEST_JS = `import assert from "node:assert/strict";
import { test } from "node:test";
import { padCenter } from "../src/pad.js";

test("padCenter centres, odd remainder to the right", () => {
  assert.equal(padCenter("ab", 6), "  ab  ");
  assert.equal(padCenter("abc", 6, "*"), "*abc**");
  assert.equal(padCenter("x", 6, "-="), "-=x-=-");
});

test("padCenter leaves a text that is already wide enough", () => {
  assert.equal(padCenter("long", 2), "long");
});
`;

// ---- the backlog -----------------------------------------------------------------------------

function commit(message: string, files: Record<string, string>): CommitStep {
  return { kind: "commit", message, files };
}

/** In seed order: an item's position (1-based) is its issue number in a fresh forge. */
export const BACKLOG: readonly BacklogItem[] = [
  {
    key: "words",
    title: "Add words(): split a text into words",
    description:
      "Add `words(text)` in `src/words.js`: the words of a text, as an array. A word is a run of " +
      "letters and digits; a camelCase hump starts a new word; `_`, `-`, punctuation and whitespace " +
      "separate words; an apostrophe inside a word keeps it whole (`don't`).\n\n" +
      "Several case helpers will be built on it.",
    labels: READY,
    structure: "chain 1/3 (head)",
    end: "merged",
    steps: [commit("Add words()", { "src/words.js": WORDS_JS, "test/words.test.js": WORDS_TEST_JS })],
  },
  {
    key: "camel-case",
    title: "Add camelCase() built on words()",
    description:
      "Add `camelCase(text)` in `src/camel-case.js`, built on `words()`: the first word in lower " +
      "case, every other word capitalized, joined without separators (`Foo-bar_baz` → `fooBarBaz`).",
    labels: READY,
    blockedBy: ["words"],
    structure: "chain 2/3: blocked by #1 (native dependency)",
    end: "merged",
    steps: [commit("Add camelCase()", { "src/camel-case.js": CAMEL_JS, "test/camel-case.test.js": CAMEL_TEST_JS })],
  },
  {
    key: "pascal-case",
    title: "Add pascalCase() built on camelCase()",
    description: "Add `pascalCase(text)` in `src/pascal-case.js`, built on `camelCase()`: `hello world` → `HelloWorld`.",
    labels: READY,
    blockedBySection: ["camel-case"],
    structure: "chain 3/3: blocked by #2 (`## Blocked by` body section)",
    end: "merged",
    steps: [commit("Add pascalCase()", { "src/pascal-case.js": PASCAL_JS, "test/pascal-case.test.js": PASCAL_TEST_JS })],
  },
  {
    key: "stats-epic",
    title: "Epic: text statistics",
    description:
      "Helpers that describe a text rather than change it. Broken down into the sub-issues below; " +
      "this issue tracks them and is not implemented by itself.",
    labels: [EPIC_LABEL, READY_LABEL],
    subIssues: ["char-frequency", "reading-time"],
    structure: "epic (label `epic`, also `ready-for-agent`) with sub-issues #5 and #6: never dispatched; closed once both land",
    end: "epic_done",
    steps: null,
  },
  {
    key: "char-frequency",
    title: "Add charFrequency(): count characters",
    description:
      "Add `charFrequency(text, { ignoreCase = true, ignoreWhitespace = true })` in " +
      "`src/frequency.js`: a `Map` of character → count, most frequent first, ties in code point order.",
    labels: READY,
    structure: "sub-issue of #4",
    end: "merged",
    steps: [commit("Add charFrequency()", { "src/frequency.js": FREQUENCY_JS, "test/frequency.test.js": FREQUENCY_TEST_JS })],
  },
  {
    key: "reading-time",
    title: "Add readingTime(): estimated minutes to read a text",
    description:
      "Add `readingTime(text, { wordsPerMinute = 200 })` in `src/reading-time.js`, returning " +
      "`{ words, minutes }`; minutes round up, and a non-empty text takes at least one.",
    labels: READY,
    structure: "sub-issue of #4",
    end: "merged",
    steps: [commit("Add readingTime()", { "src/reading-time.js": READING_TIME_JS, "test/reading-time.test.js": READING_TIME_TEST_JS })],
  },
  {
    key: "truncate",
    title: "Add truncate(): shorten a text with an ellipsis",
    description: 'Add `truncate(text, max, ellipsis = "…")` in `src/truncate.js`. The result is at most ' + "`max` characters long, the ellipsis included.",
    labels: READY,
    structure: "CI fails on attempt 1 (ellipsis not counted), passes on attempt 2",
    end: "merged",
    steps: [
      commit("Add truncate()", { "src/truncate.js": TRUNCATE_BUGGY_JS, "test/truncate.test.js": TRUNCATE_TEST_JS }),
      commit("truncate: count the ellipsis towards max", { "src/truncate.js": TRUNCATE_FIXED_JS, "test/truncate.test.js": TRUNCATE_TEST_JS }),
    ],
  },
  {
    key: "capitalize",
    title: "Add capitalize(): upper-case the first letter",
    description: "We need `capitalize(text)`: the first letter in upper case, the rest unchanged (`hello world` → `Hello world`).",
    labels: READY,
    structure: "already satisfied: src/case.js has it",
    end: "closed_done",
    steps: [
      {
        kind: "verdict",
        verdict: "already-satisfied",
        reason:
          "src/case.js already exports capitalize(text), which upper-cases the first letter and keeps the rest; test/case.test.js covers it. Nothing to change.",
      },
    ],
  },
  {
    key: "hyphenate",
    title: "Add hyphenate(): split English words into syllables",
    description:
      "Add `hyphenate(word)` in `src/hyphenate.js` that inserts `-` at English syllable " +
      "boundaries: `hyphenation` → `hy-phen-a-tion`, `computer` → `com-put-er`.",
    labels: READY,
    structure: "every attempt fails CI → escalated",
    end: "escalated",
    steps: [
      commit("Add hyphenate() (break after vowels)", { "src/hyphenate.js": HYPHENATE_VOWELS_JS, "test/hyphenate.test.js": HYPHENATE_TEST_JS }),
      commit("hyphenate: break between consonants instead", { "src/hyphenate.js": HYPHENATE_CONSONANTS_JS, "test/hyphenate.test.js": HYPHENATE_TEST_JS }),
      commit("hyphenate: fall back to fixed chunks", { "src/hyphenate.js": HYPHENATE_CHUNKS_JS, "test/hyphenate.test.js": HYPHENATE_TEST_JS }),
    ],
  },
  {
    key: "detect-language",
    title: "Add detectLanguage(): tell English, French and German apart",
    description: 'Add `detectLanguage(text)` in `src/language.js` returning `"en"`, `"fr"`, `"de"` or `null`, reliable on short texts.',
    labels: READY,
    structure: "worker gives up on every attempt → escalated",
    end: "escalated",
    steps: [
      {
        kind: "verdict",
        verdict: "giving-up",
        reason:
          "Reliable detection on short texts needs per-language n-gram profiles or a trained model. " +
          "textkit has no dependencies, and counting stop words misclassifies short inputs " +
          '("Die Katze", "sale temps"). A human should decide whether a data file or a dependency is acceptable.',
      },
    ],
  },
  {
    key: "pad-center",
    title: "Add padCenter(): centre a text in a field",
    description:
      'Add `padCenter(text, width, fill = " ")` in `src/pad.js`. An odd remainder goes to the ' +
      "right; a text already `width` long or longer is returned as it is.",
    labels: READY,
    structure: "plain",
    end: "merged",
    steps: [commit("Add padCenter()", { "src/pad.js": PAD_JS, "test/pad.test.js": PAD_TEST_JS })],
  },
];

function positionOf(key: string): number {
  const i = BACKLOG.findIndex((item) => item.key === key);
  if (i < 0) throw new Error(`demo backlog: unknown key ${JSON.stringify(key)}`);
  return i + 1;
}

/** The issue number `key` gets in a freshly seeded forge. */
export function issueNumberOf(key: string): number {
  return positionOf(key);
}

function issueBody(item: BacklogItem): string {
  const parts = [item.description];
  if (item.subIssues?.length) {
    parts.push(["## Sub-issues", "", ...item.subIssues.map((k) => `- #${positionOf(k)}`)].join("\n"));
  }
  if (item.blockedBySection?.length) {
    parts.push(["## Blocked by", "", ...item.blockedBySection.map((k) => `- #${positionOf(k)}`)].join("\n"));
  }
  // The scripted worker finds its recipe by this marker (the body reaches it in the brief).
  parts.push(`<!-- ${RECIPE_MARKER}: ${item.key} -->`);
  return `${parts.join("\n\n")}\n`;
}

/** The local forge's seed: the sample's files, the labels, and the backlog with its links. */
export function buildSeed(): Seed {
  const issues: SeedIssue[] = BACKLOG.map((item) => ({
    title: item.title,
    body: issueBody(item),
    labels: [...item.labels],
    ...(item.blockedBy?.length ? { blocked_by: item.blockedBy.map(positionOf) } : {}),
    ...(item.subIssues?.length ? { sub_issues: item.subIssues.map(positionOf) } : {}),
  }));
  return {
    files: { ...SAMPLE_FILES },
    labels: [
      { name: READY_LABEL, color: "0e8a16", description: "An agent may pick this up" },
      { name: ESCALATE_LABEL, color: "d93f0b", description: "The fleet gave up: a human should look" },
      { name: EPIC_LABEL, color: "5319e7", description: "Tracks sub-issues; not implemented by itself" },
    ],
    issues,
  };
}

/** The scripted worker's recipes, keyed by BacklogItem.key (epics have none). */
export const RECIPES: readonly Recipe[] = BACKLOG.filter((item) => item.steps !== null).map((item) => ({
  key: item.key,
  title: item.title,
  steps: item.steps!,
}));

/** The step for `attempt` (1-based): steps beyond the recipe repeat its last one. */
export function stepFor(recipe: Recipe, attempt: number): RecipeStep {
  const i = Math.min(Math.max(1, Math.floor(attempt)), recipe.steps.length) - 1;
  return recipe.steps[i]!;
}

/** What the demo should end with, given the fleet's `retry` setting. */
export function expectationsFor(retry = DEFAULT_RETRY): Expectation[] {
  const ends = BACKLOG.map((item, i): Expectation => {
    const base = { key: item.key, number: i + 1, title: item.title, end: item.end };
    switch (item.end) {
      case "open_epic":
      case "epic_done":
        return base;
      case "escalated":
        return { ...base, attempts: retry + 1 };
      case "closed_done":
        return { ...base, attempts: 1 };
      case "merged": {
        // The first attempt whose commit passes: a recipe lists its failing tries first.
        // With fewer attempts than that, it is escalated instead.
        const needed = Math.max(1, item.steps?.length ?? 1);
        return needed > retry + 1 ? { ...base, end: "escalated" as const, attempts: retry + 1 } : { ...base, attempts: needed };
      }
    }
  });
  // An epic closes only once every sub-issue is closed: one escalated (too few attempts) keeps it open.
  const byKey = new Map(ends.map((e) => [e.key, e]));
  return ends.map((e, i) => {
    if (e.end !== "epic_done") return e;
    const subs = (BACKLOG[i]!.subIssues ?? []).map((key) => byKey.get(key)?.end);
    return subs.every((end) => end === "merged" || end === "closed_done") ? e : { ...e, end: "open_epic" };
  });
}

/** Expectations under the default retry (2: three attempts before escalation). */
export const expectations: readonly Expectation[] = expectationsFor();
