// Refs in the fleet's hidden namespace (`refs/afk/*`), with compare-and-swap. Claims and
// heartbeats are commits with an empty tree whose message carries the facts (instance, host,
// time); the commit sha doubles as the fencing token.

export interface RefEntry {
  /** Full ref name, e.g. "refs/afk/claim/42". */
  ref: string;
  sha: string;
  /** The commit message of the commit the ref points at. */
  message: string;
}

export type CasOutcome =
  | { won: true; sha: string }
  | { won: false; /** What the ref holds now (null: absent), when it could be read. */ current: string | null };

export interface RefStore {
  /** Every ref under `prefix` (e.g. "refs/afk/"), read in one round trip. */
  list(prefix: string): Promise<RefEntry[]>;
  /** Creates `ref` -> a new empty-tree commit carrying `message`, only if `ref` is absent. */
  create(ref: string, message: string): Promise<CasOutcome>;
  /** Moves `ref` from `expectedSha` to a new commit carrying `message`; loses if it moved. */
  swap(ref: string, expectedSha: string, message: string): Promise<CasOutcome>;
  /** Deletes `ref` only if it still holds `expectedSha`. Deleting an absent ref wins. */
  remove(ref: string, expectedSha: string): Promise<CasOutcome>;
  /** Reads one ref now (bypassing any cache): null when absent. */
  read(ref: string): Promise<string | null>;
}

/** Validates a ref name the fleet is about to hand to git (never a user string unguarded). */
export function assertSafeRefName(ref: string): void {
  const bad =
    !ref.startsWith("refs/") ||
    ref.split("/").length < 3 ||
    ref.includes("..") ||
    ref.startsWith("-") ||
    ref.split("/").some((part) => part === "" || part.startsWith("-") || part.startsWith(".") || part.endsWith(".lock")) ||
    // eslint-disable-next-line no-control-regex -- control characters are exactly what git forbids
    /[\s~^:?*[\\\x00-\x1f\x7f]/.test(ref) ||
    ref.endsWith("/") ||
    ref.endsWith(".") ||
    ref.includes("@{");
  if (bad) {
    throw new RefNameError(ref);
  }
}

export class RefNameError extends Error {
  override readonly name = "RefNameError";
  constructor(readonly ref: string) {
    super(
      `invalid ref name ${JSON.stringify(ref)}: a ref must start with "refs/", have at least three parts, ` +
        `and contain no "..", no part starting with "-" or ".", no whitespace or any of ~^:?*[\\`,
    );
  }
}
