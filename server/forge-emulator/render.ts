// GitHub-shaped JSON for every object the forge serves. Each renderer emits every key that
// GitHub's OpenAPI description marks required (nullable ones as null), with URLs built the
// way api.github.com builds them, so clients and the OpenAPI validator see the real shapes.
import { createHash } from "node:crypto";
import type {
  CheckRunRecord,
  CommentRecord,
  ForgeState,
  IssueRecord,
  LabelRecord,
  ProtectionRecord,
  PullRecord,
  ReviewRecord,
  RuleRecord,
  RulesetRecord,
  StatusRecord,
  UserRecord,
} from "./state.js";

export interface ForgeUrls {
  /** REST base, e.g. http://127.0.0.1:PORT (no trailing slash). */
  api: string;
  /** Where html_url points (the forge serves no HTML, but the shape matches GitHub). */
  web: string;
  owner: string;
  name: string;
  fullName: string;
  gitUrl: string;
}

/** What a pull request looks like right now, from git (head and base tips, mergeability). */
export interface PullView {
  headSha: string;
  baseSha: string;
  mergeable: boolean | null;
  mergeableState: string;
  commits: number;
  additions: number;
  deletions: number;
  changedFiles: number;
}

type Json = Record<string, unknown>;

/** The app that check runs are attributed to (GitHub only lets apps create check runs). */
export const FORGE_APP_ID = 1;
/** GitHub Actions' app id on github.com: the app a job's check run is posted as. */
export const ACTIONS_APP_ID = 15368;

export function nodeId(kind: string, id: number | string): string {
  return Buffer.from(`0:${kind}${id}`).toString("base64").replace(/=+$/, "");
}

/** Stable pseudo-id for a login that has no user record (e.g. a seeded author). */
function loginId(login: string): number {
  return 100 + (createHash("sha1").update(login).digest().readUInt32BE(0) % 9_000_000);
}

export class Render {
  constructor(
    private readonly state: ForgeState,
    readonly urls: ForgeUrls,
  ) {}

  get repoApi(): string {
    return `${this.urls.api}/repos/${this.urls.fullName}`;
  }

  get repoWeb(): string {
    return `${this.urls.web}/${this.urls.fullName}`;
  }

  // Users

  user(login: string): Json {
    const rec = this.state.user(login);
    const id = rec?.id ?? loginId(login);
    const name = rec?.login ?? login;
    // As GitHub spells a bot's URLs: /users/github-actions%5Bbot%5D.
    const inUrl = encodeURIComponent(name);
    const api = `${this.urls.api}/users/${inUrl}`;
    return {
      login: name,
      id,
      node_id: nodeId("U", id),
      avatar_url: `${this.urls.web}/avatars/${inUrl}`,
      gravatar_id: "",
      url: api,
      html_url: `${this.urls.web}/${inUrl}`,
      followers_url: `${api}/followers`,
      following_url: `${api}/following{/other_user}`,
      gists_url: `${api}/gists{/gist_id}`,
      starred_url: `${api}/starred{/owner}{/repo}`,
      subscriptions_url: `${api}/subscriptions`,
      organizations_url: `${api}/orgs`,
      repos_url: `${api}/repos`,
      events_url: `${api}/events{/privacy}`,
      received_events_url: `${api}/received_events`,
      type: name.endsWith("[bot]") ? "Bot" : "User",
      user_view_type: "public",
      site_admin: false,
    };
  }

  /** `GET /user`: the private-user shape. */
  privateUser(u: UserRecord): Json {
    return {
      ...this.user(u.login),
      name: u.login,
      company: null,
      blog: "",
      location: null,
      email: null,
      hireable: null,
      bio: null,
      twitter_username: null,
      notification_email: null,
      public_repos: 1,
      public_gists: 0,
      followers: 0,
      following: 0,
      created_at: u.createdAt,
      updated_at: u.createdAt,
      private_gists: 0,
      total_private_repos: 0,
      owned_private_repos: 0,
      disk_usage: 0,
      collaborators: 0,
      two_factor_authentication: false,
    };
  }

  /** `GET /users/{username}`: the public-user shape. */
  publicUser(login: string): Json {
    const rec = this.state.user(login);
    const created = rec?.createdAt ?? this.state.data.createdAt;
    return {
      ...this.user(login),
      name: login,
      company: null,
      blog: "",
      location: null,
      email: null,
      hireable: null,
      bio: null,
      public_repos: 1,
      public_gists: 0,
      followers: 0,
      following: 0,
      created_at: created,
      updated_at: created,
    };
  }

