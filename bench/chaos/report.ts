// The chaos run as a table for a terminal: one row per check, the figure, and whether it held.
// The same figures go out as one JSON line (main.ts) for scripts and the closing note.

// The result is built field by field in main.ts and read back here loosely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

function row(check: string, value: string, held: boolean | null): string {
  return `${held === null ? " " : held ? "✓" : "✗"} ${check.padEnd(46)} ${value}`;
}

const list = (xs: unknown[] | undefined) => (xs && xs.length > 0 ? `${xs.length}: ${JSON.stringify(xs).slice(0, 160)}` : "0");

export function render(r: Json): string[] {
  const lines = ["", `afk-mcp chaos (${r.mode}, seed ${r.seed}, ${r.seconds}s): ${r.ok ? "every invariant held" : "INVARIANTS VIOLATED"}`, ""];
  const refs = r.refs_left;
  lines.push(
    row("kills survived (same / fresh state dir)", `${r.kills.total} (${r.kills.same_state} / ${r.kills.fresh_state})`, null),
    row("backlog drained after the last restart", String(r.drained), r.drained),
    row("lost issues", list(r.lost), r.lost.length === 0),
    row("issues that ended wrong", list(r.wrong_ends), r.wrong_ends.length === 0),
    row("double merges", list(r.double_merged), r.double_merged.length === 0),
    row("second user's PRs merged", list(r.foreign_merged), r.foreign_merged.length === 0),
    row("base trees CI never passed", `${list(r.untested_base_trees)} of ${r.base_commits - r.peer_base_commits} landings`, r.untested_base_trees.length === 0),
    row("claim / lock / probe refs left", `${refs.claim} / ${refs.lock} / ${refs.probe}`, refs.claim + refs.lock + refs.probe === 0),
    row("heartbeat refs left", String(refs.heartbeat), null),
    row("orphan workers after the stop", String(r.orphan_workers), r.orphan_workers === 0),
    row("issues worked twice at once", list(r.worked_twice_at_once), r.worked_twice_at_once.length === 0),
    row("hostile issue text executed", String(r.hostile_executed), !r.hostile_executed),
    row(
      "restart → first useful action, median s",
      // A restart that did nothing visible before the next kill has no time: the medians leave it out, the row says how many.
      `${r.recovery_s.median ?? "-"} (same ${r.recovery_s.same_state_median ?? "-"}, fresh ${r.recovery_s.fresh_state_median ?? "-"}; ${r.recovery_s.samples.filter((x: Json) => x.seconds === null).length} of ${r.recovery_s.samples.length} restarts did nothing visible before the next kill)`,
      null,
    ),
    row(
      "killed workers' commits: checkpointed + continued",
      `${r.commits_continued.pushedAtKill} + ${r.commits_continued.continued} of ${r.commits_continued.pushedAtKill + r.commits_continued.total} (${r.commits_continued.lostWithMachine} lost with a later-killed machine) ${JSON.stringify(r.commits_continued.byKind)}`,
      null,
    ),
    row(
      "final stop (Ctrl-C, daemon SIGTERM) by itself",
      JSON.stringify(r.final_stop),
      r.final_stop.every((s: Json) => !s.forced && s.daemon !== "forced"),
    ),
    row("daemons a kill caught before they locked", String(r.kills.daemons_not_yet_locked), null),
    row("daemons still running after the run (killed)", list(r.daemons_left), r.daemons_left.length === 0),
  );
  const t = r.two_host;
  if (t) {
    lines.push(
      "",
      row(`two hosts, ${t.issues} issues: drained`, String(t.drained), t.drained),
      row("issues worked by both hosts", `${list(t.shared)} (per host: ${t.per_host.join(" / ")})`, t.shared.length === 0),
      row(
        "lost / double / untested base trees",
        `${t.lost.length} / ${t.double_merged.length} / ${t.untested_base_trees.length}`,
        t.lost.length + t.double_merged.length + t.untested_base_trees.length === 0,
      ),
      row("issues worked twice at once", list(t.worked_twice_at_once), t.worked_twice_at_once.length === 0),
    );
  }
  return [...lines, ""];
}
