import { it } from "node:test";
import { join } from "node:path";
import { writeFile } from "node:fs/promises";
import { startTestForge, tempDir, api, repoPath, git } from "./support/forge-fixtures.js";
import { GitRefStore } from "../server/gh/gitrefs.js";
import { createGitHubForge } from "../server/gh/github-forge.js";
import { Lease } from "../server/state/claims.js";
import { WorkRepo } from "../server/workers/worktrees.js";
import { landPull } from "../server/landing.js";
import { DEFAULT_CONFIG } from "../schemas/config.js";
it("timing", async () => {
  const forge = await startTestForge();
  const state = await tempDir();
  const refs = new GitRefStore({ controlDir: join(state, "c.git"), remoteUrl: forge.gitUrl, token: forge.token });
  const gh = createGitHubForge({ repo: forge.repo, token: forge.token, baseUrl: forge.apiUrl, fast: true });
  const lease = new Lease(refs, { namespace: "refs/afk", ttlSeconds: 4500, heartbeatSeconds: 60 }, "i1", "h1");
  const workRepo = new WorkRepo({ repoDir: join(state, "w.git"), worktreeRoot: join(state, "wt"), remoteUrl: forge.gitUrl, auth: { token: forge.token, url: forge.gitUrl } });
  for (let i = 0; i < 3; i++) {
    const issue = (await api(forge, "POST", repoPath(forge, "/issues"), { title: "x" })).body.number;
    const claim = await lease.claim(issue);
    const wt = await workRepo.prepare({ issue, title: "x", base: "main" });
    await writeFile(join(wt.path, `f${i}.txt`), "x\n"); await git(wt.path, "add", "."); await git(wt.path, "commit", "-qm", "x");
    const pushed = await workRepo.push(issue);
    const pr = await gh.createPull({ title: "x", body: `Closes #${issue}`, head: pushed.branch, base: "main" });
    await api(forge, "POST", repoPath(forge, "/check-runs"), { name: "ci", head_sha: pushed.sha, status: "completed", conclusion: "success" });
    const ctx = { forge: gh, login: "afk-bot", base: "main", config: structuredClone(DEFAULT_CONFIG), lease, refs, workRepo, auth: { token: forge.token, url: forge.gitUrl }, instance: "i1", host: "h1" };
    const t = Date.now();
    const r = await landPull(ctx as any, { issue, title: "x", claimSha: (claim as any).sha, pr: pr.number, head: pushed.sha });
    process.stderr.write(`TOTAL ${r.outcome} ${Date.now() - t}\n`);
  }
  await forge.dispose();
});
