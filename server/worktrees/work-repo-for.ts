// A project's work repository, with the state directory's defaults for anything not given.
import type { GitAuth } from "../gh/git.js";
import { defaultWorkRepoDir, defaultWorktreeRoot } from "./work-repo.js";
import { WorkRepo } from "./worktrees.js";

/** The WorkRepo for a project, with the state directory's defaults for anything not given. */
export function workRepoFor(options: {
  stateDir: string;
  owner: string;
  name: string;
  remoteUrl: string;
  worktreeRoot?: string | null;
  branchPrefix?: string;
  auth?: GitAuth | null;
}): WorkRepo {
  return new WorkRepo({
    repoDir: defaultWorkRepoDir(options.stateDir, options.owner, options.name),
    worktreeRoot: options.worktreeRoot ?? defaultWorktreeRoot(options.stateDir, options.owner, options.name),
    remoteUrl: options.remoteUrl,
    ...(options.branchPrefix ? { branchPrefix: options.branchPrefix } : {}),
    ...(options.auth !== undefined ? { auth: options.auth } : {}),
  });
}
