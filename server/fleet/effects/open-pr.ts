// open_pr: a worker's commits are its result: push the branch (fenced) and open the PR once.
import { ForgeError } from "../../gh/errors.js";
import { defineEffect } from "./effect.js";

export const openPr = defineEffect("open_pr", async (fleet, tick, action) => {
  const n = action.issue;
  const { forge } = fleet.deps.conn;
  const { registration } = fleet;
  await fleet.deps.lease.fence(n, action.sha);
  const pushed = await fleet.deps.workRepo.push(n, { expectedRemoteSha: fleet.memory.get(n)?.replaceable ?? null });
  const title = tick.issues.get(n)?.title ?? `Issue #${n}`;
  // This tick's snapshot listed the open PRs: the fleet's PR for the issue, if any, is on the
  // claim. Only when GitHub says one exists after all (opened since) is the list read again.
  const claim = tick.set.mine.find((m) => m.issue === n);
  let open = claim?.pr != null && claim.headRef === pushed.branch ? claim.pr : null;
  if (open === null) {
    const body = [`Closes #${n}`, "", `Opened by afk-mcp for #${n} (instance \`${registration.instance}\`).`, "", `Head: ${pushed.sha}`].join("\n");
    try {
      // The one request a result needs: the PR is the work, what the gate checks and what lands.
      const pr = await forge.createPull({ title, body, head: pushed.branch, base: registration.base });
      fleet.log("info", "pr_opened", `#${n}: opened PR #${pr.number}`, n, { pr: pr.number, head: pushed.sha });
      open = pr.number;
    } catch (error) {
      if (!(error instanceof ForgeError && error.kind === "validation" && /already exists/i.test(error.message))) throw error;
      open = (await forge.listOpenPulls()).find((p) => p.head.ref === pushed.branch && p.head.repoFullName?.toLowerCase() === registration.repo.toLowerCase())?.number ?? null;
      if (open === null) throw error;
    }
  }
  tick.events.pushed.push({ issue: n, pr: open, head: pushed.sha });
  fleet.memory.endRun(n);
  const memory = fleet.memory.get(n);
  if (memory) memory.replaceable = null;
  fleet.board.enter(n, "pr_open");
});
