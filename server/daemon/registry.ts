// Registrations: what the daemon holds for each project (seed 001: a project contributes a
// registration, not a process). The sessions that started or adopted one renew it; once every
// renewal is overdue it lapses and drains exactly as project_stop does; a drained queue
// deregisters. Kept in a file beside the socket so a daemon restarted after a crash resumes them.
import type { DaemonLogLine } from "./log.js";
import { readFile } from "node:fs/promises";
import type { ProjectResizeInput, ProjectResult, ProjectStartInput, ProjectStopInput, StepListener } from "../host/api.js";
import type { FleetHost, RegistrationRow } from "../host/host.js";
import { repoKey } from "../gh/slug.js";
import { retainedEnv } from "./session-env.js";
import { Serial } from "../kit/serial.js";
import { setTimeout as sleep } from "node:timers/promises";
import { writeAtomic } from "../kit/atomic-file.js";

/** How often a session renews when it holds no registration with a TTL. */
const DEFAULT_RENEW_MS = 60_000;

interface Entry {
  repo: string;
  /** What project_start was called with (the repo resolved): replayed after a restart. */
  spec: ProjectStartInput;
  /** Session → renewal deadline (epoch ms). */
  sessions: Map<string, number>;
  ttlMs: number | null;
  idleDeregisterMs: number;
  idleSince: number | null;
  draining: boolean;
  /** The registering session's variables the project acts with (session-env.ts); null: the daemon's own. */
  env: Record<string, string> | null;
}

interface StoredEntry {
  repo: string;
  spec: ProjectStartInput;
  sessions: Record<string, number>;
  ttl_ms: number | null;
  draining: boolean;
  env?: Record<string, string> | null;
}

export interface RegistryOptions {
  file: string;
  clock?: () => number;
  log: DaemonLogLine;
}

const key = repoKey;

export class Registry {
  private readonly entries = new Map<string, Entry>();
  private readonly clock: () => number;
  private readonly writes = new Serial();
  /** Starts and restores one at a time: a session's start waits for the restore, then adopts. */
  private readonly starts = new Serial();
  /** Entries read from the file that could not be started again yet (the forge was down). */
  private unrestored: StoredEntry[] = [];
  /** The restore of what a previous daemon held, once it has run. */
  private restored: Promise<void> = Promise.resolve();

  constructor(
    private readonly host: FleetHost,
    private readonly options: RegistryOptions,
  ) {
    this.clock = options.clock ?? Date.now;
  }

  start(input: ProjectStartInput, session: string | undefined, onStep?: StepListener, env?: Record<string, string>): Promise<ProjectResult> {
    return this.starts.run(() => this.startNow(input, session, onStep, env));
  }

  private async startNow(input: ProjectStartInput, session: string | undefined, onStep?: StepListener, env?: Record<string, string>): Promise<ProjectResult> {
    const existing = input.repo ? this.entries.get(key(input.repo)) : undefined;
    // (A draining one refuses below, in the host: its workers have yet to exit.)
    if (existing && !existing.draining && !input.dry_run) {
      // A second session adopts it: it is answered with the registration and renews it too.
      if (session) existing.sessions.set(session, this.deadline(existing.ttlMs));
      await this.persist();
      const status = await this.host.status({ repo: existing.repo, scope: "worker" });
      return {
        registration: status.registration,
        plan: null,
        message: `${existing.repo} is already registered on this machine's daemon: this session now renews it too (project_resize changes it; the new start's other arguments were not applied, and it keeps acting with the token and environment of the session that registered it: project_stop, then project_start, to change them)`,
      };
    }
    const result = await this.host.start(input, onStep, env ? { env } : {});
    if (!result.registration) return result;
    const repo = result.registration.repo;
    const settings = this.host.registrationConfig(repo);
    // Only what the project needs is kept (never the session's other secrets).
    const kept = env ? retainedEnv(env, settings?.envPassthrough ?? []) : null;
    const ttlMs = settings?.ttlSeconds === null || settings === null ? null : settings.ttlSeconds * 1000;
    const entry: Entry = {
      repo,
      spec: { ...input, repo, dry_run: false },
      sessions: new Map(),
      ttlMs,
      idleDeregisterMs: (settings?.idleDeregisterSeconds ?? 1_800) * 1000,
      idleSince: null,
      draining: false,
      env: kept,
    };
    if (session) entry.sessions.set(session, this.deadline(ttlMs));
    this.entries.set(key(repo), entry);
    await this.persist();
    const lapse =
      ttlMs === null ? "it never lapses (registration.ttl_seconds: null)" : `it lapses and drains ${ttlMs / 1000}s after the last renewal by a session`;
    return { ...result, message: `${result.message}; registered with this machine's daemon: ${lapse}` };
  }

