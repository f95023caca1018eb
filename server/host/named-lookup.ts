// What the numbers an `issues` selector names are, when they are not among the open issues:
// one read per number (a closed issue, a pull request, or nothing at all), for the plan's
// reasons and the start's refusal of a number that is no issue (state/named.ts decides). A
// number's kind never changes once it exists, so it is read once per connection; only an absent
// one is read again.
import type { Forge } from "../gh/forge.js";
import { ForgeError } from "../gh/errors.js";
import { namedNumbers, notIssues, type NumberKind } from "../state/named.js";
import type { Selector } from "../state/selectors.js";
import { UsageError } from "../gh/errors.js";
import { namedTypos } from "./preconditions.js";

/** Reads in flight at once: a long list of closed issues must not burst the rate limit. */
const AT_ONCE = 8;
/**
 * Numbers read at most per call, the first in the lists' order: 20 lists of 1,000 numbers that are
 * not open would otherwise cost 20,000 requests. The rest are said to be "not open" (closed, or no
 * issue at all) without a read, and do not refuse the start.
 */
export const MAX_LOOKUPS = 100;

export async function lookUpNamed(
  forge: Pick<Forge, "getIssue">,
  named: ReadonlyArray<{ number: number }>,
  open: ReadonlySet<number>,
  known: Map<number, "issue" | "pull">,
): Promise<Map<number, NumberKind>> {
  const kinds = new Map<number, NumberKind>();
  const unread: number[] = [];
  for (const { number } of named) {
    if (open.has(number)) continue;
    const kind = known.get(number);
    if (kind) kinds.set(number, kind);
    else unread.push(number);
  }
  const reads = unread.slice(0, MAX_LOOKUPS);
  for (let i = 0; i < reads.length; i += AT_ONCE) {
    const batch = reads.slice(i, i + AT_ONCE);
    const read = await Promise.all(
      batch.map((n) =>
        // One request per named number not in the open listing, once per connection (`known`): a
        // closed issue, a pull request or a typo; a start must tell them apart before it runs.
        forge.getIssue(n).then(
          (issue): NumberKind => (issue.isPull ? "pull" : "issue"),
          (error: unknown): NumberKind => {
            // Gone (410: deleted or transferred) is as absent as never there.
            if (error instanceof ForgeError && (error.kind === "not_found" || error.status === 410)) return "absent";
            throw error;
          },
        ),
      ),
    );
    batch.forEach((n, j) => {
      const kind = read[j]!;
      kinds.set(n, kind);
      if (kind !== "absent") known.set(n, kind);
    });
  }
  return kinds;
}

/** A resize's new selectors: a number that is no issue refuses it, as it refuses a start (each number read once per connection). */
export async function refuseNamedTypos(
  forge: Pick<Forge, "getIssue" | "listOpenIssues">,
  repo: string,
  selectors: readonly Selector[],
  known: Map<number, "issue" | "pull">,
): Promise<void> {
  const named = namedNumbers(selectors);
  if (named.length === 0) return;
  // One conditional request (free while the backlog is as the fleet's last tick read it): the
  // open issues are issues, so only the numbers not among them are read one by one.
  const open = new Set((await forge.listOpenIssues()).map((i) => i.number));
  const wrong = namedTypos(repo, notIssues(named, await lookUpNamed(forge, named, open, known)));
  if (wrong !== null) throw new UsageError(`project_resize refused: ${wrong}`);
}
