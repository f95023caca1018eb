// The host: the fleet's process-side state (one instance id, one connection per repository)
// and the operations the MCP tools and the CLI call. It holds no durable state of its own:
// every answer is rebuilt from GitHub.
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import type {
  CallerAccess,
  FinalReport,
  Host,
  HostEvent,
  LogsInput,
  LogsResult,
  ProjectResetInput,
  ProjectResizeInput,
  ProjectResult,
  ProjectStartInput,
  ProjectStopInput,
} from "./api.js";
import type {
  ReportInput,
  RepoListing,
  StepListener,
  StatusInput,
  StatusResult,
  TakeoverInput,
  TakeoverResult,
  Timeline,
  TimelineInput,
  TimelinesInput,
} from "./api.js";
import type { PlanOutput } from "../../schemas/tools.js";
import { connect, newInstanceId, originSlug, remoteSlugs, withScaledLease, type ConnectOptions } from "./connection.js";
import { withRepo } from "./default-repo.js";
import { HostLanes } from "./host-lanes.js";
import type { Logger } from "../gh/octokit.js";
import { UsageError } from "../gh/errors.js";
import { fleetRows, pagePlan, planView } from "./plan.js";
import { Lease } from "../gh/lease.js";
import { assertInstanceId } from "../state/snapshot.js";
import { probeNamespace, type NamespaceProbe } from "./namespace-probe.js";
import { RepoFleet, summaryLine } from "../fleet/repo-fleet.js";
import { runningWorkerCount } from "../fleet/worker-runs.js";
import { daemonDir, stateDir } from "../paths.js";
import { laneDir } from "../lanes/index.js";
import { readLogs } from "./logs.js";
import { recentTimelines, reportOf, timelineOf } from "./ledger-views.js";
import { HostEvents } from "./events.js";
import { connectedStep, followDrain } from "./steps.js";
import { locateIssue, overview, registrationView, resizeMessage, runDirFor, withOrphans } from "./views.js";
import { takeoverOn } from "./takeover.js";
import { planFor, type RepoAccess } from "./repo-access.js";
import { parseSlug, formatSlug, repoKey } from "../gh/slug.js";
import { abandon, handOver } from "./leaving.js";
import { assessRun, dryRunMessage, namedNote, refuseStart } from "./run-outline.js";
import { refuseNamedTypos } from "./named-lookup.js";
import { newFleet, refuseIfRunning, registrationRow, type RegistrationRow } from "./new-fleet.js";
import { readHostConfig } from "./host-config.js";
import { HostBudget } from "../fleet/host-budget.js";
import { RuntimeRegistry } from "../runtimes/registry.js";
import { HostLandings } from "../landing/held-locks.js";

export interface HostOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  instance?: string;
  hostName?: string;
  clock?: () => Date;
  logger?: Logger;
  /** Multiplies the loop's durations (pacing, stall and kill thresholds): tests and the demo run faster. */
  timeScale?: number;
  /** The instance id to act as on a repository (the daemon's, persisted per repository); default `instance`. */
  identity?: (repo: string) => string;
  /** This host is the machine's daemon (takeover marks its instances). */
  daemon?: boolean;
}

export class FleetHost implements Host {
  private readonly events = new HostEvents((repo) => this.boardKey(repo));
  readonly instance: string;
  readonly hostName: string;
  private readonly clock: () => Date;
  private readonly projects = new Map<string, Promise<RepoAccess>>();
  private readonly running = new Map<string, RepoFleet>();
  private readonly starting = new Set<string>();
  private readonly lanes: HostLanes;
  private readonly accessFor = new Map<string, RepoAccess>();
  /** Namespace probes that succeeded, per repository, namespace and token (never the token itself). */
  private readonly probes = new Map<string, NamespaceProbe>();
  /** The host-wide day budget and max_workers (host.json), shared by every fleet here; and its worker runtimes, each keeping what it started. */
  readonly hostBudget = new HostBudget();
  readonly runtimes = new RuntimeRegistry();
  readonly landings = new HostLandings();

