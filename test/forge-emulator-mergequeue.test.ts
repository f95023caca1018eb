// GitHub's merge queue on the local forge: the `merge_queue` ruleset rule, the REST merge and
// pushes refused on such a branch, GraphQL (`POST /graphql`) answers checked against the
// checked-in subset of GitHub's schema, merge groups on gh-readonly-queue refs, a group that
// passes its required checks fast-forwarding the base (a merge_queue_merge activity), and a
// failing group removed with a reason.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ENQUEUE_MUTATION, QUEUE_STATUS_QUERY } from "../server/gh/merge-queue.js";
import { api, branchTip, forgeForFile, git, openPull, postCheck, repoPath, type TestForge } from "./support/forge-fixtures.js";
import { gql, graphqlProblems } from "./support/graphql-check.js";

let forge: TestForge;
let work: string;
const owner = (): string => forge.repo.split("/")[0]!;
const name = (): string => forge.repo.split("/")[1]!;

const QUEUE_RULE = {
  type: "merge_queue",
  parameters: {
    check_response_timeout_minutes: 60,
    grouping_strategy: "ALLGREEN",
    max_entries_to_build: 5,
    max_entries_to_merge: 5,
    merge_method: "MERGE",
    min_entries_to_merge: 1,
    min_entries_to_merge_wait_minutes: 5,
  },
};

const mainTip = (): Promise<string> => branchTip(forge);
const check = (sha: string, conclusion: "success" | "failure", checkName = "ci"): Promise<void> => postCheck(forge, sha, conclusion, checkName);

async function status(number: number) {
  const r = await gql(forge, QUEUE_STATUS_QUERY, { owner: owner(), name: name(), number });
  assert.equal(r.status, 200);
  assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
  return r.body.data.repository.pullRequest;
}

async function groupRefs(): Promise<Array<{ ref: string; sha: string }>> {
  const r = await api(forge, "GET", repoPath(forge, "/git/matching-refs/heads/gh-readonly-queue/"));
  return (r.body as Array<{ ref: string; object: { sha: string } }>).map((x) => ({ ref: x.ref, sha: x.object.sha }));
}

forgeForFile({ users: ["alice"] }, (f, w) => {
  [forge, work] = [f, w];
});

describe("the merge_queue rule", () => {
  it("refuses a rule without GitHub's required parameters, then serves it in the branch's rules", async () => {
    const bad = await api(forge, "POST", repoPath(forge, "/rulesets"), {
      name: "q-bad",
      enforcement: "active",
      target: "branch",
      conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
      rules: [{ type: "merge_queue", parameters: { merge_method: "MERGE" } }],
    });
    assert.equal(bad.status, 422);
    assert.match(bad.body.message, /Invalid rule 'merge_queue': check_response_timeout_minutes/);
    const ok = await api(forge, "POST", repoPath(forge, "/rulesets"), {
      name: "queue",
      enforcement: "active",
      target: "branch",
      conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
      rules: [
        QUEUE_RULE,
        { type: "required_status_checks", parameters: { strict_required_status_checks_policy: false, required_status_checks: [{ context: "ci" }] } },
      ],
    });
    assert.equal(ok.status, 201);
    const rules = (await api(forge, "GET", repoPath(forge, "/rules/branches/main"))).body as Array<{ type: string; parameters?: Record<string, unknown> }>;
    assert.deepEqual(rules.find((r) => r.type === "merge_queue")?.parameters, QUEUE_RULE.parameters);
  });

  it("refuses the REST merge and a plain push on a branch that requires a merge queue", async () => {
    const pr = await openPull(forge, work, "rest-refused");
    await check(pr.head, "success");
    const merge = await api(forge, "PUT", repoPath(forge, `/pulls/${pr.number}/merge`), { sha: pr.head, merge_method: "merge" });
    assert.equal(merge.status, 405);
    assert.equal(merge.body.message, "Changes must be made through the merge queue");
    const push = await git(work, "push", "origin", `${pr.head}:refs/heads/main`).catch((e: Error) => e);
    assert.ok(push instanceof Error, "the push to main was accepted");
    assert.match(push.message, /Changes must be made through the merge queue/);
    await api(forge, "PATCH", repoPath(forge, `/pulls/${pr.number}`), { state: "closed" });
  });
});

