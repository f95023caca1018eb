// The paging race for the fleet's open PRs: a PR merged or closed on a page already read, while a
// later page is read, moves an open PR across the page boundary unseen. A claim of ours whose PR
// the listing missed must not look like one with no PR (a stop would release it; a tick would
// start a worker on work already proposed): the one missing PR is read on its own. The real client
// against the local forge over HTTP, with its listing made to drop one PR as the race would.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { createGitHubForge, type GitHubForge } from "../server/gh/github-forge.js";
import { GitRefStore } from "../server/gh/gitrefs.js";
import { gatherSnapshot, type GatherOptions, GatherMemory } from "../server/gh/gather.js";
import { Lease } from "../server/gh/lease.js";
import { silentLogger } from "../server/gh/octokit.js";
import { formatClaimMessage } from "../server/state/snapshot.js";
import { releaseClaimsWithoutPr } from "../server/fleet/drain.js";
import { api, cloneRepo, openPull, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";

const ME = "me00001";
const NS = "refs/afk-paging";
const READ_ONE = "GET /repos/{owner}/{repo}/pulls/{pull_number}";
const LIST = "GET /repos/{owner}/{repo}/pulls";

let forge: TestForge;
let dir: string;

before(async () => {
  dir = await tempDir("afk-paging-");
  forge = await startTestForge({ dir: join(dir, "forge") });
});
after(() => forge?.dispose());

type Tally = { total: number; counted: number; not_modified: number };
const route = async (key: string): Promise<Tally> =>
  ((await api(forge, "GET", "/_forge/accounting")).body as { by_route: Record<string, Tally> }).by_route[key] ?? { total: 0, counted: 0, not_modified: 0 };
const reads = async (): Promise<number> => (await route(READ_ONE)).total;
const client = (): GitHubForge => createGitHubForge({ repo: forge.repo, token: forge.token, baseUrl: forge.apiUrl, fast: true, logger: silentLogger });
/** Each forge client's gather memory, as its connection keeps it. */
const memories = new WeakMap<GitHubForge, GatherMemory>();
const memoryOf = (gh: GitHubForge): GatherMemory => memories.get(gh) ?? memories.set(gh, new GatherMemory()).get(gh)!;
const options = (gh: GitHubForge, instance?: string): GatherOptions => ({
  memory: memoryOf(gh),
  login: "afk-bot",
  defaultBranch: "main",
  base: "main",
  namespace: NS,
  gateMode: "local",
  now: new Date(),
  ...(instance ? { instance } : {}),
});

/** An issue with the fleet's PR for it (its login, its branch); returns both numbers. */
async function issueWithPull(work: string, title: string): Promise<{ issue: number; pr: number }> {
  const issue = (await api(forge, "POST", repoPath(forge, "/issues"), { title })).body.number as number;
  const pr = await openPull(forge, work, `afk/${issue}-${title.replace(/\W+/g, "-")}`, { path: `${title}.txt`, body: `Closes #${issue}` });
  return { issue, pr: pr.number };
}

describe("gather: the fleet's PR a paged listing missed", () => {
  test("is read on its own for a claim of ours, once; a closed one stays out; nobody else's claim costs a read", async () => {
    const work = await cloneRepo(forge);
    const missed = await issueWithPull(work, "missed");
    const humanClosed = await issueWithPull(work, "closed-by-a-human");
    const retried = await issueWithPull(work, "closed-by-a-retry");
    const peers = await issueWithPull(work, "a-peer-s");
    const refs = new GitRefStore({ controlDir: join(dir, "control"), remoteUrl: forge.gitUrl, token: forge.token });
    const claimAs = (n: number, instance: string) => refs.create(`${NS}/claim/${n}`, formatClaimMessage({ instance, host: "box", at: new Date() }));
    for (const n of [missed.issue, humanClosed.issue, retried.issue]) assert.equal((await claimAs(n, ME)).won, true);
    assert.equal((await claimAs(peers.issue, "peer0001")).won, true);

    const gh = client();
    const first = await gatherSnapshot(gh, refs, options(gh, ME));
    assert.equal(first.pulls.length, 4, "the first listing has every PR (the memo of the fleet's PRs)");

    // A human closes one claimed issue's PR; a retry closes another (and says so); a peer's closes.
    for (const pr of [humanClosed.pr, retried.pr, peers.pr])
      assert.equal((await api(forge, "PATCH", repoPath(forge, `/pulls/${pr}`), { state: "closed" })).status, 200);
    memoryOf(gh).forgetFleetPull(retried.pr);
    // The race: the listing lacks the open PR of a claim of ours.
    const list = gh.listOpenPulls.bind(gh);
    gh.listOpenPulls = async () => (await list()).filter((p) => p.number !== missed.pr);

    const before = await reads();
    const snap = await gatherSnapshot(gh, refs, options(gh, ME));
    const numbers = snap.pulls.map((p) => p.number);
    assert.deepEqual(numbers, [missed.pr], "the missed open PR is in the snapshot; the closed ones are not");
    assert.equal(snap.pulls[0]!.head.ref, `afk/${missed.issue}-missed`);
    assert.equal((await reads()) - before, 2, "one read for the missed PR, one for the PR a human closed; none for the retry's or a peer's");

    // The next listing, the race over: nothing is read again (a PR that really closed is read once).
    gh.listOpenPulls = list;
    const again = await reads();
    assert.deepEqual(
      (await gatherSnapshot(gh, refs, options(gh, ME))).pulls.map((p) => p.number),
      [missed.pr],
    );
    assert.equal((await reads()) - again, 0, "a PR that really closed is read once, not on every tick");

    // A gather for no instance (the plan, status) reads nothing on its own.
    gh.listOpenPulls = async () => [];
    const plan = await reads();
    assert.deepEqual((await gatherSnapshot(gh, refs, options(gh))).pulls, []);
    assert.equal((await reads()) - plan, 0);
    gh.listOpenPulls = async () => (await list()).filter((p) => p.number !== missed.pr);

    // A stop: the claim whose PR the listing missed is kept, not released with its PR left open.
    const lease = new Lease(refs, { namespace: NS, ttlSeconds: 600, heartbeatSeconds: 60 }, ME, "box");
    const drained = await releaseClaimsWithoutPr({ refs, forge: gh, memory: memoryOf(gh), lease, namespace: NS, login: "afk-bot", branchPrefix: "afk/" });
    assert.deepEqual(drained.kept, [missed.issue], "kept: its PR is open");
    assert.deepEqual(
      drained.released,
      [humanClosed.issue, retried.issue].sort((a, b) => a - b),
      "released: their PRs are closed",
    );
    for (const entry of await refs.list(`${NS}/`)) await refs.remove(entry.ref, entry.sha);
  });

  test("a fresh process, which remembers no PR, lists again before it takes a claim of ours for one with no PR; the unchanged pages cost nothing", async () => {
    const work = await cloneRepo(forge);
    const hidden = await issueWithPull(work, "hidden-at-restart");
    const shown = await issueWithPull(work, "shown-at-restart");
    const refs = new GitRefStore({ controlDir: join(dir, "control-fresh"), remoteUrl: forge.gitUrl, token: forge.token });
    for (const n of [hidden.issue, shown.issue])
      assert.equal((await refs.create(`${NS}/claim/${n}`, formatClaimMessage({ instance: ME, host: "box", at: new Date() }))).won, true);

    // A restart's first gather: its first listing raced (the hidden PR moved across a page
    // boundary); the listing read again, with no merge under way, has it.
    const gh = client();
    const list = gh.listOpenPulls.bind(gh);
    let listings = 0;
    gh.listOpenPulls = async () => ((listings += 1) === 1 ? (await list()).filter((p) => p.number !== hidden.pr) : list());
    const before = await route(LIST);
    const snap = await gatherSnapshot(gh, refs, options(gh, ME));
    const claimed = new Set([hidden.pr, shown.pr]);
    assert.deepEqual(
      snap.pulls
        .map((p) => p.number)
        .filter((n) => claimed.has(n))
        .sort((a, b) => a - b),
      [hidden.pr, shown.pr],
      "the hidden PR is in the snapshot: its claim is carried by it",
    );
    assert.equal(listings, 2, "listed once more, for the claim that looked bare");
    const after = await route(LIST);
    assert.equal(after.total - before.total, 2, "each listing is one page here");
    assert.equal(after.counted - before.counted, 1, "the second listing's unchanged page answered 304: no rate limit spent");

    // From the next tick the memo checks: a listing that shows every claim's PR is read once.
    gh.listOpenPulls = async () => ((listings += 1), list());
    await gatherSnapshot(gh, refs, options(gh, ME));
    assert.equal(listings, 3);

    // A fresh process's stop keeps the claim whose PR its listing missed.
    const fresh = client();
    const freshList = fresh.listOpenPulls.bind(fresh);
    let calls = 0;
    fresh.listOpenPulls = async () => ((calls += 1) === 1 ? (await freshList()).filter((p) => p.number !== hidden.pr) : freshList());
    const lease = new Lease(refs, { namespace: NS, ttlSeconds: 600, heartbeatSeconds: 60 }, ME, "box");
    const drained = await releaseClaimsWithoutPr({ refs, forge: fresh, memory: memoryOf(fresh), lease, namespace: NS, login: "afk-bot", branchPrefix: "afk/" });
    assert.deepEqual(
      drained.kept.sort((a, b) => a - b),
      [hidden.issue, shown.issue],
      "kept: both PRs are open",
    );
    assert.deepEqual(drained.released, []);
    for (const entry of await refs.list(`${NS}/`)) await refs.remove(entry.ref, entry.sha);
  });
});