  constructor(private readonly options: HostOptions = {}) {
    this.instance = options.instance ?? newInstanceId();
    this.lanes = new HostLanes(options.env ?? process.env, (repo, lane, line) => this.events.observe(repo, lane, line));
    assertInstanceId(this.instance);
    this.hostName = options.hostName ?? hostname();
    this.clock = options.clock ?? (() => new Date());
  }

  subscribe(listener: (event: HostEvent) => void): () => void {
    return this.events.subscribe(listener);
  }

  /** The board as a change detector sees it: what a subscriber would see change, or null when not running. */
  private boardKey(repo: string): string | null {
    const running = this.runningFor(repo);
    if (!running) return null;
    return JSON.stringify([
      registrationView(running.project),
      running.project.births(),
      running.project.workerRows().map((w) => [w.issue, w.state]),
      running.project.view()?.set.mine.map((m) => [m.issue, m.status, m.pr]) ?? [],
    ]);
  }

  async repos(): Promise<RepoListing> {
    const cwd = this.options.cwd ?? process.cwd();
    const origin = await originSlug(cwd).catch(() => null);
    return { running: this.runningRepos(), origin, remotes: await remoteSlugs(cwd) };
  }

  private readonly runningRepos = (): string[] => [...this.running.values()].filter((p) => !p.isStopped()).map((p) => p.registration.repo);

  /** Connects once per repository; a failed connection is not cached (fix and retry). */
  private project(repo: string | undefined): Promise<RepoAccess> {
    const key = repo ? repoKey(repo) : "(origin)";
    let pending = this.projects.get(key);
    if (!pending) {
      pending = this.open(repo);
      this.projects.set(key, pending);
      pending.catch(() => this.projects.delete(key));
    }
    return pending;
  }

  /** A repository no project runs: with the caller's environment if sent (never cached: its token lives no longer than the call), else this host's own. */
  private access(repo: string | undefined, as: CallerAccess, probe: boolean): Promise<RepoAccess> {
    if (as.env) return this.open(repo, { env: this.withOurState(as.env) }, probe);
    return probe ? this.open(repo, {}, true) : this.project(repo);
  }

  /** A session's environment with this host's state dir (control repositories, lanes). */
  private withOurState = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({ ...env, AFK_STATE_DIR: stateDir(this.options.env ?? process.env) });

  /** Connects; with `probe`, also proves the claim namespace writable (a ref pushed and deleted; read-only calls use a cached probe, else the config). */
  private async open(repo: string | undefined, extra: Partial<ConnectOptions> = {}, probe = false): Promise<RepoAccess> {
    const options: ConnectOptions = { repo, ...extra };
    if (!options.env && this.options.env) options.env = this.options.env;
    if (this.options.cwd) options.cwd = this.options.cwd;
    if (this.options.logger) options.logger = this.options.logger;
    const conn = withScaledLease(await connect(options), this.options.timeScale ?? 1);
    const instance = this.options.identity ? this.options.identity(conn.repo) : this.instance;
    const probeKey = `${repoKey(conn.repo)}\n${conn.config.namespace}\n${createHash("sha256").update(conn.token).digest("hex")}`;
    let namespace = this.probes.get(probeKey) ?? null;
    if (probe && !namespace) {
      namespace = await probeNamespace(conn.refs, conn.config.namespace, instance);
      if (namespace.writable) this.probes.set(probeKey, namespace);
    }
    const lease = new Lease(
      conn.refs,
      {
        namespace: namespace?.namespace ?? conn.config.namespace,
        ttlSeconds: conn.config.lease.ttl_seconds,
        heartbeatSeconds: conn.config.lease.heartbeat_seconds,
      },
      instance,
      this.hostName,
      this.clock,
    );
    return { instance, conn, lease, namespace };
  }

