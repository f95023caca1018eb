// Route table for the REST API. Templates are GitHub's own strings ("GET
// /repos/{owner}/{repo}/issues/{issue_number}"), which also name routes in the accounting.
// Path parameters are percent-decoded (Octokit sends `afk%2Fclaim%2F42` for a ref); ref-like
// parameters are greedy so that an unencoded `heads/feature/x` matches too.
import type { UserRecord } from "./state.js";
import type { ForgeEmulator } from "./core.js";
import type { RequestMemo } from "./memo.js";

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RequestContext {
  forge: ForgeEmulator;
  method: string;
  params: Record<string, string>;
  query: URLSearchParams;
  /** The JSON body when it is an object ({} otherwise). */
  body: Record<string, unknown>;
  /** The parsed JSON body as sent (some endpoints also accept a bare array). */
  rawBody: unknown;
  /** The authenticated caller, or null for an anonymous read. */
  user: UserRecord | null;
  /** Scheme and host the client used, for Link headers. */
  requestBase: string;
  /** The raw request path (no query). */
  rawPath: string;
  memo: RequestMemo;
}

export type Handler = (ctx: RequestContext) => Reply | Promise<Reply>;

export interface RouteOptions {
  /**
   * The answer depends only on forge state (not on git refs or the caller), so it may be
   * served from a cache until the state's revision changes.
   */
  stateOnly?: boolean;
}

export const STATE_ONLY: RouteOptions = { stateOnly: true };

export interface Route extends RouteOptions {
  method: string;
  template: string;
  handler: Handler;
}

/** Parameters that may span several path segments (git ref names, branch and label names). */
const GREEDY = new Set(["ref", "branch", "name"]);
/** Parameters that must be decimal numbers; anything else does not match the route. */
const NUMERIC = new Set(["issue_number", "pull_number", "comment_id", "check_run_id", "issue_id", "ruleset_id", "run_id", "job_id"]);

interface Compiled {
  route: Route;
  key: string;
  prefix: string[];
  greedy: string | null;
  suffix: string[];
}

export interface Match {
  route: Route;
  /** "METHOD /template", the accounting key. */
  key: string;
  params: Record<string, string>;
}

export class Router {
  private readonly compiled: Compiled[] = [];

  add(method: string, template: string, handler: Handler, options: RouteOptions = {}): this {
    const segments = template.split("/").slice(1);
    const gi = segments.findIndex((s) => s.startsWith("{") && GREEDY.has(s.slice(1, -1)));
    this.compiled.push({
      route: { method, template, handler, ...options },
      key: `${method} ${template}`,
      prefix: gi < 0 ? segments : segments.slice(0, gi),
      greedy: gi < 0 ? null : segments[gi]!.slice(1, -1),
      suffix: gi < 0 ? [] : segments.slice(gi + 1),
    });
    return this;
  }

  /** Finds the route for a raw (still percent-encoded) path. */
  match(method: string, rawPath: string): Match | null {
    const segments = rawPath.split("/").slice(1);
    for (const c of this.compiled) {
      if (c.route.method !== method) continue;
      const params = matchSegments(c, segments);
      if (params) return { route: c.route, key: c.key, params };
    }
    return null;
  }

  /** Every "METHOD /template" served. */
  templates(): string[] {
    return this.compiled.map((c) => c.key);
  }
}

function matchSegments(c: Compiled, segments: string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  if (c.greedy === null) {
    if (segments.length !== c.prefix.length) return null;
  } else if (segments.length < c.prefix.length + c.suffix.length + 1) {
    return null;
  }
  for (let i = 0; i < c.prefix.length; i++) {
    if (!bind(c.prefix[i]!, segments[i]!, params)) return null;
  }
  if (c.greedy === null) return params;
  const tail = segments.length - c.suffix.length;
  for (let i = 0; i < c.suffix.length; i++) {
    if (!bind(c.suffix[i]!, segments[tail + i]!, params)) return null;
  }
  const raw = segments.slice(c.prefix.length, tail).join("/");
  const value = safeDecode(raw);
  if (value === null || value === "") return null;
  params[c.greedy] = value;
  return params;
}

function bind(pattern: string, segment: string, params: Record<string, string>): boolean {
  if (pattern.startsWith("{")) {
    const name = pattern.slice(1, -1);
    const value = safeDecode(segment);
    if (value === null || value === "") return false;
    if (NUMERIC.has(name) && !/^\d+$/.test(value)) return false;
    params[name] = value;
    return true;
  }
  return pattern === segment;
}

function safeDecode(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}
