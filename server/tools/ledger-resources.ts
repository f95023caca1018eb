// The ledger's resources: one issue's timeline (structured JSON: phases, attempts with their
// transcript references, time and spend per phase) and the final report as of now (its text,
// and the same as JSON). Both come from the host, which reads this machine's ledger.
import { ResourceTemplate, type McpServer } from "@modelcontextprotocol/server";
import type { ReadResourceResult } from "@modelcontextprotocol/server";
import { renderReport, UsageError, type FinalReport, type Host } from "../host/api.js";
import { byteLength, cutText, DEFAULT_BUDGET } from "./budget.js";
import { describeFailure } from "./failure.js";

export const timelineUri = (repo: string, issue: number): string => `afk://${repo}/issue/${issue}/timeline`;

type Complete = (value: string) => Promise<string[]>;

export function registerLedgerResources(server: McpServer, host: Host, complete: { ownerComplete: Complete; nameComplete: Complete }): void {
  const slugOf = (vars: Record<string, string | string[]>) => `${String(vars.owner)}/${String(vars.repo)}`;
  const completions = { owner: complete.ownerComplete, repo: complete.nameComplete };

  server.registerResource(
    "issue-timeline",
    new ResourceTemplate("afk://{owner}/{repo}/issue/{number}/timeline", { list: undefined, complete: completions }),
    {
      title: "One issue's timeline",
      description:
        "From the fleet's ledger, as JSON: the phases (queued, claimed, worker, ci, review, landing, merged or escalated) with start, end and time; each attempt with its engine, model, spend and worker transcript reference; the PR and the gated sha.",
      mimeType: "application/json",
    },
    async (uri, vars) =>
      guardedJson(uri.href, async () => {
        const repo = slugOf(vars);
        if (!/^[1-9]\d{0,9}$/.test(String(vars.number))) throw new UsageError(`no issue "${String(vars.number)}": the URI is afk://${repo}/issue/12/timeline`);
        return (await host.timeline({ repo, issue: Number(vars.number) })) as unknown as Record<string, unknown>;
      }),
  );

  server.registerResource(
    "report",
    new ResourceTemplate("afk://{owner}/{repo}/report", { list: undefined, complete: completions }),
    {
      title: "Final report",
      description:
        "What became of every issue the fleet's ledger knows: outcome, attempts, time and spend; the totals and the GitHub requests spent. As text, then the same as JSON.",
      mimeType: "text/plain",
    },
    async (uri, vars) => {
      try {
        const report = fitReport(await host.report({ repo: slugOf(vars) }), DEFAULT_BUDGET.structuredBytes);
        return {
          contents: [
            { uri: uri.href, mimeType: "text/plain", text: cutText(renderReport(report), DEFAULT_BUDGET.textBytes) },
            { uri: uri.href, mimeType: "application/json", text: JSON.stringify(report) },
          ],
        };
      } catch (error) {
        const failure = describeFailure(error);
        if (!failure) throw error;
        return { contents: [{ uri: uri.href, mimeType: "text/plain", text: `cannot read ${uri.href}: ${failure}` }] };
      }
    },
  );
}

/** The report within `bytes` as JSON: issues dropped from the end, counted in `issues_omitted`. */
export function fitReport(report: FinalReport, bytes: number): FinalReport {
  let out = report;
  while (out.issues.length > 0 && byteLength(JSON.stringify(out)) > bytes) {
    const keep = Math.floor(out.issues.length * 0.8);
    out = { ...out, issues: out.issues.slice(0, keep), issues_omitted: out.issues_omitted + out.issues.length - keep };
  }
  return out;
}

async function guardedJson(uri: string, read: () => Promise<Record<string, unknown>>): Promise<ReadResourceResult> {
  try {
    const value = await read();
    const text = JSON.stringify(value);
    // A timeline keeps at most 200 phases and attempts; past the budget it is said, not cut mid-JSON.
    if (byteLength(text) > DEFAULT_BUDGET.structuredBytes) {
      const phases = value.phases as unknown[];
      const attempts = value.attempts as unknown[];
      return {
        contents: [
          {
            uri,
            mimeType: "application/json",
            text: JSON.stringify({
              ...value,
              phases: phases.slice(-50),
              attempts: attempts.slice(-50),
              cut: `the newest 50 of ${phases.length} phases and ${attempts.length} attempts`,
            }),
          },
        ],
      };
    }
    return { contents: [{ uri, mimeType: "application/json", text }] };
  } catch (error) {
    const failure = describeFailure(error);
    if (!failure) throw error;
    return { contents: [{ uri, mimeType: "text/plain", text: `cannot read ${uri}: ${failure}` }] };
  }
}
