// `POST /graphql`, as api.github.com/graphql answers it, for the merge queue's few operations:
// `repository { pullRequest { mergeQueueEntry, timelineItems } mergeQueue }` and the
// `enqueuePullRequest` / `dequeuePullRequest` mutations. Documents are validated against the
// checked-in subset of GitHub's schema (graphql-subset.ts) and answered through it, so a field
// GitHub does not have is refused here too. Errors come back as GitHub sends them: HTTP 200
// with `errors` (a `type` such as NOT_FOUND or UNPROCESSABLE, a `path`).
import type { ForgeEmulator } from "./core.js";
import { executeGraphQL, GraphQLFieldError, schemaOf, type Resolved } from "./graphql-exec.js";
import { GITHUB_GRAPHQL_SUBSET } from "./graphql-subset.js";
import { HttpError } from "./http-errors.js";
import { advanceQueues, enqueue, entryOf, entryState, queueEvents, queueOf, QueueRefusal, removeEntry } from "./merge-queue.js";
import { mergeQueueFor } from "./protection.js";
import { nodeId } from "./render.js";
import type { Reply, RequestContext, Router } from "./router.js";
import type { IssueRecord, QueueEntryRecord, QueueEventRecord } from "./state.js";

const SCHEMA = schemaOf(GITHUB_GRAPHQL_SUBSET);

function user(login: string): Resolved {
  return { __typename: "User", id: nodeId("U_", login), login };
}

function commit(oid: string | null): Resolved | null {
  return oid ? { id: nodeId("C_", oid), oid } : null;
}

function pullNodeId(issue: IssueRecord): string {
  return nodeId("PR_", issue.pull!.id);
}

function window<T>(items: T[], args: { first?: unknown; last?: unknown }): T[] {
  let out = items;
  if (typeof args.first === "number") out = out.slice(0, Math.max(0, args.first));
  if (typeof args.last === "number") out = out.slice(Math.max(0, out.length - args.last));
  return out;
}

class Resolvers {
  constructor(
    private readonly forge: ForgeEmulator,
    private readonly viewer: string,
  ) {}

  repository(): Resolved {
    const forge = this.forge;
    return {
      id: nodeId("R", 1000),
      nameWithOwner: forge.urls.fullName,
      pullRequest: ({ number }: { number: number }) => {
        const issue = forge.state.issue(number);
        if (!issue?.pull) throw new GraphQLFieldError("NOT_FOUND", `Could not resolve to a PullRequest with the number of ${number}.`);
        return this.pull(issue);
      },
      mergeQueue: ({ branch }: { branch?: string | null }) => this.queue(branch ?? forge.defaultBranch),
    };
  }

  queue(base: string): Resolved | null {
    const settings = mergeQueueFor(this.forge, base);
    if (!settings) return null;
    return {
      id: nodeId("MQ_", base),
      configuration: {
        checkResponseTimeout: settings.checkResponseTimeoutMinutes,
        maximumEntriesToBuild: settings.maxEntriesToBuild,
        maximumEntriesToMerge: settings.maxEntriesToMerge,
        mergeMethod: settings.mergeMethod,
        mergingStrategy: settings.groupingStrategy,
        minimumEntriesToMerge: settings.minEntriesToMerge,
        minimumEntriesToMergeWaitTime: settings.minEntriesToMergeWaitMinutes,
      },
      entries: (args: { first?: unknown; last?: unknown }) => {
        const all = queueOf(this.forge, base);
        return { totalCount: all.length, nodes: window(all, args).map((e) => this.entry(e)) };
      },
    };
  }

  entry(e: QueueEntryRecord): Resolved {
    const forge = this.forge;
    return {
      id: nodeId("MQE_", e.id),
      state: entryState(forge, e),
      position: queueOf(forge, e.base).indexOf(e) + 1,
      enqueuedAt: e.enqueuedAt,
      enqueuer: user(e.enqueuer),
      headCommit: commit(e.headOid),
      baseCommit: async () => commit(e.groupBase ?? (await forge.git.readRef(`refs/heads/${e.base}`))),
      pullRequest: () => this.pull(forge.state.issue(e.pr)!),
      jump: e.jump,
      solo: false,
    };
  }

