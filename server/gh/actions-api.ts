// The GitHub Actions REST calls the `actions` runtime makes (server/runtimes/actions/): read a
// workflow, dispatch it with the run id returned, read and cancel a run, list its jobs, read the
// end of a job's log, and list the repository's recent pushes (who moved which ref). Every GET goes through the client's
// conditional fetch (etag-cache.ts): a run polled while unchanged answers 304 and costs no
// rate limit, which is what keeps twenty runs in flight under thirty requests a worker-hour.
import type { RepoSlug } from "./forge.js";
import { ForgeError } from "./errors.js";
import { tailBytes } from "../text/text.js";

export type RunStatus = "queued" | "in_progress" | "completed" | "waiting" | "requested" | "pending";

export interface WorkflowInfo {
  id: number;
  path: string;
  name: string;
  /** "active", or why GitHub will not run it ("disabled_manually", ...). */
  state: string;
}

export interface WorkflowRun {
  id: number;
  status: RunStatus;
  /** Set once completed: success, failure, cancelled, timed_out, ... */
  conclusion: string | null;
  headBranch: string | null;
  htmlUrl: string;
  createdAt: string;
  updatedAt: string;
  /** When the run (its current attempt) started on a runner. */
  startedAt: string | null;
}

export interface RunJob {
  id: number;
  name: string;
  status: RunStatus;
  conclusion: string | null;
  runnerName: string | null;
  steps: Array<{ name: string; status: RunStatus; conclusion: string | null }>;
}

/** One push or ref move of the repository's activity (`GET /repos/{o}/{r}/activity`). */
export interface RefActivity {
  id: number;
  ref: string;
  before: string;
  after: string;
  timestamp: string;
  activityType: string;
  actor: string | null;
}

export type Params = Record<string, unknown>;

interface RawRun {
  id: number;
  status?: string | null;
  conclusion?: string | null;
  head_branch?: string | null;
  html_url?: string;
  created_at?: string;
  updated_at?: string;
  run_started_at?: string | null;
}

export class ActionsApi {
  /** `call`: the forge's own request path (owner and repo filled in, errors as ForgeErrors, github-forge.ts). */
  constructor(
    readonly repo: RepoSlug,
    private readonly call: <T = unknown>(route: string, params: Params, what: string) => Promise<T>,
    /** An array endpoint page by page, newest page first as the route orders it (Link headers followed). */
    private readonly pages: (route: string, params: Params, what: string) => AsyncIterable<unknown[]>,
  ) {}

  /** The workflow by file name (or id); null when the repository's default branch has no such workflow. */
  async workflow(file: string): Promise<WorkflowInfo | null> {
    try {
      // One request, conditional: the preflight reads it at every start.
      const raw = await this.call<{ id: number; path?: string; name?: string; state?: string }>(
        "GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}",
        { workflow_id: file },
        `read workflow ${file}`,
      );
      return { id: raw.id, path: raw.path ?? `.github/workflows/${file}`, name: raw.name ?? file, state: raw.state ?? "active" };
    } catch (error) {
      if (error instanceof ForgeError && error.status === 404) return null;
      throw error;
    }
  }

  /** Dispatches the workflow at `ref` with `inputs`; the new run's id (GitHub answers it with `return_run_details`). */
  async dispatch(file: string, ref: string, inputs: Record<string, string>): Promise<{ runId: number; htmlUrl: string }> {
    // One request per worker birth.
    const raw = await this.call<{ workflow_run_id?: number; html_url?: string } | undefined>(
      "POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches",
      { workflow_id: file, ref, inputs, return_run_details: true },
      `dispatch workflow ${file} at ${ref}`,
    );
    if (!raw || typeof raw.workflow_run_id !== "number") {
      throw new ForgeError(
        "unexpected",
        `dispatch workflow ${file}: GitHub answered without the run's id`,
        204,
        "GitHub Enterprise Server may not return run details yet",
      );
    }
    return { runId: raw.workflow_run_id, htmlUrl: raw.html_url ?? "" };
  }

  /** The run; null when it does not exist (deleted). */
  async run(runId: number): Promise<WorkflowRun | null> {
    try {
      // Conditional: an unchanged run answers 304 (no rate limit).
      return toRun(await this.call<RawRun>("GET /repos/{owner}/{repo}/actions/runs/{run_id}", { run_id: runId }, `read workflow run ${runId}`));
    } catch (error) {
      if (error instanceof ForgeError && error.status === 404) return null;
      throw error;
    }
  }

  /** Cancels the run; false when it had completed already (409). */
  async cancel(runId: number): Promise<boolean> {
    try {
      // One request per stop.
      await this.call("POST /repos/{owner}/{repo}/actions/runs/{run_id}/cancel", { run_id: runId }, `cancel workflow run ${runId}`);
      return true;
    } catch (error) {
      if (error instanceof ForgeError && (error.status === 409 || error.status === 404)) return false;
      throw error;
    }
  }

  /** The runs of a workflow, newest first (one page of 100): what a restarted host looks through. */
  async runs(file: string, filter: { branch?: string; status?: string } = {}): Promise<WorkflowRun[]> {
    // One conditional request.
    const raw = await this.call<{ workflow_runs?: RawRun[] }>(
      "GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs",
      { workflow_id: file, per_page: 100, ...filter },
      `list the runs of workflow ${file}`,
    );
    return (raw.workflow_runs ?? []).map(toRun);
  }