  association(login: string): string {
    const u = this.state.user(login);
    if (u?.admin) return "OWNER";
    return u ? "COLLABORATOR" : "NONE";
  }

  // Repository

  /** The full-repository shape; `forUser` decides `permissions`. */
  repository(forUser: UserRecord | null, openIssues: number): Json {
    const { owner, name, fullName } = this.urls;
    const api = this.repoApi;
    const web = this.repoWeb;
    const d = this.state.data;
    const base = {
      id: 1_000,
      node_id: nodeId("R", 1000),
      name,
      full_name: fullName,
      owner: this.user(owner),
      private: false,
      html_url: web,
      description: "A repository served by the afk-mcp local forge",
      fork: false,
      url: api,
      archive_url: `${api}/{archive_format}{/ref}`,
      assignees_url: `${api}/assignees{/user}`,
      blobs_url: `${api}/git/blobs{/sha}`,
      branches_url: `${api}/branches{/branch}`,
      collaborators_url: `${api}/collaborators{/collaborator}`,
      comments_url: `${api}/comments{/number}`,
      commits_url: `${api}/commits{/sha}`,
      compare_url: `${api}/compare/{base}...{head}`,
      contents_url: `${api}/contents/{+path}`,
      contributors_url: `${api}/contributors`,
      deployments_url: `${api}/deployments`,
      downloads_url: `${api}/downloads`,
      events_url: `${api}/events`,
      forks_url: `${api}/forks`,
      git_commits_url: `${api}/git/commits{/sha}`,
      git_refs_url: `${api}/git/refs{/sha}`,
      git_tags_url: `${api}/git/tags{/sha}`,
      git_url: this.urls.gitUrl,
      issue_comment_url: `${api}/issues/comments{/number}`,
      issue_events_url: `${api}/issues/events{/number}`,
      issues_url: `${api}/issues{/number}`,
      keys_url: `${api}/keys{/key_id}`,
      labels_url: `${api}/labels{/name}`,
      languages_url: `${api}/languages`,
      merges_url: `${api}/merges`,
      milestones_url: `${api}/milestones{/number}`,
      notifications_url: `${api}/notifications{?since,all,participating}`,
      pulls_url: `${api}/pulls{/number}`,
      releases_url: `${api}/releases{/id}`,
      ssh_url: this.urls.gitUrl,
      stargazers_url: `${api}/stargazers`,
      statuses_url: `${api}/statuses/{sha}`,
      subscribers_url: `${api}/subscribers`,
      subscription_url: `${api}/subscription`,
      tags_url: `${api}/tags`,
      teams_url: `${api}/teams`,
      trees_url: `${api}/git/trees{/sha}`,
      clone_url: this.urls.gitUrl,
      mirror_url: null,
      hooks_url: `${api}/hooks`,
      svn_url: web,
      homepage: null,
      language: null,
      forks_count: 0,
      stargazers_count: 0,
      watchers_count: 0,
      size: 1,
      default_branch: d.defaultBranch,
      open_issues_count: openIssues,
      is_template: false,
      topics: [],
      has_issues: true,
      has_projects: false,
      has_wiki: false,
      has_pages: false,
      has_downloads: false,
      has_discussions: false,
      archived: false,
      disabled: false,
      visibility: "public",
      pushed_at: d.pushedAt,
      created_at: d.createdAt,
      updated_at: d.pushedAt,
      allow_rebase_merge: false,
      allow_squash_merge: true,
      allow_merge_commit: true,
      allow_auto_merge: false,
      delete_branch_on_merge: false,
      allow_update_branch: true,
      allow_forking: true,
      web_commit_signoff_required: false,
      subscribers_count: 0,
      network_count: 0,
      license: null,
      forks: 0,
      open_issues: openIssues,
      watchers: 0,
    };
    if (!forUser) return base;
    return {
      ...base,
      permissions: {
        admin: forUser.admin,
        maintain: forUser.admin,
        push: forUser.admin || forUser.push !== false,
        triage: forUser.admin || forUser.push !== false,
        pull: true,
      },
    };
  }

