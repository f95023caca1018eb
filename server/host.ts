// The host: the fleet's process-side state (one instance id, one connection per repository)
// and the operations the MCP tools and the CLI call. It holds no durable state of its own:
// every answer is rebuilt from GitHub.
import { hostname } from "node:os";
import type { Host, StatusInput, StatusResult, TakeoverInput, TakeoverResult } from "./host-api.js";
import type { PlanOutput } from "../schemas/tools.js";
import { connect, newInstanceId, type Connection, type ConnectOptions } from "./connection.js";
import { gatherSnapshot } from "./gh/gather.js";
import type { Logger } from "./gh/octokit.js";
import { UsageError } from "./gh/errors.js";
import { evaluatePreconditions } from "./preconditions.js";
import { planView } from "./plan.js";
import { Lease, parseNamespace } from "./state/claims.js";
import { rebuild } from "./state/rebuild.js";
import { assertInstanceId } from "./state/snapshot.js";
import { probeNamespace, type NamespaceProbe } from "./namespace-probe.js";

export interface HostOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  instance?: string;
  hostName?: string;
  clock?: () => Date;
  logger?: Logger;
}

interface Project {
  conn: Connection;
  lease: Lease;
  namespace: NamespaceProbe;
}

export class FleetHost implements Host {
  readonly instance: string;
  readonly hostName: string;
  private readonly clock: () => Date;
  private readonly projects = new Map<string, Promise<Project>>();

  constructor(private readonly options: HostOptions = {}) {
    this.instance = options.instance ?? newInstanceId();
    assertInstanceId(this.instance);
    this.hostName = options.hostName ?? hostname();
    this.clock = options.clock ?? (() => new Date());
  }

  /** Connects once per repository; a failed connection is not cached (fix and retry). */
  private project(repo: string | undefined): Promise<Project> {
    const key = repo?.toLowerCase() ?? "(origin)";
    let pending = this.projects.get(key);
    if (!pending) {
      pending = this.open(repo);
      this.projects.set(key, pending);
      pending.catch(() => this.projects.delete(key));
    }
    return pending;
  }

  private async open(repo: string | undefined): Promise<Project> {
    const options: ConnectOptions = { repo };
    if (this.options.env) options.env = this.options.env;
    if (this.options.cwd) options.cwd = this.options.cwd;
    if (this.options.logger) options.logger = this.options.logger;
    const conn = await connect(options);
    const namespace = await probeNamespace(conn.refs, conn.config.namespace, this.instance);
    const lease = new Lease(
      conn.refs,
      { namespace: namespace.namespace, ttlSeconds: conn.config.lease.ttl_seconds, heartbeatSeconds: conn.config.lease.heartbeat_seconds },
      this.instance,
      this.hostName,
      this.clock,
    );
    return { conn, lease, namespace };
  }

  /** The dry-run plan: preconditions, then one gather and one rebuild. Acts on nothing. */
  async plan(repo?: string): Promise<PlanOutput> {
    const { conn, namespace } = await this.project(repo);
    const before = conn.forge.stats();
    const now = this.clock();
    const [snapshot, labels] = await Promise.all([
      gatherSnapshot(conn.forge, conn.refs, {
        login: conn.login,
        defaultBranch: conn.info.defaultBranch,
        base: conn.base,
        namespace: namespace.namespace,
        gateMode: conn.config.gate.ci,
        now,
      }),
      conn.forge.listLabels(),
    ]);
    const preconditions = evaluatePreconditions({
      repo: conn.repo,
      info: conn.info,
      labels,
      base: conn.base,
      baseSha: conn.baseSha,
      config: conn.config,
      namespace,
      requiredChecks: conn.config.gate.ci === "local" ? await conn.forge.requiredChecks(conn.base) : snapshot.requiredChecks,
    });
    const set = rebuild(snapshot, conn.config, this.instance, now);
    const after = conn.forge.stats();
    return planView({
      set,
      login: conn.login,
      base: conn.base,
      preconditions,
      rateLimit: conn.forge.rateLimit(),
      requests: {
        total: after.total - before.total,
        counted: after.counted - before.counted,
        notModified: after.notModified - before.notModified,
      },
    });
  }

