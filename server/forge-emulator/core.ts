// The forge's shared context: state, the bare repository, renderers, the write lock, and
// caches of git answers that depend only on commit shas (so they never go stale).
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { Accounting } from "./accounting.js";
import { BareGit, type MergeTreeResult, type Signature } from "./bare-git.js";
import { Faults } from "./faults.js";
import { RateLimiter } from "./ratelimit.js";
import { ResponseCache } from "./response-cache.js";
import { Render, type ForgeUrls } from "./render.js";
import { isoNow, type ForgeState, type UserRecord } from "./state.js";
import type { StatePersister } from "./store-persist.js";
import { Serial } from "../kit/serial.js";
import { LRUCache } from "lru-cache";

export interface CompareResult {
  commits: number;
  additions: number;
  deletions: number;
  changedFiles: number;
}

/** Bounded memo: git answers keyed by shas are immutable, but memory is not free. */
class ShaCache<V> {
  private readonly map = new LRUCache<string, Promise<V>>({ max: 2000 });

  get(key: string, compute: () => Promise<V>): Promise<V> {
    let p = this.map.get(key);
    if (!p) {
      const computed = compute();
      // A failed computation must not be remembered.
      computed.catch(() => this.map.get(key) === computed && this.map.delete(key));
      this.map.set(key, computed);
      p = computed;
    }
    return p;
  }
}

export interface SharedParts {
  faults: Faults;
  accounting: Accounting;
  rateLimits: RateLimiter;
}

export class ForgeEmulator {
  readonly render: Render;
  /** Serialises async critical sections (merges, ref writes, post-push bookkeeping). */
  readonly writeLock = new Serial();
  readonly faults: Faults;
  readonly accounting: Accounting;
  readonly rateLimits: RateLimiter;
  /** The other repositories one server serves beside this one: same users and tokens. */
  readonly siblings: ForgeEmulator[] = [];
  readonly responses = new ResponseCache();
  private readonly mergeTrees = new ShaCache<MergeTreeResult>();
  private readonly compares = new ShaCache<CompareResult>();
  private readonly ancestry = new ShaCache<boolean>();
  private indexSeq = 0;
  /** What pull-sync last examined (open PRs with their head and base tips): skip if unchanged. */
  lastPullSync: string | null = null;

  constructor(
    readonly state: ForgeState,
    readonly git: BareGit,
    readonly urls: ForgeUrls,
    readonly dir: string,
    readonly persister: StatePersister,
    shared?: SharedParts,
  ) {
    this.render = new Render(state, urls);
    // One server is one GitHub: its repositories share fault injection, accounting and budgets.
    this.faults = shared?.faults ?? new Faults();
    this.accounting = shared?.accounting ?? new Accounting();
    this.rateLimits = shared?.rateLimits ?? new RateLimiter();
  }

  get defaultBranch(): string {
    return this.state.data.defaultBranch;
  }

  /** A fresh temporary index file path (concurrent tree writes must not share one). */
  tempIndex(): string {
    return join(this.dir, `.forge-index-${process.pid}-${++this.indexSeq}`);
  }

  /** The three-way merge of `ours` and `theirs` (cached: both are immutable commits). */
  mergeTree(ours: string, theirs: string): Promise<MergeTreeResult> {
    return this.mergeTrees.get(`${ours}:${theirs}`, () => this.git.mergeTree(ours, theirs));
  }

  isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return this.ancestry.get(`${ancestor}>${descendant}`, () => this.git.isAncestor(ancestor, descendant));
  }

  compare(base: string, head: string): Promise<CompareResult> {
    return this.compares.get(`${base}..${head}`, () => this.git.compare(base, head));
  }

  signature(login: string): Signature {
    return { name: login, email: `${login}@users.noreply.afk-forge`, date: isoNow() };
  }

  addUser(login: string, admin: boolean): UserRecord {
    const existing = this.state.user(login);
    if (existing) return existing;
    const user: UserRecord = {
      login,
      id: this.state.nextId(),
      token: `afkf_${randomBytes(16).toString("hex")}`,
      admin,
      createdAt: isoNow(),
    };
    this.state.addUser(user);
    for (const sibling of this.siblings) sibling.state.putUser(user);
    return user;
  }

  /** Whether the user may write to this repository (push, refs, PRs, labels). */
  canPush(user: UserRecord): boolean {
    return user.admin || user.push !== false;
  }
}

export function isValidLogin(login: unknown): login is string {
  return typeof login === "string" && /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}(\[bot\])?$/.test(login);
}