describe("GraphQL", () => {
  it("answers GitHub's shapes and refuses what GitHub's schema lacks", async () => {
    const pr = await openPull(forge, work, "gql-read");
    const read = await status(pr.number);
    assert.equal(read.state, "OPEN");
    assert.equal(read.headRefOid, pr.head);
    assert.equal(read.mergeQueueEntry, null);
    assert.deepEqual(read.timelineItems.nodes, []);
    const rest = (await api(forge, "GET", repoPath(forge, `/pulls/${pr.number}`))).body;
    assert.equal(read.id, rest.node_id, "the GraphQL id is the REST node_id");

    const queue = await gql(
      forge,
      `query($o: String!, $n: String!) { repository(owner: $o, name: $n) { mergeQueue(branch: "main") { configuration { mergeMethod mergingStrategy checkResponseTimeout maximumEntriesToBuild } entries(first: 10) { totalCount nodes { position } } } } }`,
      { o: owner(), n: name() },
    );
    assert.deepEqual(queue.body.data.repository.mergeQueue.configuration, {
      mergeMethod: "MERGE",
      mergingStrategy: "ALLGREEN",
      checkResponseTimeout: 60,
      maximumEntriesToBuild: 5,
    });

    const unknown = await gql(forge, `{ repository(owner: "${owner()}", name: "${name()}") { pullRequest(number: ${pr.number}) { autoMergeRequest } } }`);
    assert.equal(unknown.status, 200);
    assert.equal(unknown.body.data, undefined);
    assert.equal(unknown.body.errors[0].message, "Field 'autoMergeRequest' doesn't exist on type 'PullRequest'");
    assert.equal(unknown.body.errors[0].extensions.code, "undefinedField");
    assert.deepEqual(unknown.body.errors[0].path, ["query", "repository", "pullRequest", "autoMergeRequest"]);
    const badArgs = await gql(forge, `{ repository(owner: "${owner()}", name: "${name()}") { pullRequest(num: 1) { id } } }`);
    assert.deepEqual(
      badArgs.body.errors.map((e: { message: string; extensions: { code: string } }) => [e.extensions.code, e.message]),
      [
        ["argumentNotAccepted", "Field 'pullRequest' doesn't accept argument 'num'"],
        ["missingRequiredArguments", "Field 'pullRequest' is missing required arguments: number"],
      ],
    );
    const syntax = await api(forge, "POST", "/graphql", { query: `{ repository(owner: "a" name: "b") { id }` });
    assert.equal(syntax.status, 200);
    assert.match(syntax.body.errors[0].message, /Syntax Error/);
    assert.equal(syntax.body.data, undefined);
    const unset = await gql(forge, `query($n: Int!) { repository(owner: "${owner()}", name: "${name()}") { pullRequest(number: $n) { id } } }`);
    assert.match(unset.body.errors[0].message, /\$n/, "a required variable left out is refused, naming it");
    assert.equal(unset.body.data, undefined);

    const missing = await gql(forge, `{ repository(owner: "${owner()}", name: "${name()}") { pullRequest(number: 99999) { id } } }`);
    assert.equal(missing.body.errors[0].type, "NOT_FOUND");
    assert.deepEqual(missing.body.errors[0].path, ["repository", "pullRequest"]);
    assert.deepEqual(missing.body.data, { repository: { pullRequest: null } });

    assert.equal((await api(forge, "POST", "/graphql", { query: '{ repository(owner: "a", name: "b") { id } }' }, { token: null })).status, 401);
    // The checker itself catches a wrong answer.
    assert.deepEqual(graphqlProblems(`{ repository(owner: "a", name: "b") { id } }`, { repository: { id: "x", extra: 1 } }), [
      "data.repository.extra: not selected",
    ]);
    assert.deepEqual(
      graphqlProblems(`query($n: Int!) { repository(owner: "a", name: "b") { pullRequest(number: $n) { state } } }`, {
        repository: { pullRequest: { state: "DONE" } },
      }),
      ['data.repository.pullRequest.state: "DONE" is not a PullRequestState'],
    );
    await api(forge, "PATCH", repoPath(forge, `/pulls/${pr.number}`), { state: "closed" });
  });
});

