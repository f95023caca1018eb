// Claims and heartbeats as refs under refs/afk/*, read and compare-and-swapped with git.
//
// Decision: git, not REST. `git push --force-with-lease=<ref>:<expected>` is a true
// compare-and-swap: the expected value (empty = "must not exist") is checked by the client
// against the remote's advertisement and sent as the old value of the update, which the
// server applies under a ref lock, so of N concurrent claimers exactly one wins. REST has no
// such update: `POST /git/refs` is create-if-absent (422 when present) but `PATCH /git/refs`
// takes no expected sha (only a fast-forward check) and `DELETE` none at all, so reclaiming a
// stale claim or releasing one could clobber a peer. GraphQL `updateRefs` takes a beforeOid,
// but a stale one comes back as HTTP 200 with a generic error, so every answer needs a
// re-read to tell a lost race from a failure. Listing is one `git fetch` of the namespace
// (one round trip, no per-ref requests, no rate limit), and the same commands behave the
// same against GitHub, a file path and the local forge, so tests exercise the real path.
//
// The store keeps a private bare "control" repository (under the state directory) whose
// origin is the project's clone URL; only refs under refs/afk/* and their empty-tree commits
// ever land in it. The token reaches git only as an http.extraHeader (see git.ts).
import { mkdir, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { assertSafeRefName, type CasOutcome, type RefEntry, type RefStore } from "./refstore.js";
import { assertNoCredentialsInUrl, git, gitFailure, gitRaw, pushRejection, type GitAuth, type GitResult } from "./git.js";
import { GitError, UsageError } from "./errors.js";
import { Serial } from "../kit/serial.js";

/** git's well-known empty tree. */
export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

// A fixed identity, so commit-tree never asks for user.name/user.email and claims do not
// carry whoever happens to run the host (the message carries instance and host).
const IDENTITY = {
  GIT_AUTHOR_NAME: "afk-mcp",
  GIT_AUTHOR_EMAIL: "afk-mcp@users.noreply.github.com",
  GIT_COMMITTER_NAME: "afk-mcp",
  GIT_COMMITTER_EMAIL: "afk-mcp@users.noreply.github.com",
};

// Rejections that mean "somebody else changed the ref first": the client-side lease check
// (stale info), or the server's re-check under its lock (the others, wording varies by host).
const LOST_RACE =
  /stale info|fetch first|non-fast-forward|already exists|cannot lock ref|failed to update ref|failed to lock|incorrect old value|but expected|ref has changed/i;

export interface GitRefStoreOptions {
  /** Where the private bare control repository lives (created if absent). */
  controlDir: string;
  /** The repository's clone URL (https on GitHub, the local forge's git URL, or a path). */
  remoteUrl: string;
  /** Sent as an http.extraHeader; null for a path remote or an ambient credential. */
  token?: string | null;
  timeoutMs?: number;
}

export class GitRefStore implements RefStore {
  private readonly dir: string;
  private readonly remoteUrl: string;
  private readonly auth: GitAuth | null;
  private readonly timeoutMs: number | undefined;
  private ready: Promise<void> | null = null;
  // Fetches write local refs: two at once would fight over ref locks. Pushes do not.
  private readonly fetches = new Serial();
  /** Per prefix: the last listing, and whether it matched the one before (the namespace is quiet). */
  private readonly listed = new Map<string, { entries: RefEntry[]; quiet: boolean }>();

  constructor(options: GitRefStoreOptions) {
    assertNoCredentialsInUrl(options.remoteUrl);
    this.dir = resolve(options.controlDir);
    this.remoteUrl = options.remoteUrl;
    this.auth = options.token ? { token: options.token, url: options.remoteUrl } : null;
    this.timeoutMs = options.timeoutMs;
  }

  /**
   * The refs under `prefix`. While nothing moves but our own writes (an idle fleet: its
   * heartbeat), one `ls-remote` (the ref advertisement alone) says so and the last listing is the
   * answer: no fetch, no for-each-ref.
   * Once a listing found a change, the next ones fetch at once (a busy namespace would pay for
   * the ls-remote and the fetch both) until a fetch finds nothing new again.
   */
  async list(prefix: string): Promise<RefEntry[]> {
    assertSafePrefix(prefix);
    await this.ensureRepo();
    return this.fetches.run(async () => {
      const last = this.listed.get(prefix);
      if (last?.quiet) {
        const { stdout } = await this.run(["ls-remote", "--refs", "origin", `${prefix}*`]);
        if (sameRefs(parseLsRemote(stdout, prefix), last.entries)) return last.entries.map((e) => ({ ...e }));
      }
      const refspec = `+${prefix}*:${prefix}*`;
      await this.run(["fetch", "--prune", "--no-tags", "--no-write-fetch-head", "--quiet", "origin", refspec]);
      const format = "%(refname)%00%(objectname)%00%(contents)%00";
      const { stdout } = await this.run(["for-each-ref", `--format=${format}`, "--", prefix]);
      const entries = parseForEachRef(stdout);
      this.listed.set(prefix, { entries, quiet: last !== undefined && sameRefs(new Map(entries.map((e) => [e.ref, e.sha])), last.entries) });
      return entries.map((e) => ({ ...e }));
    });
  }

  async create(ref: string, message: string): Promise<CasOutcome> {
    assertSafeRefName(ref);
    await this.ensureRepo();
    const sha = await this.commit(message);
    return this.push(ref, null, sha, message);
  }

  async swap(ref: string, expectedSha: string, message: string): Promise<CasOutcome> {
    assertSafeRefName(ref);
    assertSha(expectedSha);
    await this.ensureRepo();
    const sha = await this.commit(message);
    return this.push(ref, expectedSha, sha, message);
  }

  async remove(ref: string, expectedSha: string): Promise<CasOutcome> {
    assertSafeRefName(ref);
    assertSha(expectedSha);
    await this.ensureRepo();
    return this.push(ref, expectedSha, null);
  }

  async read(ref: string): Promise<string | null> {
    assertSafeRefName(ref);
    await this.ensureRepo();
    const { stdout } = await this.run(["ls-remote", "--refs", "origin", ref]);
    for (const line of stdout.split("\n")) {
      const [sha, name] = line.split("\t");
      if (name === ref && sha) return sha;
    }
    return null;
  }

  /** The control repository's path (for diagnostics). */
  get controlDir(): string {
    return this.dir;
  }

  // One push, one CAS. `expected` null: the ref must not exist. `next` null: delete it.
  private async push(ref: string, expected: string | null, next: string | null, message = ""): Promise<CasOutcome> {
    const outcome = await this.pushOnce(ref, expected, next);
    if (outcome.won) this.noteOwnWrite(ref, next, message);
    return outcome;
  }

  /**
   * Our own write, known to be on the remote: the last listings take it in, so that the next
   * ls-remote, which sees it (our heartbeat moves every beat), does not take it for a change.
   */
  private noteOwnWrite(ref: string, next: string | null, message: string): void {
    for (const [prefix, last] of this.listed) {
      if (!ref.startsWith(prefix)) continue;
      const entries = last.entries.filter((e) => e.ref !== ref);
      // As for-each-ref reads it back: commit() ends the message with one newline, which the parse drops.
      if (next !== null) entries.push({ ref, sha: next, message: message.replace(/\n$/, "") });
      last.entries = entries.sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
    }
  }

  private async pushOnce(ref: string, expected: string | null, next: string | null): Promise<CasOutcome> {
    const lease = `--force-with-lease=${ref}:${expected ?? ""}`;
    const refspec = `${next ?? ""}:${ref}`;
    // --no-verify: a global core.hooksPath pre-push hook has no business here; a global
    // push.gpgSign would make git ask for a signing key.
    const args = ["-c", "push.gpgSign=false", "push", "--porcelain", "--no-verify", lease, "origin", refspec];
    for (let attempt = 1; ; attempt += 1) {
      const result = await this.runRaw(args);
      if (result.exitCode === 0) return { won: true, sha: next ?? expected ?? "" };

      const verdict = pushRejection(result.stdout, ref);
      if (verdict && LOST_RACE.test(verdict)) {
        const current = await this.read(ref).catch(() => undefined);
        // Deleting a ref that is already gone is what the caller wanted.
        if (next === null && current === null) return { won: true, sha: expected ?? "" };
        // The ref holds what we expected after all: it moved and came back between the
        // lease check and our read (or the refusal was not a race). Try once more.
        if (current !== undefined && current === expected && attempt < 2) continue;
        if (current === undefined || current !== expected) return { won: false, current: current ?? null };
      }
      if (next === null && /remote ref does not exist|unable to delete/i.test(`${result.stderr}\n${verdict ?? ""}`)) {
        return { won: true, sha: expected ?? "" };
      }
      const failure = gitFailure(args, result, this.auth);
      if (verdict) {
        // The remote refused for a reason that is not a race (hidden ref, hook, rules).
        throw new GitError(
          `push of ${ref} was refused by the remote: ${verdict}`,
          failure.command,
          failure.exitCode,
          failure.stderr,
          /hidden ref|deny|declined|protected|rule/i.test(verdict)
            ? "the remote does not accept updates to this ref namespace: the fleet needs refs/afk/* to be writable"
            : failure.hint,
        );
      }
      throw failure;
    }
  }

  private async commit(message: string): Promise<string> {
    const body = message.endsWith("\n") ? message : `${message}\n`;
    const { stdout } = await this.run(["commit-tree", "--no-gpg-sign", EMPTY_TREE, "-F", "-"], { input: body, env: IDENTITY });
    const sha = stdout.trim();
    assertSha(sha);
    return sha;
  }

  private ensureRepo(): Promise<void> {
    if (!this.ready) {
      this.ready = this.initRepo().catch((error: unknown) => {
        this.ready = null; // let a later call try again (e.g. after a transient disk error)
        throw error;
      });
    }
    return this.ready;
  }

  private async initRepo(): Promise<void> {
    const exists = await stat(resolve(this.dir, "HEAD")).then(
      () => true,
      () => false,
    );
    if (!exists) {
      await mkdir(this.dir, { recursive: true });
      await this.run(["init", "--bare", "--quiet", this.dir]);
    }
    // (Re)point origin at the clone URL: the project's URL may have changed since last run.
    await this.run(["config", "remote.origin.url", this.remoteUrl]);
    // The refs are all the control repository ever fetches: keep git from repacking in the
    // background of a short-lived call, and from deleting claim commits as unreachable.
    await this.run(["config", "gc.autoDetach", "false"]);
    const { stdout } = await this.run(["hash-object", "-t", "tree", "-w", "--stdin"], { input: "" });
    if (stdout.trim() !== EMPTY_TREE) {
      throw new GitError(
        `unexpected empty tree ${stdout.trim()}`,
        "git hash-object -t tree -w --stdin",
        0,
        "",
        "this git uses a non-SHA-1 object format; use a SHA-1 repository",
      );
    }
  }

  private run(args: string[], extra: { input?: string; env?: Record<string, string> } = {}): Promise<GitResult> {
    return git(args, { cwd: this.dir, auth: this.auth, ...extra, ...(this.timeoutMs ? { timeoutMs: this.timeoutMs } : {}) });
  }

  private runRaw(args: string[]): Promise<GitResult> {
    return gitRaw(args, { cwd: this.dir, auth: this.auth, ...(this.timeoutMs ? { timeoutMs: this.timeoutMs } : {}) });
  }
}

function parseForEachRef(stdout: string): RefEntry[] {
  const fields = stdout.split("\0");
  const entries: RefEntry[] = [];
  for (let i = 0; i + 2 < fields.length; i += 3) {
    const ref = (fields[i] ?? "").replace(/^\n/, "");
    const sha = fields[i + 1] ?? "";
    const message = (fields[i + 2] ?? "").replace(/\n$/, "");
    if (ref !== "") entries.push({ ref, sha, message });
  }
  return entries;
}

/** `ls-remote` lines ("<sha>\t<ref>") under `prefix`, as ref → sha (its pattern also matches by the name's tail). */
function parseLsRemote(stdout: string, prefix: string): Map<string, string> {
  const refs = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const [sha, ref] = line.split("\t");
    if (sha && ref?.startsWith(prefix)) refs.set(ref, sha);
  }
  return refs;
}

function sameRefs(refs: Map<string, string>, entries: readonly RefEntry[]): boolean {
  return refs.size === entries.length && entries.every((e) => refs.get(e.ref) === e.sha);
}

/** Refuses a listing prefix the store cannot take (exported for the test fakes, which refuse the same). */
export function assertSafePrefix(prefix: string): void {
  if (typeof prefix !== "string" || !prefix.endsWith("/")) {
    throw new UsageError(`invalid ref prefix ${JSON.stringify(prefix)}: it must end with "/", e.g. "refs/afk/"`);
  }
  // "refs/afk/" is the shortest useful namespace; the name rules are those of a ref under it.
  if (prefix.split("/").length < 3) {
    throw new UsageError(`invalid ref prefix ${JSON.stringify(prefix)}: it must name a namespace, e.g. "refs/afk/"`);
  }
  assertSafeRefName(`${prefix}x`);
}

/** Refuses what is not a full object id (exported for the test fakes, which refuse the same). */
export function assertSha(sha: string): void {
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha)) {
    throw new UsageError(`invalid object id ${JSON.stringify(sha)}: expected 40 (or 64) lowercase hex digits`);
  }
}