  /** The run's jobs, with their steps and the runner each landed on. */
  async jobs(runId: number): Promise<RunJob[]> {
    // One conditional request, read when a run ends (why it failed) or looks stuck.
    const raw = await this.call<{ jobs?: Array<Record<string, unknown>> }>(
      "GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs",
      { run_id: runId, per_page: 100 },
      `list the jobs of workflow run ${runId}`,
    );
    return (raw.jobs ?? []).map((j) => ({
      id: Number(j.id),
      name: String(j.name ?? ""),
      status: String(j.status ?? "queued") as RunStatus,
      conclusion: (j.conclusion as string | null | undefined) ?? null,
      runnerName: (j.runner_name as string | null | undefined) ?? null,
      steps: ((j.steps as Array<Record<string, unknown>> | undefined) ?? []).map((s) => ({
        name: String(s.name ?? ""),
        status: String(s.status ?? "queued") as RunStatus,
        conclusion: (s.conclusion as string | null | undefined) ?? null,
      })),
    }));
  }

  /**
   * The last `maxBytes` of a job's plain-text log (GitHub answers a redirect to where it is kept,
   * which fetch follows without the token), or null when GitHub has none (expired, or no such
   * job). Read as a stream: only the tail is kept, however long the job ran.
   */
  async jobLogTail(jobId: number, maxBytes: number): Promise<{ text: string; cut: boolean } | null> {
    let body: unknown;
    try {
      // One request (and its redirect), read only when a run failed without the worker's last beat.
      body = await this.call<unknown>(
        "GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs",
        { job_id: jobId, request: { parseSuccessResponseBody: false } },
        `read the log of job ${jobId}`,
      );
    } catch (error) {
      if (error instanceof ForgeError && (error.status === 404 || error.status === 410)) return null;
      throw error;
    }
    if (typeof body === "string") return keepTail(body, maxBytes);
    if (!body || typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] !== "function") return null;
    const chunks: Buffer[] = [];
    let held = 0;
    let cut = false;
    for await (const chunk of body as AsyncIterable<Uint8Array>) {
      chunks.push(Buffer.from(chunk));
      held += chunk.byteLength;
      // Drop whole chunks from the front while the rest still holds the tail.
      while (chunks.length > 1 && held - chunks[0]!.byteLength >= maxBytes) {
        held -= chunks.shift()!.byteLength;
        cut = true;
      }
    }
    return keepTail(Buffer.concat(chunks).toString("utf8"), maxBytes, cut);
  }

  /**
   * The repository's pushes by `actor`, newest first, back to `since` (epoch ms; a page of 100 at
   * a time, at most `maxPages`: twenty runs' beats alone are a hundred pushes in five minutes);
   * `ref`: onto that ref only (then one page holds the latest 100 onto it).
   */
  async pushesBy(actor: string, options: { ref?: string; since?: number; maxPages?: number } = {}): Promise<RefActivity[]> {
    const { ref, since = Number.NEGATIVE_INFINITY, maxPages = 20 } = options;
    const out: RefActivity[] = [];
    let pages = 0;
    // One conditional request per page: at a run's end (which refs the runners moved), or per judged head.
    for await (const page of this.pages(
      "GET /repos/{owner}/{repo}/activity",
      { actor, per_page: 100, direction: "desc", ...(ref ? { ref } : {}) },
      `list the pushes by ${actor}${ref ? ` onto ${ref}` : ""}`,
    )) {
      let older = false;
      for (const a of page as Array<Record<string, unknown>>) {
        if (Date.parse(String(a.timestamp ?? "")) < since) {
          older = true;
          break;
        }
        if (a.activity_type !== "push" && a.activity_type !== "force_push" && a.activity_type !== "branch_creation") continue;
        out.push({
          id: Number(a.id),
          ref: String(a.ref ?? ""),
          before: String(a.before ?? ""),
          after: String(a.after ?? ""),
          timestamp: String(a.timestamp ?? ""),
          activityType: String(a.activity_type),
          actor: ((a.actor as { login?: string } | null | undefined)?.login ?? null) as string | null,
        });
      }
      pages += 1;
      if (older || pages >= maxPages || ref !== undefined) break;
    }
    return out;
  }
}

/** The last `maxBytes` of `text`, from a line's start (a cut line's rest says nothing). */
function keepTail(text: string, maxBytes: number, cut = false): { text: string; cut: boolean } {
  const tail = tailBytes(text, maxBytes);
  return tail.cut || cut ? { text: tail.text.slice(tail.text.indexOf("\n") + 1), cut: true } : { text, cut: false };
}

function toRun(raw: RawRun): WorkflowRun {
  return {
    id: raw.id,
    status: (raw.status ?? "queued") as RunStatus,
    conclusion: raw.conclusion ?? null,
    headBranch: raw.head_branch ?? null,
    htmlUrl: raw.html_url ?? "",
    createdAt: raw.created_at ?? "",
    updatedAt: raw.updated_at ?? "",
    startedAt: raw.run_started_at ?? null,
  };
}
