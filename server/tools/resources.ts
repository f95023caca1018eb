// What the MCP server pushes and serves besides tools: the board, one issue's story and the
// lanes as resources (with subscriptions: a board update at most once per tick, a list change
// when a repository starts or stops), and the supervisor's warnings and errors as logging
// notifications. Everything comes from the Host interface and its events, so the same code
// serves an in-process host and a daemon client.
import { McpServer, ResourceTemplate, type ReadResourceResult } from "@modelcontextprotocol/server";
import { PROJECT_LANES } from "../../schemas/lanes.js";
import { renderPlan, UsageError, type Host, type HostEvent, type StatusResult } from "../host/api.js";
import { renderStatusHead, workerLines } from "./render.js";
import { cutText, DEFAULT_BUDGET } from "./budget.js";
import { describeFailure } from "./failure.js";
import { registerLedgerResources, timelineUri } from "./ledger-resources.js";

export const boardUri = (repo: string): string => `afk://${repo}/board`;
/** The board as an MCP App (server/dashboard/app.ts): what `status` and the board resource link for hosts that render apps. */
export const BOARD_APP_URI = "ui://afk-mcp/board";
/** How a tool or a resource links the app: the extension's key, and the key of its early drafts that older hosts read. */
export const BOARD_APP_LINK = { ui: { resourceUri: BOARD_APP_URI }, "ui/resourceUri": BOARD_APP_URI };
/** The machine's one daemon lane: no repository in it. */
export const DAEMON_LANE_URI = "afk://daemon/lane";