  async status(input: StatusInput): Promise<StatusResult> {
    const scope = input.scope ?? "project";
    if (scope === "issue" && input.issue === undefined) throw new UsageError('status: scope "issue" needs `issue` (the issue number)');
    if (scope === "worker") {
      // Workers are born by a running project; without one there are none to report.
      return { scope, registration: null, plan: null, issue: null, workers: [] };
    }
    const plan = await this.plan(input.repo);
    if (scope === "project") return { scope, registration: null, plan, issue: null, workers: [] };
    return { scope, registration: null, plan: null, issue: locateIssue(plan, input.issue!), workers: [] };
  }

  async takeover(input: TakeoverInput): Promise<TakeoverResult> {
    const { lease, conn, namespace } = await this.project(input.repo);
    const entries = await conn.refs.list(`${namespace.namespace}/`);
    const { claims, heartbeats } = parseNamespace(namespace.namespace, entries);
    const rows = lease.instances(claims, heartbeats).map((r) => ({
      instance: r.instance,
      host: r.host,
      claims: r.claims,
      claim_count: r.claims.length,
      heartbeat_at: r.heartbeatAt,
      heartbeat_age_seconds: r.heartbeatAgeSeconds,
      fresh: r.fresh,
      is_me: r.isMe,
    }));
    if (input.list || input.instance === undefined) {
      return {
        action: "list",
        instances: rows,
        from: null,
        taken: [],
        lost: [],
        message:
          rows.length === 0
            ? "no fleet instance has claims or a heartbeat in this repository"
            : `${rows.length} instance(s); take one with takeover {instance, confirm?}`,
      };
    }
    const outcome = await lease.takeover(input.instance, claims, heartbeats, input.confirm ?? false);
    if (outcome.action === "taken" && outcome.taken.length > 0) await lease.heartbeat(true);
    switch (outcome.action) {
      case "confirm":
        return { action: "confirm", instances: rows, from: outcome.instance, taken: [], lost: [], message: outcome.warning };
      case "none":
        return { action: "none", instances: rows, from: outcome.instance, taken: [], lost: [], message: outcome.reason };
      case "taken":
        return {
          action: "taken",
          instances: rows,
          from: outcome.instance,
          taken: outcome.taken,
          lost: outcome.lost,
          message:
            `took ${outcome.taken.length} claim(s) from ${outcome.instance}` +
            (outcome.lost.length ? `; lost ${outcome.lost.length} to a faster fleet (${outcome.lost.map((n) => `#${n}`).join(", ")})` : ""),
        };
    }
  }
}

function locateIssue(plan: PlanOutput, number: number): NonNullable<StatusResult["issue"]> {
  // A claim says more than the exclusion it causes, so claims are looked up first.
  const mine = plan.mine.find((m) => m.issue === number);
  if (mine) return { number, where: "mine", detail: `claimed by this instance: ${mine.status}${mine.pr ? ` (PR #${mine.pr})` : ""}` };
  const live = plan.peers_live.find((p) => p.issue === number);
  if (live) return { number, where: "peer_live", detail: `claimed by live instance ${live.instance ?? "?"} on ${live.host ?? "?"}` };
  const stale = plan.peers_stale.find((p) => p.issue === number);
  if (stale) return { number, where: "stale", detail: `claimed by ${stale.instance ?? "an unknown instance"}, whose lease lapsed (${stale.stale_reason})` };
  const dispatchAt = plan.dispatch.findIndex((d) => d.number === number);
  if (dispatchAt >= 0) return { number, where: "dispatch", detail: `next to dispatch at position ${dispatchAt + 1} of ${plan.dispatch.length}` };
  const excluded = plan.excluded.find((e) => e.number === number);
  if (excluded) return { number, where: "excluded", detail: excluded.text };
  return { number, where: "not_open", detail: `#${number} is not an open issue of ${plan.repo}` };
}
