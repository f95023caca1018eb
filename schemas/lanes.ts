// The shape of one lane record: a line of `<stateDir>/lanes/<owner>/<name>/<lane>.jsonl`, or of
// the machine's daemon lane. The writer (server/lanes) produces it and the `logs` tool returns it as-is.
import { z } from "zod";

/**
 * A project's lanes, in the order a reader usually wants them; `ledger` is the fleet's durable
 * record of decisions and facts (server/lanes/ledger.ts), compacted instead of rotated.
 */
export const PROJECT_LANES = ["supervisor", "worker", "monitor", "liveness", "ledger"] as const;
/** Those, and the machine's one `daemon` lane (its own lines, stdout and stderr), per state dir, not per project. */
export const LANE_NAMES = [...PROJECT_LANES, "daemon"] as const;
export const laneName = z
  .enum(LANE_NAMES)
  .describe("Which lane: supervisor, worker, monitor, liveness, ledger (a project's) or daemon (this machine's daemon).");
export type LaneName = z.infer<typeof laneName>;

/** Severity, least first; a level filter means "this level or worse". */
export const LANE_LEVELS = ["debug", "info", "warn", "error"] as const;
export const laneLevel = z.enum(LANE_LEVELS);
export type LaneLevel = z.infer<typeof laneLevel>;

/** A short snake_case name that a reader can filter on: `worker_spawned`, `claim_lost`. */
export const LANE_EVENT_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

export const laneRecord = z.object({
  ts: z.iso.datetime({ offset: true }).describe("When it happened, ISO 8601 with milliseconds."),
  lane: laneName,
  level: laneLevel,
  event: z.string().regex(LANE_EVENT_PATTERN, "an event is a snake_case name of at most 64 characters"),
  msg: z.string(),
  issue: z.number().int().positive().optional(),
  instance: z.string().optional(),
  attempt: z.number().int().nonnegative().optional(),
  /** A worker's tags (server/worker-port/port.ts, `WorkerHandle.tags`): a local process's pid, a workflow run's id. */
  pid: z.number().int().positive().optional(),
  run: z.number().int().positive().optional(),
  data: z.record(z.string(), z.unknown()).optional(),
  /** Set when the writer shortened `msg` or `data` to keep the line within its bound. */
  truncated: z.boolean().optional(),
});
export type LaneRecord = z.infer<typeof laneRecord>;

/** What a caller hands to `append`: the writer stamps `ts` and `lane`, `level` defaults to info. */
export type LaneEntry = Omit<LaneRecord, "ts" | "lane" | "level" | "truncated"> & { level?: LaneLevel };