function renderLane(lane: string, records: Record<string, unknown>[]): string {
  return (
    records.map((r) => `${String(r.ts)} ${String(r.level)} ${r.issue !== undefined ? `#${String(r.issue)} ` : ""}${String(r.msg)}`).join("\n") ||
    `no ${lane} records`
  );
}

/** Repositories that start with `value`: the running fleets, then the working directory's remotes (origin first). */
export async function completeRepo(host: Host, value: string): Promise<string[]> {
  const { running, origin, remotes } = await host.repos();
  return [...new Set([...running, ...(origin ? [origin] : []), ...remotes])].filter((r) => r.toLowerCase().startsWith(value.toLowerCase()));
}

/** Registers the resources and wires the host's events to this server's session. */
export function registerResources(server: McpServer, host: Host, era: "legacy" | "modern" = "legacy"): void {
  const slugOf = (vars: Record<string, string | string[]>) => `${String(vars.owner)}/${String(vars.repo)}`;
  const repoCompletions = (value: string) => completeRepo(host, value);
  const ownerComplete = async (value: string) => [...new Set((await repoCompletions("")).map((r) => r.split("/")[0]!))].filter((o) => o.startsWith(value));
  const nameComplete = async (value: string) => (await repoCompletions("")).map((r) => r.split("/")[1]!).filter((n) => n.startsWith(value));

  server.registerResource(
    "board",
    new ResourceTemplate("afk://{owner}/{repo}/board", {
      list: async () => ({
        resources: (await host.repos()).running.map((repo) => ({ uri: boardUri(repo), name: `${repo} board`, mimeType: "text/plain", _meta: BOARD_APP_LINK })),
      }),
      complete: { owner: ownerComplete, repo: nameComplete },
    }),
    {
      title: "Fleet board",
      description:
        "The fleet at a glance: registration, births paused or not, merges held or authorized, last and next tick, workers, in-flight PRs, issues needing a human. Subscribe for an update at most once per tick.",
      mimeType: "text/plain",
      _meta: BOARD_APP_LINK,
    },
    async (uri, vars) =>
      guarded(uri.href, async () =>
        renderBoard(await host.status({ repo: slugOf(vars), scope: "project" }), await host.status({ repo: slugOf(vars), scope: "worker" })),
      ),
  );

  server.registerResource(
    "issue",
    new ResourceTemplate("afk://{owner}/{repo}/issue/{number}", { list: undefined, complete: { owner: ownerComplete, repo: nameComplete } }),
    {
      title: "One issue's story",
      description: "Where one issue stands in the plan, and the supervisor's records about it (newest last).",
      mimeType: "text/plain",
    },
    async (uri, vars) =>
      guarded(uri.href, async () => {
        const repo = slugOf(vars);
        if (!/^[1-9]\d{0,9}$/.test(String(vars.number)))
          throw new UsageError(`no issue "${String(vars.number)}": the URI ends in an issue number, as in afk://${repo}/issue/12`);
        const issue = Number(vars.number);
        const status = await host.status({ repo, scope: "issue", issue });
        const logs = await host.logs({ repo, lane: "supervisor", issue, tail_lines: 100 });
        const story = logs.records.map((r) => `${String(r.ts)} ${String(r.level)} ${String(r.msg)}`);
        return [
          `#${issue}: ${status.issue?.where ?? "?"} — ${status.issue?.detail ?? ""}`,
          spendLine(status, issue),
          `timeline: ${timelineUri(repo, issue)}`,
          "",
          story.length ? "story:" : "no supervisor records about it yet",
          ...story,
        ].join("\n");
      }),
  );

  server.registerResource(
    "lane",
    new ResourceTemplate("afk://{owner}/{repo}/lanes/{lane}", {
      list: undefined,
      complete: { owner: ownerComplete, repo: nameComplete, lane: (value) => PROJECT_LANES.filter((l) => l.startsWith(value)) },
    }),
    {
      title: "A log lane",
      description: "The newest records of one lane (supervisor, worker, monitor, liveness); the logs tool pages further back.",
      mimeType: "text/plain",
    },
    async (uri, vars) =>
      guarded(uri.href, async () => {
        const lane = String(vars.lane);
        if (!(PROJECT_LANES as readonly string[]).includes(lane))
          throw new UsageError(`no lane "${lane}": use one of ${PROJECT_LANES.join(", ")} (the daemon's lane is ${DAEMON_LANE_URI})`);
        return renderLane(lane, (await host.logs({ repo: slugOf(vars), lane: lane as (typeof PROJECT_LANES)[number], tail_lines: 200 })).records);
      }),
  );

  server.registerResource(
    "daemon-lane",
    DAEMON_LANE_URI,
    {
      title: "The daemon's lane",
      description: 'The newest records of this machine\'s daemon: its own lines, its stdout and stderr; logs {lane: "daemon"} pages further back.',
      mimeType: "text/plain",
    },
    async (uri) => guarded(uri.href, async () => renderLane("daemon", (await host.logs({ lane: "daemon", tail_lines: 200 })).records)),
  );

  registerLedgerResources(server, host, { ownerComplete, nameComplete });

  const subscribed = new Set<string>();
  server.server.registerCapabilities({ resources: { subscribe: true, listChanged: true } });
  server.server.setRequestHandler("resources/subscribe", async (request) => {
    subscribed.add(request.params.uri);
    // A session whose first request is this one has not reached the daemon that runs the fleet
    // (and pushes its events) yet: reach it now, never starting one.
    await host.listen?.();
    return {};
  });
  server.server.setRequestHandler("resources/unsubscribe", async (request) => {
    subscribed.delete(request.params.uri);
    return {};
  });

  const onEvent = (event: HostEvent): void => {
    if (!server.isConnected()) return;
    if (event.kind === "board") {
      const uri = boardUri(event.repo);
      // 2025-11-25: to what resources/subscribe named. 2026-07-28 has no such call: the SDK's
      // subscriptions/listen router passes the update to the streams whose filter names the URI.
      const to = era === "modern" ? [uri] : [...subscribed].filter((s) => s.toLowerCase() === uri.toLowerCase());
      for (const s of to) void server.server.sendResourceUpdated({ uri: s }).catch(() => undefined);
    } else if (event.kind === "repos") {
      server.sendResourceListChanged();
    } else if (era === "modern") {
      // logging is deprecated in 2026-07-28 and has no stream to ride: the logs tool and the
      // lane resources carry the same records.
    } else {
      // The SDK keeps logging/setLevel per transport session (HTTP has one per client); without
      // the id it would judge every message by the default level, ignoring what the client set.
      const session = server.server.transport?.sessionId;
      void server
        .sendLoggingMessage({ level: event.level, logger: `afk/${event.repo}/${event.lane}`, data: `${event.at} ${event.message}` }, session)
        .catch(() => undefined);
    }
  };
  const unsubscribe = host.subscribe(onEvent);
  const previous = server.server.onclose;
  server.server.onclose = () => {
    unsubscribe();
    previous?.();
  };
}

/** The board: status's head, the workers, and the plan's summary. */
export function renderBoard(project: StatusResult, workers: StatusResult): string {
  const lines = renderStatusHead(project);
  lines.push("", workers.workers.length === 0 ? "workers: none running" : `workers (${workers.workers.length}):`);
  const repo = project.registration?.repo ?? null;
  for (const w of workers.workers)
    lines.push(
      ...workerLines(
        w,
        `#${w.issue}  ${w.state}${w.pid ? `  pid ${w.pid}` : ""}  attempt ${w.attempt}${w.engine !== "command" ? `  ${w.engine}${w.model ? ` ${w.model}` : ""}` : ""}`,
        "  ",
      ),
    );
  // Each issue's timeline and the report, as links (afk-mcp ledger --timeline N in a terminal).
  if (repo)
    lines.push(
      "",
      `timelines: ${workers.workers.length > 0 ? workers.workers.map((w) => timelineUri(repo, w.issue)).join(" ") : `afk://${repo}/issue/{n}/timeline`} · final report: afk://${repo}/report`,
    );
  if (project.plan) lines.push("", renderPlan(project.plan, project.registration !== null));
  return lines.join("\n");
}

async function guarded(uri: string, read: () => Promise<string>): Promise<ReadResourceResult> {
  let text: string;
  try {
    text = await read();
  } catch (error) {
    const failure = describeFailure(error);
    if (!failure) throw error;
    text = `cannot read ${uri}: ${failure}`;
  }
  return { contents: [{ uri, mimeType: "text/plain", text: cutText(text, DEFAULT_BUDGET.textBytes) }] };
}

/** One issue's spend as status counts it: "unknown" where no attempt's cost was reported, never $0. */
function spendLine(status: StatusResult, issue: number): string {
  const row = status.spend?.issues.find((i) => i.issue === issue);
  const engine = status.registration?.engine;
  const by = engine ? ` (engine ${engine})` : "";
  if (!row || row.attempts === 0) return `spend: nothing recorded on this host${by}`;
  const usd =
    row.unknown_attempts === row.attempts
      ? "unknown"
      : `$${row.usd.toFixed(4)}${row.unknown_attempts > 0 ? ` (+${row.unknown_attempts} attempt(s) of unknown cost)` : ""}`;
  return `spend: ${usd} over ${row.attempts} attempt(s)${by}`;
}