  async resize(input: ProjectResizeInput, session: string | undefined): Promise<ProjectResult> {
    const result = await this.host.resize(input);
    const entry = result.registration ? this.entries.get(key(result.registration.repo)) : undefined;
    if (entry) {
      if (input.target !== undefined) entry.spec.target = input.target;
      if (input.worker_command !== undefined) {
        // A new command replaces the engine's: a restart must not find both.
        entry.spec.worker_command = input.worker_command;
        delete entry.spec.engine;
        delete entry.spec.model;
      }
      if (input.selectors !== undefined) entry.spec.selectors = input.selectors;
      if (session) entry.sessions.set(session, this.deadline(entry.ttlMs));
      await this.persist();
    }
    return result;
  }

  async stop(input: ProjectStopInput, onStep?: StepListener): Promise<ProjectResult> {
    const result = await this.host.stop(input, onStep);
    const repo = result.registration?.repo ?? input.repo;
    if (repo) {
      const k = key(repo);
      // Still draining (workers finishing): kept, marked, so a daemon restarted meanwhile
      // resumes the drain and adopts those workers; the sweep forgets it once it has ended.
      const draining = this.host.registrations().some((r) => key(r.repo) === k);
      const entry = this.entries.get(k);
      if (draining && entry) entry.draining = true;
      else this.entries.delete(k);
    }
    await this.persist();
    return result;
  }

  /** Extends every registration the session renews; says when to renew next. */
  async renew(session: string): Promise<{ registrations: number; renew_ms: number }> {
    // After a restart, not before the registrations are back: a session told "none" stops renewing.
    await this.restored;
    let count = 0;
    let ttlMin: number | null = null;
    for (const entry of this.entries.values()) {
      if (!entry.sessions.has(session) || entry.draining) continue;
      entry.sessions.set(session, this.deadline(entry.ttlMs));
      count += 1;
      if (entry.ttlMs !== null) ttlMin = ttlMin === null ? entry.ttlMs : Math.min(ttlMin, entry.ttlMs);
    }
    if (count > 0) await this.persist();
    return { registrations: count, renew_ms: ttlMin === null ? DEFAULT_RENEW_MS : Math.max(250, Math.floor(ttlMin / 2)) };
  }

  /** How many registrations it holds, counting those it could not resume yet (the daemon is not idle while any). */
  held(): number {
    return this.entries.size + this.unrestored.length;
  }

  /**
   * Rows for status: the host's view of each project, with who renews it and until when. Of the
   * sessions that renewed it, those `live` says are connected now are named; the rest (exited, or
   * not yet back after a daemon restart) are only counted: their last renewal holds until it lapses.
   */
  rows(live: (session: string) => boolean = () => true): RegistrationRow[] {
    return this.host.registrations().map((row) => {
      const entry = this.entries.get(key(row.repo));
      if (!entry) return row;
      const deadlines = [...entry.sessions.values()];
      const renewing = [...entry.sessions.keys()];
      return {
        ...row,
        sessions: renewing.filter(live),
        sessions_gone: renewing.filter((s) => !live(s)).length,
        ttl_seconds: entry.ttlMs === null ? null : Math.round(entry.ttlMs / 1000),
        renew_by: entry.ttlMs === null ? null : new Date(deadlines.length ? Math.max(...deadlines) : this.clock()).toISOString(),
      };
    });
  }

  /** One pass over the registrations: lapse the unrenewed, deregister the drained, forget the ended. */
  async sweep(): Promise<void> {
    const now = this.clock();
    if (this.unrestored.length > 0) await this.restoreEntries(this.unrestored.splice(0));
    const live = new Map(this.host.registrations().map((r) => [key(r.repo), r]));
    let changed = false;
    for (const [k, entry] of [...this.entries]) {
      const row = live.get(k);
      if (!row) {
        // Its project ended (a drain finished, a stop from elsewhere).
        this.entries.delete(k);
        changed = true;
        continue;
      }
      if (entry.draining) continue;
      for (const [session, deadline] of [...entry.sessions]) if (deadline <= now && entry.ttlMs !== null) entry.sessions.delete(session);
      if (entry.ttlMs !== null && entry.sessions.size === 0) {
        const lapse = `registration lapsed (no session renewed it within ${entry.ttlMs / 1000}s): draining as project_stop does`;
        this.options.log(`${entry.repo}: ${lapse}`);
        this.host.note(entry.repo, "warn", "registration_lapsed", lapse);
        await this.drain(entry, "lapsed");
        changed = true;
        continue;
      }
      entry.idleSince = row.idle ? (entry.idleSince ?? now) : null;
      if (entry.idleSince !== null && now - entry.idleSince >= entry.idleDeregisterMs) {
        const idle = `queue drained (nothing ready, nothing in flight) for ${Math.round((now - entry.idleSince) / 1000)}s: deregistering`;
        this.options.log(`${entry.repo}: ${idle}`);
        this.host.note(entry.repo, "info", "registration_idle", idle);
        await this.drain(entry, "drained");
        changed = true;
      }
    }
    if (changed) await this.persist();
  }