describe("the queue", () => {
  it("builds a merge group for an enqueued PR and fast-forwards the base to it when its checks pass", async () => {
    const pr = await openPull(forge, work, "queued-green");
    const pending = await gql(forge, ENQUEUE_MUTATION, { id: (await status(pr.number)).id, head: pr.head });
    assert.equal(pending.body.errors[0].type, "UNPROCESSABLE", "a PR whose required checks have not passed is not enqueued");
    assert.match(pending.body.errors[0].message, /Required status check "ci" is expected/);

    await check(pr.head, "success");
    const base = await mainTip();
    const enq = await gql(forge, ENQUEUE_MUTATION, { id: (await status(pr.number)).id, head: pr.head });
    assert.equal(enq.body.errors, undefined, JSON.stringify(enq.body.errors));
    assert.deepEqual(enq.body.data.enqueuePullRequest.mergeQueueEntry, { state: "AWAITING_CHECKS", position: 1 });
    const groups = await groupRefs();
    assert.equal(groups.length, 1);
    assert.equal(groups[0]!.ref, `refs/heads/gh-readonly-queue/main/pr-${pr.number}-${base}`);
    const group = groups[0]!.sha;
    assert.equal((await git(forge.bareRepo, "rev-parse", `${group}^1`, `${group}^2`)).stdout, `${base}\n${pr.head}`);
    assert.equal(await mainTip(), base, "nothing merges before the group's checks pass");
    assert.deepEqual((await status(pr.number)).mergeQueueEntry, { state: "AWAITING_CHECKS", position: 1 });

    await check(group, "success");
    assert.equal(await mainTip(), group, "the base fast-forwarded to the tested group");
    const merged = await status(pr.number);
    assert.equal(merged.state, "MERGED");
    assert.equal(merged.mergeQueueEntry, null);
    assert.equal(merged.timelineItems.nodes[0].__typename, "AddedToMergeQueueEvent");
    const rest = (await api(forge, "GET", repoPath(forge, `/pulls/${pr.number}`))).body;
    assert.equal(rest.merged, true);
    assert.equal(rest.merge_commit_sha, group);
    assert.deepEqual(await groupRefs(), []);
    // GET /activity names the move a merge_queue_merge by the enqueuer.
    const moved = (await api(forge, "GET", repoPath(forge, "/activity?ref=main&per_page=1"))).body[0];
    assert.deepEqual([moved.activity_type, moved.before, moved.after, moved.actor.login], ["merge_queue_merge", base, group, "afk-bot"]);
  });

  it("removes a PR whose group fails a required check, with the reason on its timeline, and dequeues on request", async () => {
    const pr = await openPull(forge, work, "queued-red");
    await check(pr.head, "success");
    const base = await mainTip();
    const { id } = await status(pr.number);
    await gql(forge, ENQUEUE_MUTATION, { id, head: pr.head });
    const [group] = await groupRefs();
    await check(group!.sha, "failure");
    assert.equal(await mainTip(), base);
    const after = await status(pr.number);
    assert.equal(after.state, "OPEN");
    assert.equal(after.mergeQueueEntry, null);
    assert.equal(after.timelineItems.nodes[0].__typename, "RemovedFromMergeQueueEvent");
    assert.equal(after.timelineItems.nodes[0].reason, "The merge group failed required status checks: ci");
    assert.deepEqual(await groupRefs(), []);

    const again = await gql(forge, ENQUEUE_MUTATION, { id, head: pr.head });
    assert.equal(again.body.data.enqueuePullRequest.mergeQueueEntry.position, 1);
    const out = await gql(forge, `mutation($id: ID!) { dequeuePullRequest(input: { id: $id }) { mergeQueueEntry { position } } }`, { id });
    assert.equal(out.body.errors, undefined, JSON.stringify(out.body.errors));
    const dequeued = await status(pr.number);
    assert.equal(dequeued.mergeQueueEntry, null);
    assert.match(dequeued.timelineItems.nodes[0].reason, /Removed from the merge queue by/);
    assert.deepEqual(await groupRefs(), []);
  });

  it("refuses to enqueue a head other than the expected one", async () => {
    const pr = await openPull(forge, work, "queued-moved");
    await check(pr.head, "success");
    const r = await gql(forge, ENQUEUE_MUTATION, { id: (await status(pr.number)).id, head: "0".repeat(40) });
    assert.equal(r.body.errors[0].type, "UNPROCESSABLE");
    assert.match(r.body.errors[0].message, /does not match the pull request's head/);
  });
});
