// open_pr: a worker's commits are its result: push the branch (fenced) and open the PR once.
import { defineEffect } from "./effect.js";

export const openPr = defineEffect("open_pr", async (fleet, tick, action) => {
  const n = action.issue;
  const { forge } = fleet.deps.conn;
  const { registration } = fleet;
  await fleet.deps.lease.fence(n, action.sha);
  const pushed = await fleet.deps.workRepo.push(n, { expectedRemoteSha: fleet.memory.get(n)?.replaceable ?? null });
  const title = tick.issues.get(n)?.title ?? `Issue #${n}`;
  const open = (await forge.listOpenPulls()).find((p) => p.head.ref === pushed.branch && p.head.repoFullName?.toLowerCase() === registration.repo.toLowerCase());
  if (!open) {
    const body = [`Closes #${n}`, "", `Opened by afk-mcp for #${n} (instance \`${registration.instance}\`).`, "", `Head: ${pushed.sha}`].join("\n");
    const pr = await forge.createPull({ title, body, head: pushed.branch, base: registration.base });
    fleet.log("info", "pr_opened", `#${n}: opened PR #${pr.number}`, n, { pr: pr.number, head: pushed.sha });
    tick.events.pushed.push({ issue: n, pr: pr.number, head: pushed.sha });
  } else {
    tick.events.pushed.push({ issue: n, pr: open.number, head: pushed.sha });
  }
  fleet.memory.endRun(n);
  const memory = fleet.memory.get(n);
  if (memory) memory.replaceable = null;
  fleet.board.enter(n, "pr_open");
});
