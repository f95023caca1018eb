// The response validator built on GitHub's OpenAPI description (test/support/openapi.ts):
// it must accept what GitHub sends, reject what GitHub would never send, map concrete paths
// to the right operation, and the committed subset must still cover every operation the
// forge serves.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createResponseValidator, LISTED_OPERATIONS, loadGithubSubset } from "./support/openapi.js";
import { conformanceRecorder } from "./support/conformance.js";

const API = "https://api.github.com";

function user(login: string, id: number): Record<string, unknown> {
  return {
    login,
    id,
    node_id: `MDQ6VXNlcj${id}`,
    avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
    gravatar_id: "",
    url: `${API}/users/${login}`,
    html_url: `https://github.com/${login}`,
    followers_url: `${API}/users/${login}/followers`,
    following_url: `${API}/users/${login}/following{/other_user}`,
    gists_url: `${API}/users/${login}/gists{/gist_id}`,
    starred_url: `${API}/users/${login}/starred{/owner}{/repo}`,
    subscriptions_url: `${API}/users/${login}/subscriptions`,
    organizations_url: `${API}/users/${login}/orgs`,
    repos_url: `${API}/users/${login}/repos`,
    events_url: `${API}/users/${login}/events{/privacy}`,
    received_events_url: `${API}/users/${login}/received_events`,
    type: "User",
    user_view_type: "public",
    site_admin: false,
  };
}

/** An issue as GitHub's REST API returns it (GET /repos/{owner}/{repo}/issues/{n}), late 2026. */
function realisticIssue(): Record<string, unknown> {
  const repoUrl = `${API}/repos/octo/fleet`;
  return {
    url: `${repoUrl}/issues/42`,
    repository_url: repoUrl,
    labels_url: `${repoUrl}/issues/42/labels{/name}`,
    comments_url: `${repoUrl}/issues/42/comments`,
    events_url: `${repoUrl}/issues/42/events`,
    html_url: "https://github.com/octo/fleet/issues/42",
    id: 3412345678,
    node_id: "I_kwDOABCDEF7Kx1aA",
    number: 42,
    title: "Claims survive a forge restart",
    user: user("octocat", 583231),
    labels: [
      {
        id: 8123456789,
        node_id: "LA_kwDOABCDEF8AAAAB5Z",
        url: `${repoUrl}/labels/afk:ready`,
        name: "afk:ready",
        color: "0e8a16",
        default: false,
        description: null,
      },
    ],
    state: "open",
    locked: false,
    assignee: null,
    assignees: [],
    milestone: null,
    comments: 2,
    created_at: "2026-11-02T09:14:03Z",
    updated_at: "2026-11-03T17:40:51Z",
    closed_at: null,
    author_association: "OWNER",
    type: null,
    active_lock_reason: null,
    sub_issues_summary: { total: 0, completed: 0, percent_completed: 0 },
    issue_dependencies_summary: { blocked_by: 1, total_blocked_by: 1, blocking: 0, total_blocking: 0 },
    body: "Steps:\r\n1. claim\r\n2. restart",
    closed_by: null,
    reactions: {
      url: `${repoUrl}/issues/42/reactions`,
      total_count: 0,
      "+1": 0,
      "-1": 0,
      laugh: 0,
      hooray: 0,
      confused: 0,
      heart: 0,
      rocket: 0,
      eyes: 0,
    },
    timeline_url: `${repoUrl}/issues/42/timeline`,
    performed_via_github_app: null,
    state_reason: null,
    parent_issue_url: null,
  };
}

const ISSUE_OP = "GET /repos/{owner}/{repo}/issues/{issue_number}";

test("the committed subset describes every operation the forge serves", () => {
  const subset = loadGithubSubset();
  const validator = createResponseValidator();
  const inSubset = new Set(validator.operations());
  const missing = LISTED_OPERATIONS.filter((op) => !inSubset.has(op));
  assert.deepEqual(missing, [], `missing from test/openapi/github-subset.json: run npm run gen:openapi`);
  assert.equal(inSubset.size, LISTED_OPERATIONS.length, "the subset holds operations that are not listed");
  assert.match(subset["x-afk-source"].package, /^@octokit\/openapi@\d+\.\d+\.\d+$/);
  assert.match(subset["x-afk-source"].generated, /^\d{4}-\d{2}-\d{2}$/);
  // Every listed operation documents its success response.
  for (const op of LISTED_OPERATIONS) {
    const [method, template] = op.split(" ") as [string, string];
    const statuses = Object.keys(subset.paths[template]?.[method.toLowerCase()]?.responses ?? {});
    assert.ok(
      statuses.some((s) => s.startsWith("2")),
      `${op} has no 2xx response`,
    );
  }
  // The nullable rewrite left nothing ajv cannot read.
  const text = JSON.stringify({ paths: subset.paths, components: subset.components });
  const at = text.indexOf('"nullable":');
  assert.equal(at, -1, `"nullable" left in the subset: ...${text.slice(at - 200, at + 60)}`);
});