  /**
   * The dry-run plan: preconditions, then one gather and one rebuild. Acts on nothing. `run`
   * (`afk-mcp plan`): also what a start with this engine would run, as a dry run says it.
   */
  async plan(name?: string, as: CallerAccess = {}, run?: { engine?: string; model?: string }): Promise<PlanOutput> {
    const { repo } = await this.resolved({ repo: name }, "plan");
    const running = this.runningFor(repo);
    const connected = running ? running.connected : await this.access(repo, as, false);
    if (!run) return planFor(connected, this.clock);
    const env = this.options.env ?? process.env;
    return (await assessRun(connected, this.clock, { ...run, dry_run: true, auto_merge: null }, { host: env, project: as.env ?? env }, this.runtimes)).plan;
  }

  async status(given: StatusInput, as: CallerAccess = {}): Promise<StatusResult> {
    const scope = given.scope ?? "project";
    const input = await this.resolved(given, scope === "project" ? null : "status");
    if (scope === "issue" && input.issue === undefined) throw new UsageError('status: scope "issue" needs `issue` (the issue number)');
    // A row as status lists it: `idle` is the daemon registry's, and the listed schema has no such key.
    const rows = () => this.registrations().map(({ idle: _idle, ...row }) => row);
    if (input.repo === undefined && scope === "project") return overview(rows());
    const running = this.runningFor(input.repo);
    const registration = running ? registrationView(running.project) : null;
    const view = running?.project.view() ?? null;
    const report = running?.project.report() ?? null;
    const extra = {
      births: running ? running.project.births() : null,
      spend: running ? running.project.spend() : null,
      eta: running ? running.project.board.eta(report?.frontier_remaining ?? 0, running.project.registration.target) : null,
      last_tick: report ? `${report.at}: ${summaryLine(report)}` : null,
      next_tick: view?.nextTickAt?.toISOString() ?? null,
      registrations: scope === "project" ? rows() : [],
      daemon: null,
    };
    if (scope === "worker") {
      const repo = input.repo ?? running?.project.registration.repo;
      const rows = running ? running.project.workerRows() : [];
      const workers = repo ? await withOrphans(rows, runDirFor(stateDir(this.options.env ?? process.env), repo), this.runtimes) : rows;
      return { scope, registration, plan: null, issue: null, workers, source: null, ...extra };
    }
    const { plan, source } = await this.currentPlan(input.repo, as);
    if (scope === "project")
      return { scope, registration, plan: pagePlan(plan, input.detail === true, input.cursor), issue: null, workers: [], source, ...extra };
    const said = running?.project.memory.said(input.issue!);
    return { scope, registration, plan: null, issue: locateIssue(plan, input.issue!, said?.failed, said?.notice), workers: [], source, ...extra };
  }

  /**
   * The plan status shows: from the running fleet's last tick while recent (no request to GitHub),
   * else gathered afresh with the fleet's overlap holds still in its frontier; the answer says which.
   */
  private async currentPlan(repo: string | undefined, as: CallerAccess): Promise<{ plan: PlanOutput; source: NonNullable<StatusResult["source"]> }> {
    const running = this.runningFor(repo);
    const view = running?.project.view();
    const now = this.clock();
    if (running && view && running.connected.preconditions) {
      const age = (now.getTime() - view.at.getTime()) / 1000;
      const { config } = running.project.registration;
      if (age <= config.pacing.idle_seconds * (this.options.timeScale ?? 1)) {
        const { conn } = running.connected;
        const plan = planView({
          set: view.set,
          login: conn.login,
          base: conn.base,
          preconditions: running.connected.preconditions,
          rateLimit: conn.forge.rateLimit(),
          requests: { total: 0, counted: 0, notModified: 0 },
          fleet: running.project.report(),
          defaultModels: Object.fromEntries(Object.values(running.project.registration.engines ?? {}).map((e) => [e.name, e.model])),
        });
        return { plan, source: { from: "fleet_tick", at: view.at.toISOString(), age_seconds: Math.round(age * 10) / 10 } };
      }
    }
    const plan = await this.plan(repo, as);
    return { plan: { ...plan, ...fleetRows(running?.project.report(), plan.dispatch) }, source: { from: "gathered", at: now.toISOString(), age_seconds: 0 } };
  }

  // ---- projects ---------------------------------------------------------------------------------

