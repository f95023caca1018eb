// Records every response the local forge sends and checks it against GitHub's OpenAPI
// description (test/support/openapi.ts). Plug `onResponse` into `startForge({onResponse})`,
// drive a scenario, then assert `violations()` is empty and `seen()` covers the operations.

import { createResponseValidator, isSkippedPath, type ResponseValidator } from "./openapi.js";

/** What the forge reports for each response it sends. */
export interface ForgeResponse {
  method: string;
  /** Decoded, without the query string. */
  path: string;
  /** As received (percent-encoded; may carry the query string). */
  rawPath?: string;
  status: number;
  body: unknown;
}

export interface ConformanceRecorder {
  onResponse: (res: ForgeResponse) => void;
  /** One line per problem: "<METHOD> <concrete path>: <METHOD> <template> -> <status>: <problem>". */
  violations(): string[];
  /** Operations ("GET /repos/{owner}/{repo}/issues") that answered at least once. */
  seen(): Set<string>;
  /** Operations seen with each status: "GET /repos/{owner}/{repo}/issues 200". */
  seenStatuses(): Set<string>;
  /** Number of responses recorded (skipped paths excluded). */
  count(): number;
  validator: ResponseValidator;
}

export interface ConformanceRecorderOptions {
  validator?: ResponseValidator;
  /** A prefix to strip from paths before matching (if the forge serves the API under one). */
  basePath?: string;
}

export function conformanceRecorder(options: ConformanceRecorderOptions = {}): ConformanceRecorder {
  const validator = options.validator ?? createResponseValidator();
  const basePath = (options.basePath ?? "").replace(/\/$/, "");
  const violations: string[] = [];
  const seen = new Set<string>();
  const seenStatuses = new Set<string>();
  let count = 0;

  function strip(p: string): string {
    const noQuery = p.split("?")[0] as string;
    return basePath && noQuery.startsWith(basePath + "/") ? noQuery.slice(basePath.length) : noQuery;
  }

  function onResponse(res: ForgeResponse): void {
    // Match on the raw path when there is one: a label name or ref may hold an encoded "/".
    const path = strip(res.rawPath ?? res.path);
    if (isSkippedPath(path) || isSkippedPath(strip(res.path))) return;
    count++;
    try {
      const op = validator.operationFor(res.method, path);
      if (op) {
        seen.add(op);
        seenStatuses.add(`${op} ${res.status}`);
      }
      for (const problem of validator.validate(res.method, path, res.status, res.body)) {
        violations.push(`${res.method.toUpperCase()} ${res.path}: ${problem}`);
      }
    } catch (err) {
      violations.push(`${res.method} ${res.path} ${res.status}: validator threw: ${(err as Error).stack ?? String(err)}`);
    }
  }

  return {
    onResponse,
    violations: () => [...violations],
    seen: () => new Set(seen),
    seenStatuses: () => new Set(seenStatuses),
    count: () => count,
    validator,
  };
}