test("accepts a realistic GitHub issue", () => {
  const v = createResponseValidator();
  assert.deepEqual(v.validate("GET", "/repos/octo/fleet/issues/42", 200, realisticIssue()), []);
  // Pull requests come back from the issues endpoints too, with a pull_request key.
  const pr = {
    ...realisticIssue(),
    pull_request: {
      url: `${API}/repos/octo/fleet/pulls/42`,
      html_url: "https://github.com/octo/fleet/pull/42",
      diff_url: null,
      patch_url: null,
      merged_at: null,
    },
  };
  assert.deepEqual(v.validate("GET", "/repos/octo/fleet/issues", 200, [realisticIssue(), pr]), []);
  // Nullable fields accept null and their type (milestone, assignee, body, state_reason).
  const closed = {
    ...realisticIssue(),
    state: "closed",
    state_reason: "completed",
    closed_at: "2026-11-04T08:00:00Z",
    assignee: user("hubot", 7),
    body: null,
    closed_by: user("hubot", 7),
  };
  assert.deepEqual(v.validate("PATCH", "/repos/octo/fleet/issues/42", 200, closed), []);
  // A label may also be a bare string.
  assert.deepEqual(v.validate("GET", "/repos/octo/fleet/issues/42", 200, { ...realisticIssue(), labels: ["afk:ready"] }), []);
});

test("rejects an issue with a missing required field or a wrong type", () => {
  const v = createResponseValidator();
  const missing = realisticIssue();
  delete missing.number;
  const errs1 = v.validate("GET", "/repos/octo/fleet/issues/42", 200, missing);
  assert.equal(errs1.length, 1, errs1.join("\n"));
  assert.match(errs1[0] as string, /^GET \/repos\/\{owner\}\/\{repo\}\/issues\/\{issue_number\} -> 200: \(body\) must have required property 'number'/);

  const wrongType = { ...realisticIssue(), comments: "2" };
  const errs2 = v.validate("GET", "/repos/octo/fleet/issues/42", 200, wrongType);
  assert.ok(
    errs2.some((e) => /\/comments must be integer, got string "2"/.test(e)),
    errs2.join("\n"),
  );

  const badNested = realisticIssue();
  badNested.user = { ...user("octocat", 1), site_admin: "no" };
  badNested.sub_issues_summary = { total: 1, completed: 0 };
  badNested.created_at = "yesterday";
  const errs3 = v.validate("GET", "/repos/octo/fleet/issues/42", 200, badNested);
  assert.ok(
    errs3.some((e) => e.includes("/user/site_admin must be boolean")),
    errs3.join("\n"),
  );
  assert.ok(
    errs3.some((e) => e.includes("/sub_issues_summary must have required property 'percent_completed'")),
    errs3.join("\n"),
  );
  assert.ok(
    errs3.some((e) => e.includes('/created_at must match format "date-time"')),
    errs3.join("\n"),
  );

  // null where the description does not allow it
  const errs4 = v.validate("GET", "/repos/octo/fleet/issues/42", 200, { ...realisticIssue(), title: null });
  assert.ok(
    errs4.some((e) => /\/title must be string, got null/.test(e)),
    errs4.join("\n"),
  );
  // enum with null added by the nullable rewrite
  const errs5 = v.validate("GET", "/repos/octo/fleet/issues/42", 200, { ...realisticIssue(), state_reason: "fixed" });
  assert.ok(
    errs5.some((e) => e.includes("/state_reason must be equal to one of the allowed values")),
    errs5.join("\n"),
  );
  // A list must be an array of issues.
  assert.ok(v.validate("GET", "/repos/octo/fleet/issues", 200, realisticIssue()).length > 0);
});