  /**
   * The one rule for a call without a repository (default-repo.ts): this host's directory's origin
   * (none in the daemon: its directory is whichever session's started it), else its only project;
   * with several, `tool` is refused naming them.
   */
  private resolved<T extends { repo?: string | undefined }>(input: T, tool: string | null): Promise<T> {
    const cwd = this.options.cwd ?? process.cwd();
    const origin = async () => (this.options.daemon ? null : originSlug(cwd).catch(() => null));
    return withRepo(input, { origin, running: () => this.runningRepos() }, tool, this.options.daemon ? "the calling session's directory" : cwd);
  }

  private runningFor(repo: string | undefined): { project: RepoFleet; connected: RepoAccess } | null {
    const key = repo ? repoKey(repo) : this.running.size === 1 ? [...this.running.keys()][0]! : null;
    if (!key) return null;
    const project = this.running.get(key);
    const connected = this.accessFor.get(key);
    if (!project || !connected || project.isStopped()) return null;
    return { project, connected };
  }

  /** `as.env`: the registering session's environment (token, API URL, worker variables); the state dir stays ours. */
  async start(input: ProjectStartInput, onStep: StepListener = () => undefined, as: CallerAccess = {}): Promise<ProjectResult> {
    if (!input.dry_run && !input.worker_command && !input.engine) {
      throw new UsageError(
        'project_start: worker_command is required (the shell command that starts one agent in its worktree), or engine (e.g. "claude", "codex"), unless dry_run is true',
      );
    }
    const overrides: Record<string, unknown> = { ...(input.config ?? {}) };
    if (input.selectors) overrides.selectors = input.selectors;
    const hostEnv = this.options.env ?? process.env;
    const projectEnv = as.env ? this.withOurState(as.env) : undefined;
    const connected = await this.open(input.repo, { overrides, ...(input.base ? { base: input.base } : {}), ...(projectEnv ? { env: projectEnv } : {}) }, true);
    const { conn } = connected;
    onStep(connectedStep(connected));
    const key = repoKey(conn.repo);
    refuseIfRunning(this.running.get(key), conn.repo, connected.instance);
    // Two starts at once (a resumed registration, a session's) would both pass: two fleets, two workers per issue.
    if (this.starting.has(key)) throw new UsageError(`project_start: ${conn.repo} is being started on this host right now: wait for that start to answer`);
    this.starting.add(key);
    try {
      const env = projectEnv ?? hostEnv;
      const { plan, landing, chosen, runtimeNote } = await assessRun(connected, this.clock, input, { host: hostEnv, project: env }, this.runtimes, onStep);
      refuseStart(plan, true);
      this.hostBudget.set(await readHostConfig(stateDir(hostEnv)));
      if (input.dry_run || chosen === null) {
        return {
          registration: null,
          plan: pagePlan(plan, false),
          message: dryRunMessage(plan) + runtimeNote,
        };
      }
      refuseStart(plan, false);
      const lanes = this.lanes.of(conn.repo, conn.token);
      const { project, registration } = newFleet(connected, input, chosen, landing.method, {
        root: stateDir(hostEnv),
        lanes,
        clock: this.clock,
        timeScale: this.options.timeScale ?? 1,
        env,
        hostBudget: this.hostBudget,
        runtimes: this.runtimes,
        landings: this.landings,
      });
      this.running.set(key, project);
      this.accessFor.set(key, connected);
      lanes.append("supervisor", {
        event: "started",
        msg: `project started: target ${registration.target}, base ${registration.base}, merges ${registration.autoMerge ? "authorized" : "held"}`,
        instance: connected.instance,
        data: { target: registration.target, base: registration.base, auto_merge: registration.autoMerge },
      });
      project.start();
      onStep(`registered as instance ${registration.instance}: the fleet's loop is running, up to ${registration.target} worker(s)`);
      this.events.emit({ kind: "repos" });
      return {
        registration: registrationView(project),
        plan: pagePlan(plan, false),
        message: `started ${conn.repo}: up to ${registration.target} worker(s); ${registration.autoMerge ? "green PRs land unattended" : "merges are held (start with auto_merge: true to land)"}${namedNote(plan)}${runtimeNote}`,
      };
    } finally {
      this.starting.delete(key);
    }
  }

