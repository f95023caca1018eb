// GitHub's "List repository activities" (`GET /repos/{owner}/{repo}/activity`): every ref
// update that landed, from a git push over smart HTTP, a write through the refs API, a PR merge
// or update-branch, or the merge queue, kept in the forge state (the newest 5,000), with who
// made it. A host learns from it which refs a run's token pushed. Types: a creation or deletion
// is `branch_creation` / `branch_deletion` (for any ref, as for branches), a merge is
// `pr_merge` / `merge_queue_merge`, a branch update that is not a fast-forward `force_push`,
// any other update `push` (a non-branch ref is never a `force_push`).
import { ZERO_SHA } from "./bare-git.js";
import type { ForgeEmulator } from "./core.js";
import { HttpError } from "./http-errors.js";
import { pageParams } from "./paginate.js";
import type { RefCommand } from "./pkt-line.js";
import { nodeId } from "./render.js";
import { STATE_ONLY, type Reply, type RequestContext, type Router } from "./router.js";
import { isoNow, type ActivityRecord, type ActivityType } from "./state.js";

export const ACTIVITY_CAP = 5_000;
const TYPES = new Set<string>(["push", "force_push", "branch_creation", "branch_deletion", "pr_merge", "merge_queue_merge"]);
const PERIOD_DAYS: Record<string, number> = { day: 1, week: 7, month: 30, quarter: 91, year: 365 };

/** Who moved a ref: a user record (a run token's bot included) or just a login. */
export interface Mover {
  login: string;
  id?: number;
}

async function classify(forge: ForgeEmulator, ref: string, before: string, after: string, merge?: ActivityType): Promise<ActivityType> {
  if (after === ZERO_SHA) return "branch_deletion";
  if (before === ZERO_SHA) return "branch_creation";
  if (merge) return merge;
  if (!ref.startsWith("refs/heads/")) return "push";
  try {
    return (await forge.isAncestor(before, after)) ? "push" : "force_push";
  } catch {
    // The old commit is gone (or never was a commit): not a fast-forward.
    return "force_push";
  }
}

/** Records one ref update that landed; `merge` names a merge's type. No-op updates are not recorded. */
export async function recordActivity(forge: ForgeEmulator, by: Mover | null, ref: string, before: string, after: string, merge?: ActivityType): Promise<void> {
  if (before === after) return;
  const type = await classify(forge, ref, before, after, merge);
  const list = (forge.state.data.activity ??= []);
  list.push({ id: forge.state.nextId(), ref, before, after, at: isoNow(), type, actor: by?.login ?? null, actorId: by?.id ?? null });
  if (list.length > ACTIVITY_CAP) list.splice(0, list.length - ACTIVITY_CAP);
  forge.state.changed();
}

/**
 * After a push: records the commands that landed, i.e. whose ref now holds the command's new
 * sha (or is gone, for a deletion). A command git refused leaves the ref at its old value.
 */
export async function recordPush(forge: ForgeEmulator, by: Mover | null, commands: readonly RefCommand[]): Promise<void> {
  if (commands.length === 0) return;
  const now = new Map((await forge.git.listRefs()).map((r) => [r.ref, r.sha]));
  for (const c of commands) {
    if ((now.get(c.ref) ?? ZERO_SHA) === c.new) await recordActivity(forge, by, c.ref, c.old, c.new);
  }
}

function render(forge: ForgeEmulator, a: ActivityRecord): Record<string, unknown> {
  const actor = a.actor === null ? null : { ...forge.render.user(a.actor), ...(a.actorId === null ? {} : { id: a.actorId, node_id: nodeId("U", a.actorId) }) };
  return { id: a.id, node_id: nodeId("RA", a.id), before: a.before, after: a.after, ref: a.ref, timestamp: a.at, activity_type: a.type, actor };
}

function invalid(name: string, value: string): HttpError {
  return new HttpError(422, `Invalid value for parameter '${name}': ${JSON.stringify(value)}`);
}

/** Cursors are opaque to clients, as GitHub's are: an activity id, wrapped. */
function cursor(id: number): string {
  return Buffer.from(`activity:${id}`).toString("base64url");
}

function fromCursor(name: string, value: string | null): number | null {
  if (value === null || value === "") return null;
  const m = /^activity:(\d+)$/.exec(Buffer.from(value, "base64url").toString("utf8"));
  if (!m) throw invalid(name, value);
  return Number(m[1]);
}

function selected(ctx: RequestContext): ActivityRecord[] {
  const q = ctx.query;
  const type = q.get("activity_type");
  if (type !== null && !TYPES.has(type)) throw invalid("activity_type", type);
  const period = q.get("time_period");
  if (period !== null && PERIOD_DAYS[period] === undefined) throw invalid("time_period", period);
  const rawRef = q.get("ref");
  const ref = rawRef === null || rawRef === "" ? null : rawRef.startsWith("refs/") ? rawRef : `refs/heads/${rawRef}`;
  const who = q.get("actor")?.toLowerCase() || null;
  const since = period === null ? null : isoOf(Date.now() - PERIOD_DAYS[period]! * 86_400_000);
  return (ctx.forge.state.data.activity ?? []).filter(
    (a) =>
      (type === null || a.type === type) &&
      (ref === null || a.ref === ref) &&
      (who === null || a.actor?.toLowerCase() === who) &&
      (since === null || a.at >= since),
  );
}

function isoOf(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function listActivity(ctx: RequestContext): Reply {
  const direction = ctx.query.get("direction") ?? "desc";
  if (direction !== "asc" && direction !== "desc") throw invalid("direction", direction);
  const { perPage } = pageParams(ctx);
  const after = fromCursor("after", ctx.query.get("after"));
  const before = fromCursor("before", ctx.query.get("before"));
  const all = selected(ctx);
  if (direction === "desc") all.reverse();
  // "Comes after id x in this listing": an older id when newest first, a newer one when oldest first.
  const follows = (a: number, x: number): boolean => (direction === "desc" ? a < x : a > x);
  const window = all.filter((a) => (after === null || follows(a.id, after)) && (before === null || follows(before, a.id)));
  // With `before` only, the page is the one just before the cursor; otherwise the first of the window.
  const items = before !== null && after === null ? window.slice(Math.max(0, window.length - perPage)) : window.slice(0, perPage);
  const links: string[] = [];
  const link = (name: "before" | "after", id: number, rel: string): void => {
    const q = new URLSearchParams(ctx.query);
    for (const k of ["before", "after", "page"]) q.delete(k);
    q.set(name, cursor(id));
    links.push(`<${ctx.requestBase}${ctx.rawPath}?${q.toString()}>; rel="${rel}"`);
  };
  const first = items[0];
  const last = items[items.length - 1];
  if (last && all.some((a) => follows(a.id, last.id))) link("after", last.id, "next");
  if (first && all.some((a) => follows(first.id, a.id))) link("before", first.id, "prev");
  return { status: 200, body: items.map((a) => render(ctx.forge, a)), headers: links.length > 0 ? { link: links.join(", ") } : {} };
}

export function registerActivityRoutes(router: Router): void {
  // Only forge state: ETags and 304s, so polling an unchanged listing costs no rate limit.
  router.add("GET", "/repos/{owner}/{repo}/activity", listActivity, STATE_ONLY);
}