test("error statuses, statuses without a body schema, undocumented statuses", () => {
  const v = createResponseValidator();
  const notFound = { message: "Not Found", documentation_url: "https://docs.github.com/rest/issues/issues#get-an-issue", status: "404" };
  assert.deepEqual(v.validate("GET", "/repos/octo/fleet/issues/999", 404, notFound), []);
  assert.ok(v.validate("GET", "/repos/octo/fleet/issues/999", 404, { message: 404 }).length > 0);
  assert.ok(v.validate("GET", "/repos/octo/fleet/issues/999", 404, undefined)[0]?.includes("expected a JSON body"));
  // 422 validation-failed requires documentation_url.
  const v422 = {
    message: "Validation Failed",
    errors: [{ resource: "Label", code: "already_exists", field: "name" }],
    documentation_url: "https://docs.github.com/rest/issues/labels#create-a-label",
    status: "422",
  };
  assert.deepEqual(v.validate("POST", "/repos/octo/fleet/labels", 422, v422), []);
  assert.ok(v.validate("POST", "/repos/octo/fleet/labels", 422, { message: "Validation Failed" }).some((e) => e.includes("documentation_url")));
  // 409 on the merge: basic-error.
  assert.deepEqual(
    v.validate("PUT", "/repos/octo/fleet/pulls/3/merge", 409, {
      message: "Head branch was modified. Review and try the merge again.",
      documentation_url: "https://docs.github.com/rest/pulls/pulls#merge-a-pull-request",
    }),
    [],
  );
  // Documented without a body schema: anything goes.
  assert.deepEqual(v.validate("DELETE", "/repos/octo/fleet/git/refs/afk/claim/42", 204, undefined), []);
  assert.deepEqual(v.validate("GET", "/repos/octo/fleet/issues/42", 304, undefined), []);
  // An undocumented success status is a conformance bug (GitHub answers 200 here, not 201).
  assert.match(v.validate("POST", "/repos/octo/fleet/issues/1/labels", 201, [])[0] ?? "", /status 201 is not documented/);
  // An undocumented error status must still be a GitHub error object.
  assert.deepEqual(v.validate("POST", "/repos/octo/fleet/check-runs", 404, notFound), []);
  assert.ok(v.validate("POST", "/repos/octo/fleet/check-runs", 404, { message: ["x"] }).length > 0);
});

test("maps concrete paths to the most specific template, with slashes in {ref} and {branch}", () => {
  const v = createResponseValidator();
  const cases: Array<[string, string, string | null]> = [
    ["GET", "/user", "GET /user"],
    ["GET", "/repos/octo/fleet", "GET /repos/{owner}/{repo}"],
    ["GET", "/repos/octo/fleet/issues?state=all&per_page=100", "GET /repos/{owner}/{repo}/issues"],
    ["GET", "/repos/octo/fleet/issues/42", ISSUE_OP],
    ["GET", "/repos/octo/fleet/issues/comments/77", "GET /repos/{owner}/{repo}/issues/comments/{comment_id}"],
    ["PATCH", "/repos/octo/fleet/issues/comments/77", "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}"],
    // issue_number is an integer: "comments" is not an issue number (GET .../issues/comments is unlisted)
    ["GET", "/repos/octo/fleet/issues/comments", null],
    ["DELETE", "/repos/octo/fleet/issues/4/labels/afk:claimed", "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}"],
    // a label name with an encoded slash is one segment
    ["GET", "/repos/octo/fleet/labels/area%2Fui", "GET /repos/{owner}/{repo}/labels/{name}"],
    ["GET", "/repos/octo/fleet/labels/area/ui", null],
    ["GET", "/repos/octo/fleet/git/matching-refs/afk/claim/", "GET /repos/{owner}/{repo}/git/matching-refs/{ref}"],
    ["GET", "/repos/octo/fleet/git/matching-refs/afk%2Fclaim%2F", "GET /repos/{owner}/{repo}/git/matching-refs/{ref}"],
    ["GET", "/repos/octo/fleet/git/ref/heads/main", "GET /repos/{owner}/{repo}/git/ref/{ref}"],
    ["GET", "/repos/octo/fleet/git/ref/heads%2Ffeature%2Fx", "GET /repos/{owner}/{repo}/git/ref/{ref}"],
    ["PATCH", "/repos/octo/fleet/git/refs/afk/claim/42", "PATCH /repos/{owner}/{repo}/git/refs/{ref}"],
    ["DELETE", "/repos/octo/fleet/git/refs/afk%2Fclaim%2F42", "DELETE /repos/{owner}/{repo}/git/refs/{ref}"],
    ["POST", "/repos/octo/fleet/git/refs", "POST /repos/{owner}/{repo}/git/refs"],
    ["GET", "/repos/octo/fleet/git/refs", null],
    ["GET", "/repos/octo/fleet/commits/feature/x/status", "GET /repos/{owner}/{repo}/commits/{ref}/status"],
    ["GET", "/repos/octo/fleet/commits/0123abc/statuses", "GET /repos/{owner}/{repo}/commits/{ref}/statuses"],
    ["GET", "/repos/octo/fleet/commits/heads%2Fmain/check-runs", "GET /repos/{owner}/{repo}/commits/{ref}/check-runs"],
    ["GET", "/repos/octo/fleet/branches/main", "GET /repos/{owner}/{repo}/branches/{branch}"],
    ["GET", "/repos/octo/fleet/branches/main/protection", "GET /repos/{owner}/{repo}/branches/{branch}/protection"],
    ["GET", "/repos/octo/fleet/branches/release/2.x/protection", "GET /repos/{owner}/{repo}/branches/{branch}/protection"],
    ["GET", "/repos/octo/fleet/branches/release/2.x", "GET /repos/{owner}/{repo}/branches/{branch}"],
    ["GET", "/repos/octo/fleet/rules/branches/feature/x", "GET /repos/{owner}/{repo}/rules/branches/{branch}"],
    ["DELETE", "/repos/octo/fleet/issues/5/sub_issue", "DELETE /repos/{owner}/{repo}/issues/{issue_number}/sub_issue"],
    [
      "DELETE",
      "/repos/octo/fleet/issues/5/dependencies/blocked_by/3412345678",
      "DELETE /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by/{issue_id}",
    ],
    ["PUT", "/repos/octo/fleet/pulls/3/update-branch", "PUT /repos/{owner}/{repo}/pulls/{pull_number}/update-branch"],
    ["PATCH", "/repos/octo/fleet/check-runs/9", "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}"],
    // method not listed for a known template, and paths that are not there at all
    ["DELETE", "/repos/octo/fleet/issues/42", null],
    ["GET", "/repos/octo/fleet/pulls/3/merge", null],
    ["GET", "/repos/octo/fleet/pulls/three", null],
    ["GET", "/repos/octo", null],
    ["GET", "/orgs/octo/repos", null],
  ];
  for (const [method, path, expected] of cases) {
    assert.equal(v.operationFor(method, path), expected, `${method} ${path}`);
  }
  assert.equal(v.operationFor("get", "/rate_limit"), "GET /rate_limit");
});

