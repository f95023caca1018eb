// The lookup of the numbers an `issues` selector names that are not open (server/host/named-lookup.ts):
// each read once per connection, an absent one read again, and at most MAX_LOOKUPS reads a call,
// so a list of thousands of numbers that are not open costs a bounded number of requests.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { lookUpNamed, MAX_LOOKUPS, refuseNamedTypos } from "../server/host/named-lookup.js";
import { ForgeError } from "../server/gh/errors.js";
import type { Issue } from "../server/gh/forge.js";

/** A forge whose issues 1..100 are closed issues, 101..110 pull requests, the rest absent; it counts reads. */
function countingForge(): { reads: number[]; forge: { getIssue(n: number): Promise<Issue> } } {
  const reads: number[] = [];
  return {
    reads,
    forge: {
      getIssue(n: number): Promise<Issue> {
        reads.push(n);
        if (n > 110) return Promise.reject(new ForgeError("not_found", `no issue #${n}`, 404, ""));
        return Promise.resolve({ number: n, isPull: n > 100 } as Issue);
      },
    },
  };
}

describe("the named numbers' lookup", () => {
  it("reads each number not open once per connection, an absent one again", async () => {
    const { reads, forge } = countingForge();
    const known = new Map<number, "issue" | "pull">();
    const named = [5, 105, 500, 7].map((number) => ({ number }));
    const kinds = await lookUpNamed(forge, named, new Set([7]), known);
    assert.deepEqual(
      [...kinds],
      [
        [5, "issue"],
        [105, "pull"],
        [500, "absent"],
      ],
    );
    assert.deepEqual(
      reads.sort((a, b) => a - b),
      [5, 105, 500],
      "the open #7 is not read",
    );
    reads.length = 0;
    await lookUpNamed(forge, named, new Set([7]), known);
    assert.deepEqual(reads, [500], "a kind once found is kept; an absent number may have been opened since");
  });

  it(`reads at most ${MAX_LOOKUPS} numbers a call, the first in the lists' order; the rest are left unread`, async () => {
    const { reads, forge } = countingForge();
    const named = Array.from({ length: 250 }, (_, i) => ({ number: 1000 + i }));
    const kinds = await lookUpNamed(forge, named, new Set(), new Map());
    assert.equal(reads.length, MAX_LOOKUPS);
    assert.deepEqual(
      [...reads].sort((a, b) => a - b),
      named.slice(0, MAX_LOOKUPS).map((n) => n.number),
    );
    assert.equal(kinds.size, MAX_LOOKUPS);
    assert.equal(kinds.get(1000 + MAX_LOOKUPS), undefined, "unread: the plan says 'not open', and it refuses nothing");
  });

  it("a resize's selectors: the open issues they name cost one listing, not a read each; a number that is no issue refuses it", async () => {
    const { reads, forge } = countingForge();
    let listings = 0;
    const open = Array.from({ length: 40 }, (_, i) => ({ number: 200 + i, isPull: false }) as unknown as Issue);
    const both = {
      getIssue: forge.getIssue,
      listOpenIssues(): Promise<Issue[]> {
        listings++;
        return Promise.resolve(open);
      },
    };
    const known = new Map<number, "issue" | "pull">();
    await refuseNamedTypos(both, "afk/demo", [{ issues: open.map((i) => i.number) }], known);
    assert.equal(listings, 1);
    assert.deepEqual(reads, [], "no open issue is read one by one");
    await refuseNamedTypos(both, "afk/demo", [{ issues: [200, 5] }], known);
    assert.deepEqual(reads, [5], "only the closed one is read");
    await assert.rejects(
      refuseNamedTypos(both, "afk/demo", [{ issues: [201, 105, 999] }], known),
      /project_resize refused: .*#105.*#999|project_resize refused: .*#999.*#105/,
    );
    await refuseNamedTypos(both, "afk/demo", [], known);
    assert.equal(listings, 3, "no selector names a number: nothing is listed");
  });
});
