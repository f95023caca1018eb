// close_epic: every sub-issue of an epic a selector picks is closed (`epics.close_when_done`):
// the epic is closed as completed, with one comment listing its sub-issues. No claim guards an
// epic, so the issue is read first: a peer that closed it already is not answered twice.
import { defineEffect } from "./effect.js";

/** The marker of the fleet's epic-closing comment (a fleet marker: briefs leave it out). */
export const EPIC_DONE_MARKER = "<!-- afk:epic-done -->";

export const closeEpic = defineEffect("close_epic", async (fleet, _tick, action) => {
  const n = action.issue;
  const { forge } = fleet.deps.conn;
  // One request, once per epic: a peer fleet (or a human) may have closed it since the listing.
  const issue = await forge.getIssue(n);
  if (issue.state !== "open") return;
  const list = action.children.map((c) => `#${c}`).join(", ");
  // One request: the closing note, written before the close so a reader of the closed epic sees why.
  await forge.createComment(
    n,
    `${EPIC_DONE_MARKER}\nAll ${action.children.length} sub-issue(s) of this epic are closed: ${list}. Closed by afk-mcp (\`epics.close_when_done\`).`,
  );
  // One request: the close itself.
  await forge.closeIssue(n, "completed");
  fleet.log("info", "epic_closed", `#${n}: epic closed, its ${action.children.length} sub-issue(s) all closed (${list})`, n, { children: action.children });
});
