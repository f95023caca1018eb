// Who pushed a PR head, judged before a landing, sync or train takes it (WorkerRuntime.vetHead).
//
// Every job token of a repository can push to every branch, so a run of another issue (its engine
// prompt-injected, say) may push onto the branch of an issue whose run has ended and whose PR
// waits for its checks or its landing. No run of that issue is in flight to notice (the branch
// guard, guard.ts, watches only a run's own branch while it runs), and the landing would gate
// the foreign commit and land it. So a head lands only if one of these holds:
// - this host's branch of the issue contains it: everything the issue's runs reported, taken
//   home at their end, and what the host pushed itself;
// - no push of the runner token brought a commit of it that this host's branch lacks (the
//   repository's activity, one conditional request): a user's push onto the PR (a fix by hand)
//   lands as before.
// Otherwise the branch is put back where it was before the runner's first such push, with a lease
// on the head (a branch moved again meanwhile is judged at the next turn), and the landing waits:
// the PR's old head lands on its own checks. The issue did nothing wrong, so no attempt is spent.
// Not judged here: an issue this host never held a branch of (another host's work), and a push
// older than the runner token's latest 100 onto that branch (the activity's one page).
import type { RefActivity } from "../../gh/actions-api.js";
import type { HeadToLand } from "../../worker-port/port.js";
import { RUNNER_LOGIN } from "./handle.js";
import type { ActionsReach } from "./reach.js";

const SHA = /^[0-9a-f]{40,64}$/;

export async function vetHeadPush(reach: ActionsReach, input: HeadToLand): Promise<string | null> {
  const { git } = reach;
  const { issue, pr, branch, head } = input;
  if (!SHA.test(head)) return null;
  const rev = async (ref: string): Promise<string> => (await git.runRaw(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`])).stdout.trim();
  const have = async (sha: string): Promise<boolean> => (await git.runRaw(["cat-file", "-e", `${sha}^{commit}`])).exitCode === 0;
  const contains = async (tip: string, sha: string): Promise<boolean> =>
    (await have(sha)) && (await git.runRaw(["merge-base", "--is-ancestor", sha, tip])).exitCode === 0;
  const local = await rev(`refs/heads/${branch}`);
  if (!local) return null;
  if (local === head || (await contains(local, head))) return null;

  const ref = `refs/heads/${branch}`;
  const pushes: RefActivity[] = (await reach.api.pushesBy(RUNNER_LOGIN, { ref })).filter((p) => p.ref === ref && SHA.test(p.after) && !/^0+$/.test(p.after));
  if (pushes.length === 0) return null;
  if (!(await have(head))) {
    await git.fetchRaw(["fetch", "--no-tags", "--quiet", "--no-write-fetch-head", "origin", `+${ref}:refs/afk-actions/vet/${issue}`]);
    if (!(await have(head))) await git.fetchRaw(["fetch", "--no-tags", "--quiet", "--no-write-fetch-head", "origin", head]);
    if (!(await have(head))) return `PR #${pr}'s head ${head.slice(0, 12)} could not be fetched to see who pushed it: it waits for the next turn`;
  }
  // Newest first: the runner's pushes whose commit the head holds and this host's branch lacks.
  const foreign: RefActivity[] = [];
  for (const p of pushes) {
    if ((await contains(head, p.after)) && !(await contains(local, p.after))) foreign.push(p);
  }
  const first = foreign.at(-1);
  if (!first) return null;
  const before = SHA.test(first.before) && !/^0+$/.test(first.before) ? first.before : local;
  const back = (await have(before)) ? before : local;
  const short = (s: string): string => s.slice(0, 12);
  const what = `a workflow run's job token pushed ${short(first.after)} onto ${branch}, PR #${pr}'s branch, after this issue's run had ended (another issue's run: every run can push to every branch)`;
  try {
    await git.network(["push", "--quiet", `--force-with-lease=${ref}:${head}`, "origin", `${back}:${ref}`]);
  } catch (error) {
    return `${what}; putting the branch back at ${short(back)} failed (${(error as Error).message.split("\n")[0]}): nothing lands until it is`;
  }
  return `${what}; the host put the branch back at ${short(back)}, where it was before that push: the foreign commit does not land, nothing of this issue's is lost, and no attempt is spent`;
}
