// One place that turns an expected failure into the text an MCP client shows: what went
// wrong and how to recover (github-mcp-server's NewGitHubAPIErrorResponse, in spirit).
import { ForgeError, GitError, RefNameError, UsageError } from "../host/api.js";

/** The message for an expected failure, or null for a bug (which should propagate). */
export function describeFailure(error: unknown): string | null {
  if (error instanceof ForgeError) {
    const status = error.status === null ? "" : ` (HTTP ${error.status})`;
    return `GitHub: ${error.message}${status}. ${error.hint}`.trim();
  }
  if (error instanceof GitError) {
    return `git: ${error.message}`;
  }
  if (error instanceof UsageError || error instanceof RefNameError) {
    return error.message;
  }
  return null;
}