  private async drain(entry: Entry, why: string): Promise<void> {
    entry.draining = true;
    try {
      const result = await this.host.stop({ repo: entry.repo });
      this.options.log(`${entry.repo}: ${why}: ${result.message}`);
    } catch (error) {
      entry.draining = false;
      this.options.log(`${entry.repo}: ${why}, but the drain failed (retried next sweep): ${(error as Error).message}`, "warn");
    }
  }

  /** Drains every registration (the daemon is stopping); resolves once no project is left. */
  async drainAll(killWorkers: boolean, onWait?: (workers: number) => void): Promise<void> {
    for (const entry of this.entries.values()) entry.draining = true;
    await this.persist();
    await Promise.all(this.host.registrations().map((r) => this.host.stop({ repo: r.repo, stop_workers: killWorkers }).catch(() => undefined)));
    for (;;) {
      const left = this.host.registrations();
      if (left.length === 0) break;
      onWait?.(left.reduce((n, r) => n + r.workers, 0));
      await sleep(250);
    }
    this.entries.clear();
    await this.persist();
  }

  /** Writes the registrations as they stand (a hand-over: the next daemon resumes them). */
  flush(): Promise<void> {
    return this.persist();
  }

  /** Starts again what a previous daemon held: a lapsed or draining one only to drain it. */
  restore(): Promise<void> {
    const run = this.starts.run(async () => {
      let stored: StoredEntry[] = [];
      try {
        stored = JSON.parse(await readFile(this.options.file, "utf8")) as StoredEntry[];
        if (!Array.isArray(stored)) stored = [];
      } catch {
        return;
      }
      await this.restoreEntriesNow(stored);
    });
    this.restored = run.catch(() => undefined);
    return run;
  }

  private restoreEntries(stored: StoredEntry[]): Promise<void> {
    return this.starts.run(() => this.restoreEntriesNow(stored));
  }

  private async restoreEntriesNow(stored: StoredEntry[]): Promise<void> {
    const now = this.clock();
    for (const item of stored) {
      try {
        await this.host.start({ ...item.spec, dry_run: false }, undefined, item.env ? { env: item.env } : {});
      } catch (error) {
        const message = (error as Error).message;
        if (/already running|still stopping/.test(message)) continue;
        this.options.log(`${item.repo}: could not resume the registration (retried next sweep): ${message}`, "warn");
        this.unrestored.push(item);
        continue;
      }
      const sessions = new Map(Object.entries(item.sessions ?? {}).filter(([, d]) => item.ttl_ms === null || d > now));
      const settings = this.host.registrationConfig(item.repo);
      const entry: Entry = {
        repo: item.repo,
        spec: item.spec,
        sessions,
        ttlMs: item.ttl_ms,
        idleDeregisterMs: (settings?.idleDeregisterSeconds ?? 1_800) * 1000,
        idleSince: null,
        draining: false,
        env: item.env ?? null,
      };
      this.entries.set(key(item.repo), entry);
      const lapsed = item.ttl_ms !== null && sessions.size === 0;
      this.options.log(`${item.repo}: registration resumed after a restart${item.draining || lapsed ? "; it was draining or lapsed: draining" : ""}`);
      if (lapsed && !item.draining)
        this.host.note(
          item.repo,
          "warn",
          "registration_lapsed",
          "registration lapsed while the daemon was down (no session renewed it): draining as project_stop does",
        );
      if (item.draining || lapsed) await this.drain(entry, item.draining ? "resumed mid-drain" : "lapsed while the daemon was down");
    }
    await this.persist();
  }

  private deadline(ttlMs: number | null): number {
    return ttlMs === null ? Number.MAX_SAFE_INTEGER : this.clock() + ttlMs;
  }

  private persist(): Promise<void> {
    const stored: StoredEntry[] = [...this.entries.values()].map((e) => ({
      repo: e.repo,
      spec: e.spec,
      sessions: Object.fromEntries(e.sessions),
      ttl_ms: e.ttlMs,
      draining: e.draining,
      env: e.env,
    }));
    const file = this.options.file;
    // Writes are chained so an older state never lands after a newer one. The file holds each
    // registration's token: owner-only, made so before anything is written into it.
    return this.writes
      .run(() => writeAtomic(file, JSON.stringify(stored, null, 1) + "\n"))
      .catch((error: unknown) => this.options.log(`could not write ${file}: ${(error as Error).message}`, "warn"));
  }
}