  /** The small repository object inside a combined status. */
  minimalRepository(): Json {
    const full = this.repository(null, 0);
    const keep = Object.keys(full).filter((k) => !["open_issues_count", "open_issues", "subscribers_count", "network_count"].includes(k));
    return Object.fromEntries(keep.map((k) => [k, full[k]]));
  }

  /**
   * The repository inside a workflow run (`repository`, `head_repository`), as GitHub sends it
   * there: its identity and API URLs, nothing that moves with a push (no pushed_at, no counts,
   * no clone URLs). So a push elsewhere in the repository leaves an unchanged run's ETag alone,
   * and a poll of it answers 304.
   */
  runRepository(): Json {
    const full = this.repository(null, 0);
    const identity = ["id", "node_id", "name", "full_name", "private", "owner", "html_url", "description", "fork", "url"];
    const clones = ["clone_url", "git_url", "ssh_url", "svn_url", "mirror_url"];
    return Object.fromEntries(Object.entries(full).filter(([k]) => identity.includes(k) || (k.endsWith("_url") && !clones.includes(k))));
  }

  // Labels

  label(l: LabelRecord): Json {
    return {
      id: l.id,
      node_id: nodeId("LA", l.id),
      url: `${this.repoApi}/labels/${encodeURIComponent(l.name)}`,
      name: l.name,
      color: l.color,
      default: false,
      description: l.description,
    };
  }

  private issueLabels(issue: IssueRecord): Json[] {
    const out: Json[] = [];
    for (const name of issue.labels) {
      const l = this.state.label(name);
      if (l) out.push(this.label(l));
    }
    return out;
  }

  // Issues

  issueApiUrl(number: number): string {
    return `${this.repoApi}/issues/${number}`;
  }

  issue(issue: IssueRecord): Json {
    const url = this.issueApiUrl(issue.number);
    const isPull = issue.pull !== null;
    const html = `${this.repoWeb}/${isPull ? "pull" : "issues"}/${issue.number}`;
    const assignees = issue.assignees.map((a) => this.user(a));
    const openBlockers = countOpen(this.state, issue.blockedBy);
    const openBlocking = countOpen(this.state, issue.blocking);
    const completed = issue.subIssues.length - countOpen(this.state, issue.subIssues);
    const out: Json = {
      id: issue.id,
      node_id: nodeId("I", issue.id),
      url,
      repository_url: this.repoApi,
      labels_url: `${url}/labels{/name}`,
      comments_url: `${url}/comments`,
      events_url: `${url}/events`,
      html_url: html,
      number: issue.number,
      state: issue.state,
      state_reason: issue.stateReason,
      title: issue.title,
      body: issue.body,
      user: this.user(issue.author),
      labels: this.issueLabels(issue),
      assignee: assignees[0] ?? null,
      assignees,
      milestone: null,
      locked: issue.locked,
      active_lock_reason: null,
      comments: this.state.commentsFor(issue.number).length,
      closed_at: issue.closedAt,
      created_at: issue.createdAt,
      updated_at: issue.updatedAt,
      closed_by: issue.closedBy ? this.user(issue.closedBy) : null,
      author_association: this.association(issue.author),
      timeline_url: `${url}/timeline`,
      performed_via_github_app: null,
      reactions: this.reactions(`${url}/reactions`),
      sub_issues_summary: {
        total: issue.subIssues.length,
        completed,
        percent_completed: issue.subIssues.length === 0 ? 0 : Math.floor((completed * 100) / issue.subIssues.length),
      },
      issue_dependencies_summary: {
        blocked_by: openBlockers,
        blocking: openBlocking,
        total_blocked_by: issue.blockedBy.length,
        total_blocking: issue.blocking.length,
      },
      parent_issue_url: issue.parent === null ? null : this.issueApiUrl(issue.parent),
    };
    if (issue.pull) {
      out.draft = issue.pull.draft;
      out.pull_request = {
        url: `${this.repoApi}/pulls/${issue.number}`,
        html_url: html,
        diff_url: `${html}.diff`,
        patch_url: `${html}.patch`,
        merged_at: issue.pull.mergedAt,
      };
    }
    return out;
  }

  private reactions(url: string): Json {
    return { url, total_count: 0, "+1": 0, "-1": 0, laugh: 0, confused: 0, heart: 0, hooray: 0, eyes: 0, rocket: 0 };
  }

