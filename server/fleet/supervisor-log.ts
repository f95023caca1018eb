// The fleet's voice in the supervisor lane, and the structured data an error leaves there.
import { ForgeError } from "../gh/errors.js";
import type { LaneWriter } from "../lanes/index.js";

export type SupervisorLog = (level: "debug" | "info" | "warn" | "error", event: string, msg: string, issue?: number, data?: Record<string, unknown>) => void;

export function supervisorLog(lanes: LaneWriter, instance: string): SupervisorLog {
  return (level, event, msg, issue, data) =>
    lanes.append("supervisor", {
      level,
      event,
      msg,
      instance,
      ...(issue !== undefined ? { issue } : {}),
      ...(data ? { data } : {}),
    });
}

export function errorData(error: unknown): Record<string, unknown> {
  if (error instanceof ForgeError) return { kind: error.kind, status: error.status, hint: error.hint };
  if (error instanceof Error) return { name: error.name };
  return {};
}

/** An error's message with the forge's recovery hint, for a lane line. */
export function errorText(error: unknown): string {
  return error instanceof ForgeError ? `${error.message} (${error.hint})` : error instanceof Error ? error.message : String(error);
}
