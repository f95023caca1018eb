// Why a red gate is red, as evidence a human and the next worker can act on: the failing checks'
// titles, summaries and output, bounded and with secrets redacted.
import type { Checks, Forge } from "../gh/forge.js";
import { redactText } from "../text/redact.js";
import { byteLength, clipHead, clipTail, oneLine, safeUrl } from "../text/text.js";

export interface CiEvidence {
  kind: "ci";
  summary: string;
  excerpt: string;
  /** The failing checks and where to read more. */
  checks: Array<{ name: string; url: string | null }>;
  /** GitHub's merge queue removed the PR (its merge group failed): the summary says so. */
  queue?: boolean;
}

/**
 * Why a PR's checks are red, re-read from GitHub (check run output title, summary and text;
 * status description and target URL), bounded to about `excerptBytes`. `failingNames` empty:
 * every failing check on the head.
 */
export async function readCheckEvidence(forge: Forge, headSha: string, failingNames: readonly string[], excerptBytes: number): Promise<CiEvidence> {
  // Requests only for a red gate, conditional (the gate just read these lists: usually 304s).
  // Named checks that all failed as check runs need no status list (a 200 on a head that most CI
  // reports on with runs only): the runs are read alone first, the statuses only when a name lacks a failed run.
  const runs = failingNames.length > 0 ? await forge.checksFor(headSha, { contexts: [...failingNames], strict: false, source: "none", readable: true }) : null;
  const failedRun = (name: string): boolean =>
    runs?.checkRuns.some((r) => r.name === name && r.status === "completed" && !PASSING_CONCLUSION.has(r.conclusion ?? "")) === true;
  const checks = runs && failingNames.every(failedRun) ? runs : await forge.checksFor(headSha);
  return checkEvidence(checks, failingNames, excerptBytes, []);
}

const FAILING_STATUS = new Set(["failure", "error"]);
const PASSING_CONCLUSION = new Set(["success", "neutral", "skipped"]);

export function checkEvidence(checks: Checks, failingNames: readonly string[], excerptBytes: number, secrets: readonly string[]): CiEvidence {
  const runs = new Map<string, Checks["checkRuns"][number]>();
  for (const run of checks.checkRuns) {
    const seen = runs.get(run.name);
    if (!seen || run.id > seen.id) runs.set(run.name, run);
  }
  const statuses = new Map<string, Checks["statuses"][number]>();
  for (const status of checks.statuses) if (!statuses.has(status.context)) statuses.set(status.context, status);

  let names = [...new Set(failingNames)];
  if (names.length === 0) {
    const failing = new Set<string>();
    for (const run of runs.values()) if (run.status === "completed" && !PASSING_CONCLUSION.has(run.conclusion ?? "")) failing.add(run.name);
    for (const status of statuses.values()) if (FAILING_STATUS.has(status.state)) failing.add(status.context);
    names = [...failing];
  }
  names.sort();
  const budget = Math.max(64, Math.floor(Math.max(0, excerptBytes) / Math.max(1, names.length)));
  const sections: string[] = [];
  const brief: string[] = [];
  const links: CiEvidence["checks"] = [];
  for (const name of names) {
    const run = runs.get(name);
    const status = statuses.get(name);
    const parts: string[] = [];
    const head: string[] = [];
    if (run) {
      const state = run.status === "completed" ? (run.conclusion ?? "no conclusion") : run.status;
      head.push(`${name}: ${state}${run.title ? ` (${oneLine(run.title, 160)})` : ""}`);
      const url = run.htmlUrl ?? run.detailsUrl;
      links.push({ name, url: safeUrl(url) });
      parts.push(`== ${name} (check run: ${state}) ==`);
      if (run.title) parts.push(run.title);
      if (url && safeUrl(url)) parts.push(`details: ${url}`);
      const headText = clipHead(parts.join("\n"), Math.floor(budget / 2));
      const rest = Math.max(0, budget - byteLength(headText) - 1);
      const summary = run.summary ? clipHead(run.summary, Math.floor(rest / 2)) : "";
      const text = run.text ? clipTail(run.text, rest - byteLength(summary)) : "";
      sections.push([headText, summary, text].filter((s) => s !== "").join("\n"));
    }
    if (status) {
      head.push(`${name}: ${status.state}${status.description ? ` (${oneLine(status.description, 160)})` : ""}`);
      if (!run) links.push({ name, url: safeUrl(status.targetUrl) });
      const lines = [`== ${name} (status: ${status.state}) ==`];
      if (status.description) lines.push(status.description);
      if (status.targetUrl && safeUrl(status.targetUrl)) lines.push(`details: ${status.targetUrl}`);
      sections.push(clipHead(lines.join("\n"), budget));
    }
    if (!run && !status) {
      head.push(`${name}: not reported`);
      links.push({ name, url: null });
    }
    brief.push(...head);
  }
  const summary = clipHead(
    names.length === 0
      ? `no failing check found on ${short(checks.sha)}`
      : `${names.length === 1 ? "check" : `${names.length} checks`} failed on ${short(checks.sha)}: ${brief.join("; ")}`,
    600,
  );
  const excerpt = clipTail(sections.join("\n\n"), Math.max(0, excerptBytes));
  return { kind: "ci", summary: redactText(summary, secrets), excerpt: redactText(excerpt, secrets), checks: links };
}

function short(sha: string): string {
  return sha.slice(0, 12);
}