  comment(c: CommentRecord): Json {
    const url = `${this.repoApi}/issues/comments/${c.id}`;
    const issue = this.state.issue(c.issue);
    const kind = issue?.pull ? "pull" : "issues";
    return {
      id: c.id,
      node_id: nodeId("IC", c.id),
      url,
      html_url: `${this.repoWeb}/${kind}/${c.issue}#issuecomment-${c.id}`,
      body: c.body,
      user: this.user(c.author),
      created_at: c.createdAt,
      updated_at: c.updatedAt,
      issue_url: this.issueApiUrl(c.issue),
      author_association: this.association(c.author),
      performed_via_github_app: null,
      reactions: this.reactions(`${url}/reactions`),
    };
  }

  // Pull requests

  /** `full` adds the fields only the single-PR endpoint carries (mergeable, counts). */
  pull(issue: IssueRecord, pull: PullRecord, view: PullView, full: boolean): Json {
    const n = issue.number;
    const url = `${this.repoApi}/pulls/${n}`;
    const html = `${this.repoWeb}/pull/${n}`;
    const issueUrl = this.issueApiUrl(n);
    const assignees = issue.assignees.map((a) => this.user(a));
    const repo = this.repository(null, 0);
    const owner = this.urls.owner;
    const side = (ref: string, sha: string): Json => ({ label: `${owner}:${ref}`, ref, sha, user: this.user(owner), repo });
    // pull-request-simple requires a string description on labels; GitHub sends "" then too.
    const labels = this.issueLabels(issue).map((l) => (full ? l : { ...l, description: l.description ?? "" }));
    const out: Json = {
      url,
      id: pull.id,
      node_id: nodeId("PR_", pull.id),
      html_url: html,
      diff_url: `${html}.diff`,
      patch_url: `${html}.patch`,
      issue_url: issueUrl,
      commits_url: `${url}/commits`,
      review_comments_url: `${url}/comments`,
      review_comment_url: `${this.repoApi}/pulls/comments{/number}`,
      comments_url: `${issueUrl}/comments`,
      statuses_url: `${this.repoApi}/statuses/${view.headSha}`,
      number: n,
      state: issue.state,
      locked: issue.locked,
      title: issue.title,
      user: this.user(issue.author),
      body: issue.body,
      labels,
      milestone: null,
      active_lock_reason: null,
      created_at: issue.createdAt,
      updated_at: issue.updatedAt,
      closed_at: issue.closedAt,
      merged_at: pull.mergedAt,
      merge_commit_sha: pull.mergeCommitSha,
      assignee: assignees[0] ?? null,
      assignees,
      requested_reviewers: [],
      requested_teams: [],
      head: side(pull.head, view.headSha),
      base: side(pull.base, view.baseSha),
      _links: {
        self: { href: url },
        html: { href: html },
        issue: { href: issueUrl },
        comments: { href: `${issueUrl}/comments` },
        review_comments: { href: `${url}/comments` },
        review_comment: { href: `${this.repoApi}/pulls/comments{/number}` },
        commits: { href: `${url}/commits` },
        statuses: { href: `${this.repoApi}/statuses/${view.headSha}` },
      },
      author_association: this.association(issue.author),
      auto_merge: null,
      draft: pull.draft,
    };
    if (!full) return out;
    return {
      ...out,
      merged: pull.merged,
      mergeable: view.mergeable,
      rebaseable: false,
      mergeable_state: view.mergeableState,
      merged_by: pull.mergedBy ? this.user(pull.mergedBy) : null,
      comments: this.state.commentsFor(n).length,
      review_comments: 0,
      maintainer_can_modify: false,
      commits: view.commits,
      additions: view.additions,
      deletions: view.deletions,
      changed_files: view.changedFiles,
    };
  }

  // Checks and statuses

  /** The app a check run is posted as: GitHub Actions for a job's, else the forge's CI app. */
  private app(actions = false): Json {
    const owner = this.user(this.urls.owner);
    const [id, slug, name] = actions ? [ACTIONS_APP_ID, "github-actions", "GitHub Actions"] : [FORGE_APP_ID, "afk-forge-ci", "afk forge CI"];
    return {
      id,
      slug,
      node_id: nodeId("A", id),
      client_id: actions ? "Iv1.actions" : "Iv1.afkforge",
      owner,
      name,
      description: actions ? "Jobs of the local Actions runner" : "Check runs posted to the local forge",
      external_url: this.urls.web,
      html_url: `${this.urls.web}/apps/${slug}`,
      created_at: this.state.data.createdAt,
      updated_at: this.state.data.createdAt,
      permissions: { checks: "write", statuses: "write", metadata: "read" },
      events: [],
    };
  }