  async resize(given: ProjectResizeInput): Promise<ProjectResult> {
    const input = await this.resolved(given, "project_resize");
    const running = this.requireRunning(input.repo, "project_resize");
    const was = { target: running.project.registration.target, command: running.project.registration.workerCommand };
    const { connected } = running;
    if (input.selectors) await refuseNamedTypos(connected.conn.forge, connected.conn.repo, input.selectors, (connected.numberKinds ??= new Map()));
    running.project.resize({
      target: input.target,
      workerCommand: input.worker_command,
      ...(input.selectors
        ? {
            selectors: input.selectors.map((sel) => ({
              label: sel.label === undefined ? running.project.registration.config.labels.ready : sel.label,
              issues: sel.issues ?? null,
              tags: sel.tags ?? [],
              user: sel.user ?? null,
              epic: sel.epic ?? null,
              milestone: sel.milestone ?? null,
              blockers: sel.blockers ?? true,
              ...(sel.engine ? { engine: sel.engine } : {}),
              ...(sel.model ? { model: sel.model } : {}),
            })),
          }
        : {}),
    });
    return { registration: registrationView(running.project), plan: null, message: resizeMessage(running.project, was, input) };
  }

  async stop(given: ProjectStopInput, onStep?: StepListener): Promise<ProjectResult> {
    const input = await this.resolved(given, "project_stop");
    const running = this.runningFor(input.repo);
    if (!running) {
      return { registration: null, plan: null, message: `no project is running for ${input.repo ?? "this repository"} on this host: nothing to stop` };
    }
    const workers = runningWorkerCount(running.project.workerRows());
    onStep?.(
      `stopping ${running.project.registration.repo}: no new workers; ${input.stop_workers ? `ending ${workers} running worker(s)` : `${workers} running worker(s) finish first`}, then claims without a PR are released`,
    );
    const unfollow = followDrain(this.events, running.project.registration.repo, onStep);
    const report = await running.project.stop(input.stop_workers === true).finally(unfollow);
    const view = registrationView(running.project);
    const draining = running.project.draining();
    // A draining project stays registered (status shows it, a new start is refused) until its
    // last worker has exited.
    if (running.project.isStopped()) this.running.delete(repoKey(running.project.registration.repo));
    this.events.emit({ kind: "repos" });
    const settled = `released ${report.released.length} claim(s) without a PR; ${Math.max(0, report.in_flight - draining)} claim(s) with a PR kept`;
    return {
      registration: view,
      plan: null,
      message:
        draining > 0
          ? `stopping: ${settled}; ${draining} worker(s) still running: each claim is settled when its worker exits (a finished worker's commits still get their PR), then the project ends; project_stop {stop_workers: true} ends them now`
          : `stopped: ${settled}`,
    };
  }

  /** A record in a running project's supervisor lane (a warning also reaches the sessions listening). */
  note(repo: string, level: "info" | "warn", event: string, msg: string): void {
    this.runningFor(repo)?.project.log(level, event, msg);
  }

  async reset(given: ProjectResetInput): Promise<ProjectResult> {
    const input = await this.resolved(given, "project_reset");
    const running = this.requireRunning(input.repo, "project_reset");
    const was = running.project.reset();
    const cleared = [
      was.breaker ? "the tripped circuit breaker" : null,
      was.quota ? "the runtime pause (a usage limit, a login, a refusal or the network)" : null,
    ].filter((c) => c !== null);
    const message =
      cleared.length > 0
        ? `births resumed: cleared ${cleared.join(" and ")}`
        : "births were not paused (no circuit breaker trip, no runtime pause): nothing to clear";
    return { registration: registrationView(running.project), plan: null, message };
  }

  async logs(input: LogsInput): Promise<LogsResult> {
    // The daemon's lane belongs to the machine (the state dir), not to a repository.
    if (input.lane === "daemon") return readLogs(daemonDir(this.options.env ?? process.env), input);
    return readLogs(this.lanesOf((await this.resolved(input, "logs")).repo, "logs").dir, input);
  }

