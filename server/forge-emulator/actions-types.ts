// The records of the forge's GitHub Actions subset: workflow ids, runs with their jobs and
// steps, and repository secrets. Persisted with the rest of the forge state (state.ts).

/** Who a run's token (GITHUB_TOKEN) acts as. */
export const BOT_LOGIN = "github-actions[bot]";

export type RunStatus = "queued" | "in_progress" | "completed";
export type RunConclusion = "success" | "failure" | "cancelled" | "skipped" | "timed_out";

export interface StepRecord {
  number: number;
  name: string;
  status: RunStatus;
  conclusion: RunConclusion | null;
  startedAt: string | null;
  completedAt: string | null;
}

export interface JobRecord {
  id: number;
  /** The job's key in the workflow's `jobs:` map. */
  key: string;
  name: string;
  status: RunStatus;
  conclusion: RunConclusion | null;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  steps: StepRecord[];
  /** The run attempt the job ran in (absent: 1). A re-run gives the jobs it runs again new ids. */
  runAttempt?: number;
}

export interface HeadCommit {
  tree: string;
  message: string;
  timestamp: string;
  author: { name: string; email: string };
  committer: { name: string; email: string };
}

export interface RunRecord {
  id: number;
  runNumber: number;
  workflowId: number;
  path: string;
  name: string;
  /** `run-name` evaluated, else the workflow's name. */
  displayTitle: string;
  event: string;
  /** The dispatched ref's branch (null for a tag or a sha). */
  headBranch: string | null;
  headSha: string;
  headCommit: HeadCommit;
  status: RunStatus;
  conclusion: RunConclusion | null;
  actor: string;
  inputs: Record<string, string | boolean | number>;
  concurrencyGroup: string | null;
  cancelInProgress: boolean;
  createdAt: string;
  updatedAt: string;
  startedAt: string | null;
  jobs: JobRecord[];
  /** Attempts so far (absent: 1): a re-run of failed jobs or of one job adds one. */
  runAttempt?: number;
  /** Jobs of earlier attempts that a re-run replaced (still readable by id, as on GitHub). */
  earlierJobs?: JobRecord[];
}

export interface ActionsData {
  /** Workflow file path -> its id (allocated when first seen). */
  workflows: Record<string, { id: number; createdAt: string }>;
  runs: RunRecord[];
  nextRunNumber: number;
  /** Repository secrets, name -> value (a local forge keeps them in its state file, unencrypted). */
  secrets: Record<string, string>;
}