  pull(issue: IssueRecord): Resolved {
    const forge = this.forge;
    const pull = issue.pull!;
    return {
      id: pullNodeId(issue),
      number: issue.number,
      state: pull.merged ? "MERGED" : issue.state === "open" ? "OPEN" : "CLOSED",
      merged: pull.merged,
      headRefName: pull.head,
      headRefOid: async () => (issue.state === "open" ? ((await forge.git.readRef(`refs/heads/${pull.head}`)) ?? pull.headSha) : pull.headSha),
      baseRefName: pull.base,
      isInMergeQueue: entryOf(forge, issue.number) !== undefined,
      mergeQueueEntry: () => {
        const e = entryOf(forge, issue.number);
        return e ? this.entry(e) : null;
      },
      timelineItems: (args: { itemTypes?: unknown; first?: unknown; last?: unknown }) => {
        const types = Array.isArray(args.itemTypes) ? new Set(args.itemTypes as string[]) : null;
        const wanted = (e: QueueEventRecord): boolean =>
          types === null || types.has(e.kind === "added" ? "ADDED_TO_MERGE_QUEUE_EVENT" : "REMOVED_FROM_MERGE_QUEUE_EVENT");
        // The forge records no other timeline events, so these are the whole timeline it knows.
        const events = queueEvents(forge, issue.number).filter(wanted);
        return { totalCount: events.length, nodes: window(events, args).map((e) => this.event(e, issue)) };
      },
    };
  }

  event(e: QueueEventRecord, issue: IssueRecord): Resolved {
    const common = { id: nodeId(e.kind === "added" ? "AMQE_" : "RMQE_", e.id), actor: user(e.actor), createdAt: e.at, enqueuer: user(e.actor) };
    if (e.kind === "added") return { __typename: "AddedToMergeQueueEvent", ...common, pullRequest: () => this.pull(issue) };
    return { __typename: "RemovedFromMergeQueueEvent", ...common, reason: e.reason, beforeCommit: commit(e.beforeCommit) };
  }

  /** The PR a node id names, or a NOT_FOUND error as GitHub words it. */
  byNodeId(id: unknown): IssueRecord {
    const issue = typeof id === "string" ? this.forge.state.issues().find((i) => i.pull && pullNodeId(i) === id) : undefined;
    if (!issue) throw new GraphQLFieldError("NOT_FOUND", `Could not resolve to a node with the global id of '${String(id)}'`);
    return issue;
  }

  mutation(): Resolved {
    const forge = this.forge;
    return {
      enqueuePullRequest: ({ input }: { input: Record<string, unknown> }) =>
        forge.writeLock.run(async () => {
          const issue = this.byNodeId(input.pullRequestId);
          try {
            const expected = typeof input.expectedHeadOid === "string" ? input.expectedHeadOid : null;
            const entry = await enqueue(forge, issue, this.viewer, expected, input.jump === true);
            await advanceQueues(forge);
            // The entry may already have merged (no required checks) or been removed.
            return { clientMutationId: input.clientMutationId ?? null, mergeQueueEntry: entryOf(forge, issue.number) === entry ? this.entry(entry) : null };
          } catch (error) {
            if (error instanceof QueueRefusal) throw new GraphQLFieldError("UNPROCESSABLE", error.message);
            throw error;
          }
        }),
      dequeuePullRequest: ({ input }: { input: Record<string, unknown> }) =>
        forge.writeLock.run(async () => {
          const issue = this.byNodeId(input.id);
          const entry = entryOf(forge, issue.number);
          if (!entry) throw new GraphQLFieldError("UNPROCESSABLE", "Pull request is not in the merge queue");
          const shown = this.entry(entry);
          await removeEntry(forge, entry, this.viewer, `Removed from the merge queue by ${this.viewer}`);
          await advanceQueues(forge);
          return { clientMutationId: input.clientMutationId ?? null, mergeQueueEntry: shown };
        }),
    };
  }
}

async function graphql(ctx: RequestContext): Promise<Reply> {
  if (!ctx.user) throw new HttpError(401, "This endpoint requires you to be authenticated.");
  const resolvers = new Resolvers(ctx.forge, ctx.user.login);
  const forge = ctx.forge;
  const query: Resolved = {
    repository: ({ owner, name }: { owner: string; name: string }) => {
      if (owner.toLowerCase() !== forge.urls.owner.toLowerCase() || name.toLowerCase() !== forge.urls.name.toLowerCase()) {
        throw new GraphQLFieldError("NOT_FOUND", `Could not resolve to a Repository with the name '${owner}/${name}'.`);
      }
      return resolvers.repository();
    },
  };
  const result = await executeGraphQL(SCHEMA, ctx.body, { query, mutation: resolvers.mutation() });
  return { status: 200, body: result };
}

export function registerGraphQLRoutes(router: Router): void {
  router.add("POST", "/graphql", graphql);
}
