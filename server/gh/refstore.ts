// Refs in the fleet's hidden namespace (`refs/afk/*`), with compare-and-swap. Claims and
// heartbeats are commits with an empty tree whose message carries the facts (instance, host,
// time); the commit sha doubles as the fencing token. The RefStore interface is a port of the
// core (server/state/ports.ts); gitrefs.ts implements it over git.

export type { CasOutcome, RefEntry, RefStore } from "../state/ports.js";

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
