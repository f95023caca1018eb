// Where a project's lanes live: `<stateDir>/lanes/<owner>/<name>/<lane>.jsonl`, rotated files
// beside it as `<lane>.1.jsonl` (newest) … `<lane>.<keep>.jsonl` (oldest).
import { join } from "node:path";
import { LANE_NAMES, type LaneName } from "../../schemas/lanes.js";

const SEGMENT = /^[A-Za-z0-9_.-]{1,100}$/;

/**
 * The lane directory of one project. Owner and name are lower-cased (GitHub treats them
 * case-insensitively, so "Acme/Widget" and "acme/widget" share one set of lanes) and must be
 * plain path segments: they come from user input and end up in a path.
 */
export function laneDir(stateDir: string, owner: string, name: string): string {
  for (const [what, value] of [
    ["owner", owner],
    ["name", name],
  ] as const) {
    if (!SEGMENT.test(value) || value === "." || value === "..") {
      throw new Error(`lanes: repository ${what} ${JSON.stringify(value)} is not a plain name: expected letters, digits, "-", "_" or "." (e.g. "acme/widget")`);
    }
  }
  return join(stateDir, "lanes", owner.toLowerCase(), name.toLowerCase());
}

/** The current file of a lane (index 0) or its `index`-th rotated file (1 = newest). */
export function laneFile(dir: string, lane: LaneName, index = 0): string {
  return join(dir, index === 0 ? `${lane}.jsonl` : `${lane}.${index}.jsonl`);
}

/** The rotation index of `fileName` if it is a file of `lane` (0 for the current file), else null. */
export function laneFileIndex(fileName: string, lane: LaneName): number | null {
  if (fileName === `${lane}.jsonl`) return 0;
  const prefix = `${lane}.`;
  if (!fileName.startsWith(prefix) || !fileName.endsWith(".jsonl")) return null;
  const middle = fileName.slice(prefix.length, -".jsonl".length);
  return /^[1-9][0-9]{0,5}$/.test(middle) ? Number(middle) : null;
}

export function isLaneName(value: unknown): value is LaneName {
  return typeof value === "string" && (LANE_NAMES as readonly string[]).includes(value);
}
