// Repository slugs: "owner/name", or the URL of a GitHub remote (https, ssh, scp-like),
// validated against GitHub's naming rules before anything reaches an API path or git.
import type { RepoSlug } from "./forge.js";
import { UsageError } from "./errors.js";

// GitHub logins: letters, digits and hyphens, at most 39, not starting with a hyphen. (Some
// legacy accounts end with a hyphen or hold "--", so those are allowed.)
const OWNER = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}$/;
// Repository names: letters, digits, ".", "_", "-", at most 100; "." and ".." are reserved.
const NAME = /^[A-Za-z0-9._-]{1,100}$/;

const EXPECTED =
  `expected "owner/name" (e.g. "octocat/hello-world") or a GitHub remote URL ` + `(https://github.com/owner/name.git, git@github.com:owner/name.git)`;

/** Parses "owner/name" or a remote URL; throws a UsageError naming the expected form. */
export function parseSlug(input: string): RepoSlug {
  const text = typeof input === "string" ? input.trim() : "";
  if (text === "") throw new UsageError(`repository is empty: ${EXPECTED}`);
  const shown = JSON.stringify(withoutCredentials(text));
  const path = looksLikeUrl(text) ? pathOfRemote(text, shown) : text;
  const parts = path.split("/");
  if (parts.length !== 2) throw new UsageError(`invalid repository ${shown}: ${EXPECTED}`);
  const owner = parts[0] ?? "";
  const name = stripGitSuffix(parts[1] ?? "");
  if (!OWNER.test(owner)) {
    throw new UsageError(
      `invalid repository owner ${JSON.stringify(owner)} in ${shown}: an owner is 1-39 letters, digits ` +
        `or hyphens and does not start with a hyphen; ${EXPECTED}`,
    );
  }
  if (!NAME.test(name) || name === "." || name === "..") {
    throw new UsageError(
      `invalid repository name ${JSON.stringify(name)} in ${shown}: a name is 1-100 of ` + `A-Z a-z 0-9 . _ - and not "." or ".."; ${EXPECTED}`,
    );
  }
  return { owner, name };
}

export function formatSlug(slug: RepoSlug): string {
  return `${slug.owner}/${slug.name}`;
}

/** The one key of a repository in maps, registries and file names: GitHub compares owners and names without case. */
export function repoKey(repo: string | RepoSlug): string {
  return formatSlug(typeof repo === "string" ? parseSlug(repo) : repo).toLowerCase();
}

/** Case-insensitive, as GitHub compares owners and names. */
export function sameSlug(a: RepoSlug, b: RepoSlug): boolean {
  return a.owner.toLowerCase() === b.owner.toLowerCase() && a.name.toLowerCase() === b.name.toLowerCase();
}

function looksLikeUrl(text: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(text) || /^[^/\s]+@[^/\s:]+:/.test(text);
}

// https://github.com/o/n(.git), ssh://git@github.com/o/n.git, git@github.com:o/n.git. The
// host is not checked: GitHub Enterprise and the local forge serve the same path shape.
function pathOfRemote(text: string, shown: string): string {
  let path: string;
  const scp = /^[^/\s]+@[^/\s:]+:(.*)$/.exec(text);
  if (scp && !text.includes("://")) {
    path = scp[1] ?? "";
  } else {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new UsageError(`invalid repository URL ${shown}: ${EXPECTED}`);
    }
    if (!["https:", "http:", "ssh:", "git+ssh:", "git:"].includes(url.protocol)) {
      throw new UsageError(`unsupported URL scheme ${JSON.stringify(url.protocol)} in ${shown}: ${EXPECTED}`);
    }
    path = decodeURIComponent(url.pathname);
  }
  return path.replace(/^\/+/, "").replace(/\/+$/, "");
}

// A remote URL may carry a token ("https://x-access-token:ghp_...@github.com/..."): never echo it.
function withoutCredentials(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/i, "$1***@");
}

function stripGitSuffix(name: string): string {
  return name.endsWith(".git") && name.length > 4 ? name.slice(0, -4) : name;
}