  checkRun(r: CheckRunRecord, pulls: unknown[]): Json {
    const url = `${this.repoApi}/check-runs/${r.id}`;
    return {
      id: r.id,
      head_sha: r.headSha,
      node_id: nodeId("CR_", r.id),
      external_id: r.externalId ?? "",
      url,
      html_url: `${this.repoWeb}/runs/${r.id}`,
      details_url: r.detailsUrl,
      status: r.status,
      conclusion: r.conclusion,
      started_at: r.startedAt,
      completed_at: r.completedAt,
      output: {
        title: r.title,
        summary: r.summary,
        text: r.text,
        annotations_count: 0,
        annotations_url: `${url}/annotations`,
      },
      name: r.name,
      check_suite: { id: r.actionsRun ?? r.id },
      app: this.app(r.actionsRun !== undefined),
      pull_requests: pulls,
    };
  }

  /** The minimal PR reference a check run lists. */
  checkRunPull(issue: IssueRecord, pull: PullRecord, headSha: string, baseSha: string): Json {
    const repo = { id: 1000, url: this.repoApi, name: this.urls.name };
    return {
      id: pull.id,
      number: issue.number,
      url: `${this.repoApi}/pulls/${issue.number}`,
      head: { ref: pull.head, sha: headSha, repo },
      base: { ref: pull.base, sha: baseSha, repo },
    };
  }

  status(s: StatusRecord): Json {
    return {
      url: `${this.repoApi}/statuses/${s.sha}`,
      avatar_url: `${this.urls.web}/avatars/${s.creator}`,
      id: s.id,
      node_id: nodeId("SC_", s.id),
      state: s.state,
      description: s.description,
      target_url: s.targetUrl,
      context: s.context,
      created_at: s.createdAt,
      updated_at: s.updatedAt,
      creator: this.user(s.creator),
    };
  }

  combinedStatus(sha: string, state: string, statuses: StatusRecord[]): Json {
    return {
      state,
      statuses: statuses.map((s) => {
        const full = this.status(s);
        delete full.creator;
        return { ...full, required: null };
      }),
      sha,
      total_count: statuses.length,
      repository: this.minimalRepository(),
      commit_url: `${this.repoApi}/commits/${sha}`,
      url: `${this.repoApi}/commits/${sha}/status`,
    };
  }

  // Git refs, branches, protection, rules

  gitRef(ref: string, sha: string, type: string): Json {
    const kind = type === "tag" ? "tags" : type === "tree" ? "trees" : type === "blob" ? "blobs" : "commits";
    return {
      ref,
      node_id: nodeId("REF_", ref),
      url: `${this.repoApi}/git/${ref}`,
      object: { sha, type, url: `${this.repoApi}/git/${kind}/${sha}` },
    };
  }

  commit(c: {
    sha: string;
    tree: string;
    parents: string[];
    message: string;
    author: { name: string; email: string; date: string };
    committer: { name: string; email: string; date: string };
  }): Json {
    const url = `${this.repoApi}/commits/${c.sha}`;
    return {
      url,
      sha: c.sha,
      node_id: nodeId("C_", c.sha),
      html_url: `${this.repoWeb}/commit/${c.sha}`,
      comments_url: `${url}/comments`,
      commit: {
        url: `${this.repoApi}/git/commits/${c.sha}`,
        author: c.author,
        committer: c.committer,
        message: c.message,
        comment_count: 0,
        tree: { sha: c.tree, url: `${this.repoApi}/git/trees/${c.tree}` },
        verification: { verified: false, reason: "unsigned", signature: null, payload: null, verified_at: null },
      },
      author: this.userForEmail(c.author.email),
      committer: this.userForEmail(c.committer.email),
      parents: c.parents.map((p) => ({ sha: p, url: `${this.repoApi}/commits/${p}`, html_url: `${this.repoWeb}/commit/${p}` })),
    };
  }

  /** Commits made by the forge use `<login>@users.noreply.afk-forge`: map those back to users. */
  private userForEmail(email: string): Json | null {
    const m = /^(.+)@users\.noreply\.afk-forge$/.exec(email);
    return m && this.state.user(m[1]!) ? this.user(m[1]!) : null;
  }