test("unknown operations are errors, forge control and git smart-HTTP paths are skipped", () => {
  const v = createResponseValidator();
  const errs = v.validate("DELETE", "/repos/octo/fleet/issues/42", 204, undefined);
  assert.equal(errs.length, 1);
  assert.match(errs[0] as string, /no operation in the GitHub OpenAPI subset matches \(the subset has GET .*issue_number\}, PATCH/);
  assert.match(v.validate("GET", "/repos/octo/fleet/actions/artifacts", 200, {})[0] ?? "", /no operation/);
  assert.deepEqual(v.validate("POST", "/_forge/reset", 200, { anything: true }), []);
  assert.deepEqual(v.validate("GET", "/octo/fleet.git/info/refs?service=git-upload-pack", 200, "binary"), []);
  assert.deepEqual(v.validate("POST", "/octo/fleet.git/git-receive-pack", 200, undefined), []);
  assert.equal(v.operationFor("GET", "/_forge/state"), null);

  const rec = conformanceRecorder({ validator: v });
  rec.onResponse({ method: "GET", path: "/repos/octo/fleet/issues/42", rawPath: "/repos/octo/fleet/issues/42?x=1", status: 200, body: realisticIssue() });
  rec.onResponse({
    method: "GET",
    path: "/repos/octo/fleet/labels/area/ui",
    rawPath: "/repos/octo/fleet/labels/area%2Fui",
    status: 404,
    body: { message: "Not Found", documentation_url: "https://docs.github.com/rest" },
  });
  rec.onResponse({
    method: "GET",
    path: "/octo/fleet.git/info/refs",
    rawPath: "/octo/fleet.git/info/refs?service=git-upload-pack",
    status: 200,
    body: undefined,
  });
  rec.onResponse({ method: "PUT", path: "/repos/octo/fleet/issues/42/lock", status: 204, body: undefined });
  assert.deepEqual([...rec.seen()].sort(), [ISSUE_OP, "GET /repos/{owner}/{repo}/labels/{name}"]);
  assert.equal(rec.count(), 3);
  assert.equal(rec.violations().length, 1);
  assert.match(rec.violations()[0] as string, /^PUT \/repos\/octo\/fleet\/issues\/42\/lock: PUT \/repos\/octo\/fleet\/issues\/42\/lock -> 204: no operation/);
});

test("compiles every documented response schema of the subset", (t) => {
  const subset = loadGithubSubset();
  const v = createResponseValidator();
  const started = performance.now();
  for (const [template, ops] of Object.entries(subset.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const path = template.replace(/\{[^}]+\}/g, "1");
      for (const status of Object.keys(op.responses)) {
        // Compiles lazily; the body (a number) is invalid for every JSON schema here.
        v.validate(method, path, Number(status), 0);
      }
    }
  }
  const ms = performance.now() - started;
  assert.ok(v.compiledCount() > 40, `compiled ${v.compiledCount()}`);
  // Cached: a second pass compiles nothing more.
  const before = v.compiledCount();
  v.validate("GET", "/repos/a/b/issues/1", 200, realisticIssue());
  assert.equal(v.compiledCount(), before);
  t.diagnostic(`compiled ${before} schemas in ${ms.toFixed(0)} ms`);
});