  async timeline(input: TimelineInput): Promise<Timeline> {
    const { dir, repo } = this.lanesOf((await this.resolved(input, "timeline")).repo, "timeline");
    return timelineOf(dir, repo, input.issue, this.clock());
  }

  async timelines(input: TimelinesInput): Promise<Timeline[]> {
    const { dir, repo } = this.lanesOf((await this.resolved(input, "timelines")).repo, "timelines");
    return recentTimelines(dir, repo, input.limit ?? 30, this.clock());
  }

  async report(input: ReportInput): Promise<FinalReport> {
    const { dir, repo, running } = this.lanesOf((await this.resolved(input, "report")).repo, "report");
    return reportOf(dir, repo, this.clock(), running ? running.project.deps.conn.forge.stats() : null);
  }

  /** A repository's lane directory (its ledger's too), and its running project if any. */
  private lanesOf(name: string | undefined, tool: string): { dir: string; repo: string; running: ReturnType<FleetHost["runningFor"]> } {
    const running = this.runningFor(name);
    const repo = running?.project.registration.repo ?? (name ? formatSlug(parseSlug(name)) : null);
    if (!repo) throw new UsageError(`${tool}: pass repo ("owner/name"): no project is running on this host`);
    const slug = parseSlug(repo);
    return { dir: laneDir(stateDir(this.options.env ?? process.env), slug.owner, slug.name), repo, running };
  }

  /**
   * Stops every running project (the server is shutting down). Their workers are ended: nobody would
   * watch them once this process is gone, and one left running would meet the next session's worker
   * in its worktree. Committed work stays on the branch and is continued by the next run.
   */
  async close(): Promise<void> {
    await Promise.all([...this.running.values()].map((p) => (p.isStopped() ? undefined : p.stop(true).catch(() => undefined))));
    for (const lanes of this.lanes.all()) lanes.close();
  }

  /** Every project this host runs (draining ones included), as status shows them. */
  registrations(): RegistrationRow[] {
    return [...this.running.values()].map(registrationRow).filter((row) => row !== null);
  }

  /** The registration TTL settings of a running project's config. */
  registrationConfig(repo: string): { ttlSeconds: number | null; idleDeregisterSeconds: number; envPassthrough: string[] } | null {
    const running = this.runningFor(repo);
    if (!running) return null;
    const { registration: c, worker } = running.project.registration.config;
    return { ttlSeconds: c.ttl_seconds, idleDeregisterSeconds: c.idle_deregister_seconds, envPassthrough: [...worker.env_passthrough] };
  }

  /** The process must exit now (a second signal during a drain): see leaving.ts. */
  abandon(): Promise<string> {
    return abandon(this.running.values(), this.lanes.all(), this.runtimes, this.landings);
  }

  /** The daemon is replaced (afk-mcp daemon restart): see leaving.ts. */
  handover(): Promise<string> {
    return handOver(this.running.values(), this.lanes.all(), this.landings);
  }

  private requireRunning(repo: string | undefined, tool: string): { project: RepoFleet; connected: RepoAccess } {
    const running = this.runningFor(repo);
    if (!running) throw new UsageError(`${tool}: no project is running for ${repo ?? "this repository"} on this host: start one with project_start`);
    return running;
  }

  /** Every token a project on this host ran with: none may reach a log. */
  secrets(): string[] {
    return this.lanes.secrets();
  }

  async takeover(given: TakeoverInput, as: CallerAccess = {}): Promise<TakeoverResult> {
    const input = await this.resolved(given, "takeover");
    // Listing reads refs only; taking claims writes them, so it needs the probed namespace.
    // A running project's repository is read and written with that project's access (its session's token).
    const running = this.runningFor(input.repo);
    const listing = input.list || input.instance === undefined;
    return takeoverOn(running ? running.connected : await this.access(input.repo, as, !listing), input, this.options.daemon === true);
  }
}

export type { RegistrationRow };