  branch(name: string, commit: Json, protection: ProtectionRecord | undefined): Json {
    const api = `${this.repoApi}/branches/${encodeURIComponent(name)}`;
    return {
      name,
      commit,
      _links: { self: api, html: `${this.repoWeb}/tree/${name}` },
      protected: protection !== undefined,
      protection: this.branchProtectionSummary(protection),
      protection_url: `${api}/protection`,
    };
  }

  /** The short form inside `GET /branches/{branch}`. */
  private branchProtectionSummary(p: ProtectionRecord | undefined): Json {
    const rsc = p?.requiredStatusChecks;
    return {
      enabled: p !== undefined,
      required_status_checks: {
        enforcement_level: rsc ? "non_admins" : "off",
        contexts: rsc ? rsc.checks.map((c) => c.context) : [],
        checks: rsc ? rsc.checks.map((c) => ({ context: c.context, app_id: c.appId })) : [],
        // No `strict` here: GitHub shows it only through the admin-only protection endpoint.
      },
    };
  }

  /** `GET|PUT /branches/{branch}/protection`. */
  protection(p: ProtectionRecord): Json {
    const url = `${this.repoApi}/branches/${encodeURIComponent(p.branch)}/protection`;
    const out: Json = {
      url,
      enforce_admins: { url: `${url}/enforce_admins`, enabled: p.enforceAdmins },
      required_linear_history: { enabled: p.requiredLinearHistory },
      allow_force_pushes: { enabled: p.allowForcePushes },
      allow_deletions: { enabled: p.allowDeletions },
      block_creations: { enabled: false },
      required_conversation_resolution: { enabled: false },
      lock_branch: { enabled: false },
      allow_fork_syncing: { enabled: false },
      required_signatures: { url: `${url}/required_signatures`, enabled: false },
    };
    if (p.requiredStatusChecks) {
      out.required_status_checks = {
        url: `${url}/required_status_checks`,
        strict: p.requiredStatusChecks.strict,
        contexts: p.requiredStatusChecks.checks.map((c) => c.context),
        checks: p.requiredStatusChecks.checks.map((c) => ({ context: c.context, app_id: c.appId })),
        contexts_url: `${url}/required_status_checks/contexts`,
      };
    }
    if (p.requiredReviews) {
      out.required_pull_request_reviews = {
        url: `${url}/required_pull_request_reviews`,
        dismiss_stale_reviews: p.requiredReviews.dismissStale,
        require_code_owner_reviews: p.requiredReviews.codeOwners,
        required_approving_review_count: p.requiredReviews.count,
        require_last_push_approval: false,
      };
    }
    return out;
  }

  /** `GET|POST /pulls/{n}/reviews`. */
  review(r: ReviewRecord): Json {
    const pullUrl = `${this.repoApi}/pulls/${r.pull}`;
    const html = `${this.repoWeb}/pull/${r.pull}#pullrequestreview-${r.id}`;
    return {
      id: r.id,
      node_id: nodeId("PRR_", r.id),
      user: this.user(r.author),
      body: r.body,
      state: r.state,
      html_url: html,
      pull_request_url: pullUrl,
      author_association: this.association(r.author),
      _links: { html: { href: html }, pull_request: { href: pullUrl } },
      ...(r.submittedAt ? { submitted_at: r.submittedAt } : {}),
      commit_id: r.commitId,
    };
  }

  ruleset(r: RulesetRecord): Json {
    const url = `${this.repoApi}/rulesets/${r.id}`;
    return {
      id: r.id,
      name: r.name,
      target: r.target,
      source_type: "Repository",
      source: this.urls.fullName,
      enforcement: r.enforcement,
      bypass_actors: [],
      current_user_can_bypass: "never",
      node_id: nodeId("RRS_", r.id),
      _links: { self: { href: url }, html: { href: `${this.repoWeb}/rules/${r.id}` } },
      conditions: { ref_name: { include: r.include, exclude: r.exclude } },
      rules: r.rules,
      created_at: r.createdAt,
      updated_at: r.updatedAt,
    };
  }

  ruleDetailed(rule: RuleRecord, r: RulesetRecord): Json {
    return { ...rule, ruleset_source_type: "Repository", ruleset_source: this.urls.fullName, ruleset_id: r.id };
  }
}

function countOpen(state: ForgeState, numbers: number[]): number {
  let n = 0;
  for (const num of numbers) if (state.issue(num)?.state === "open") n++;
  return n;
}
