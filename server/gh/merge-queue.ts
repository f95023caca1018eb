// GitHub's merge queue through GraphQL (REST has no enqueue): reading a PR's queue entry and its
// latest queue event, and enqueueing it. Requests go through the same Octokit client as REST
// (`octokit.graphql`: same token, throttling and retries). A GraphQL answer with `errors` comes
// back as a ForgeError naming GitHub's message.
import { ForgeError } from "./errors.js";
import type { GitHubClient } from "./octokit.js";
import type { QueueStatus, RepoSlug } from "./forge.js";

/** The PR, its queue entry, and its latest added/removed queue event. */
export const QUEUE_STATUS_QUERY = `query afkQueueStatus($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      id
      state
      headRefOid
      mergeQueueEntry { state position }
      timelineItems(last: 1, itemTypes: [ADDED_TO_MERGE_QUEUE_EVENT, REMOVED_FROM_MERGE_QUEUE_EVENT]) {
        nodes {
          __typename
          ... on AddedToMergeQueueEvent { createdAt }
          ... on RemovedFromMergeQueueEvent { createdAt reason }
        }
      }
    }
  }
}`;

export const ENQUEUE_MUTATION = `mutation afkEnqueue($id: ID!, $head: GitObjectID!) {
  enqueuePullRequest(input: { pullRequestId: $id, expectedHeadOid: $head }) {
    mergeQueueEntry { state position }
  }
}`;

interface RawEntry {
  state: string;
  position: number;
}

interface RawStatus {
  repository: {
    pullRequest: {
      id: string;
      state: "OPEN" | "CLOSED" | "MERGED";
      headRefOid: string;
      mergeQueueEntry: RawEntry | null;
      timelineItems: { nodes: Array<{ __typename: string; createdAt?: string; reason?: string | null } | null> };
    };
  };
}

async function graphql<T>(client: GitHubClient, query: string, variables: Record<string, unknown>, what: string): Promise<T> {
  try {
    return await client.octokit.graphql<T>(query, variables);
  } catch (error) {
    const errors = (error as { errors?: Array<{ type?: string; message?: string }> }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const first = errors[0]!;
      const kind = first.type === "NOT_FOUND" ? "not_found" : first.type === "FORBIDDEN" ? "forbidden" : "validation";
      throw new ForgeError(
        kind,
        `${what}: ${errors.map((e) => e.message ?? "").join("; ")}`,
        200,
        "read the pull request and the branch's merge queue again before retrying",
      );
    }
    throw client.toError(error, what);
  }
}

export async function queueStatus(client: GitHubClient, repo: RepoSlug, number: number): Promise<QueueStatus & { nodeId: string }> {
  const raw = await graphql<RawStatus>(
    client,
    QUEUE_STATUS_QUERY,
    { owner: repo.owner, name: repo.name, number },
    `read the merge queue entry of pull request #${number}`,
  );
  const pr = raw.repository.pullRequest;
  const last = pr.timelineItems.nodes.filter((n) => n !== null).at(-1) ?? null;
  return {
    nodeId: pr.id,
    state: pr.state,
    head: pr.headRefOid,
    entry: pr.mergeQueueEntry ? { state: pr.mergeQueueEntry.state, position: pr.mergeQueueEntry.position } : null,
    lastEvent:
      last === null
        ? null
        : last.__typename === "RemovedFromMergeQueueEvent"
          ? { kind: "removed", at: last.createdAt ?? "", reason: last.reason ?? null }
          : { kind: "added", at: last.createdAt ?? "", reason: null },
  };
}

export async function enqueue(client: GitHubClient, nodeId: string, number: number, head: string): Promise<QueueStatus["entry"]> {
  const raw = await graphql<{ enqueuePullRequest: { mergeQueueEntry: RawEntry | null } | null }>(
    client,
    ENQUEUE_MUTATION,
    { id: nodeId, head },
    `add pull request #${number} to the merge queue`,
  );
  const e = raw.enqueuePullRequest?.mergeQueueEntry ?? null;
  return e ? { state: e.state, position: e.position } : null;
}
