// A seed file describes a fresh forge's starting point: the files of the initial commit,
// labels, and a backlog of issues (with dependencies and sub-issues by seed position, which
// is also the issue number). It is applied once, when the forge's directory is new.
import { readFile } from "node:fs/promises";
import type { ForgeEmulator } from "./core.js";
import { UsageError } from "../gh/errors.js";
import { seedProblems, seedRefusal } from "./seed-check.js";
import { addLabels, closeIssue } from "./issues.js";
import { isoNow, type IssueRecord } from "./state.js";

export interface SeedIssue {
  title: string;
  body?: string;
  labels?: string[];
  author?: string;
  state?: "open" | "closed";
  /** Seed positions (1-based, = issue numbers) of the issues blocking this one. */
  blocked_by?: number[];
  sub_issues?: number[];
  assignees?: string[];
}

export interface Seed {
  files?: Record<string, string>;
  labels?: { name: string; color?: string; description?: string }[];
  issues?: SeedIssue[];
}

/** Reads and checks a seed file: a file that is not a valid seed is refused with every problem at its path. */
export async function readSeed(path: string): Promise<Seed> {
  let data: unknown;
  try {
    data = JSON.parse(await readFile(path, "utf8"));
  } catch (err) {
    throw new UsageError(`local forge: cannot read seed ${path}: ${(err as Error).message}`);
  }
  const problems = seedProblems(data);
  if (problems.length > 0) throw new UsageError(`local forge: ${seedRefusal(path, problems)}`);
  return data as Seed;
}

export function applySeed(forge: ForgeEmulator, seed: Seed, defaultAuthor: string): void {
  const { state } = forge;
  for (const l of seed.labels ?? []) {
    if (state.label(l.name)) continue;
    state.addLabel({ id: state.nextId(), name: l.name, color: (l.color ?? "ededed").replace(/^#/, ""), description: l.description ?? null });
  }
  const issues: IssueRecord[] = [];
  for (const s of seed.issues ?? []) {
    const author = s.author ?? defaultAuthor;
    forge.addUser(author, false);
    for (const a of s.assignees ?? []) forge.addUser(a, false);
    const now = isoNow();
    const issue: IssueRecord = {
      number: state.allocNumber(),
      id: state.nextId(),
      title: s.title,
      body: s.body ?? null,
      state: "open",
      stateReason: null,
      labels: [],
      assignees: (s.assignees ?? []).map((a) => forge.state.user(a)!.login),
      author: forge.state.user(author)!.login,
      createdAt: now,
      updatedAt: now,
      closedAt: null,
      closedBy: null,
      locked: false,
      blockedBy: [],
      blocking: [],
      subIssues: [],
      parent: null,
      pull: null,
    };
    addLabels(forge, issue, s.labels ?? []);
    state.addIssue(issue);
    issues.push(issue);
  }
  // Relations by seed position; issue numbers equal positions only in a fresh forge, so map.
  (seed.issues ?? []).forEach((s, i) => {
    const issue = issues[i]!;
    for (const n of s.blocked_by ?? []) {
      const blocker = issues[n - 1]!;
      if (!issue.blockedBy.includes(blocker.number)) {
        issue.blockedBy.push(blocker.number);
        blocker.blocking.push(issue.number);
      }
    }
    for (const n of s.sub_issues ?? []) {
      const sub = issues[n - 1]!;
      if (sub.parent === null) {
        sub.parent = issue.number;
        issue.subIssues.push(sub.number);
      }
    }
    if (s.state === "closed") closeIssue(forge, issue, issue.author, "completed");
  });
  state.changed();
}
