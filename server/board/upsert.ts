// Keeps one status board comment per issue (render.ts renders it): found once, created when
// absent, edited only when its body changed; writes for one issue go one at a time.
import type { Comment, Forge } from "../gh/forge.js";
import { ForgeError, UsageError } from "../gh/errors.js";
import { BOARD_MARKER, sameLogin } from "../state/markers.js";
import { KeyedSerial } from "../kit/serial.js";

export type UpsertAction = "created" | "updated" | "unchanged";

interface Known {
  /** The board comment's id; null: looked, there is none. */
  id: number | null;
  /** What the comment holds, as far as we know. */
  body: string | null;
}

/**
 * Keeps one board comment per issue: found once (listComments: the fleet's own comment starting
 * with the marker; a marker typed by anyone else is ignored), created when absent, edited only
 * when the body changed. Knows its comments from memory after the first look, so an unchanged
 * board costs no request at all; a restart looks once more.
 */
export class BoardUpserter {
  private readonly known = new Map<number, Known>();
  private readonly writes = new KeyedSerial<number>();

  constructor(
    private readonly forge: Forge,
    private readonly login: string,
  ) {}

  /**
   * Writes the board; with `onlyExisting`, only edits one that exists (a release does not open a
   * board). `noComments`: the caller's fresh listing says the issue has no comment at all, so
   * there is no board to look up (one request saved per issue).
   */
  upsert(issue: number, body: string, options: { onlyExisting?: boolean; noComments?: boolean } = {}): Promise<{ action: UpsertAction; commentId: number }> {
    if (!body.startsWith(BOARD_MARKER)) {
      return Promise.reject(new UsageError(`a board body must start with ${BOARD_MARKER}: render it with renderBoard`));
    }
    return this.writes.run(issue, () => this.upsertNow(issue, body, options.onlyExisting === true, options.noComments === true));
  }

  /** Records that an issue has no board (the caller knows it has no comment at all); a known board stays known. */
  noBoard(issue: number): void {
    if (!this.known.has(issue)) this.known.set(issue, { id: null, body: null });
  }

  /** Drops what is known of an issue (after its terminal board, once the claim is released). */
  forget(issue: number): void {
    this.known.delete(issue);
  }

  private async upsertNow(issue: number, body: string, onlyExisting: boolean, noComments: boolean): Promise<{ action: UpsertAction; commentId: number }> {
    let known = this.known.get(issue);
    if (!known) {
      // One conditional request, once per issue and process: a board made before a restart is
      // found and updated instead of a second one posted.
      const found = noComments ? undefined : this.find(await this.forge.listComments(issue));
      known = { id: found?.id ?? null, body: found?.body ?? null };
      this.known.set(issue, known);
    }
    if (onlyExisting && known.id === null) return { action: "unchanged", commentId: 0 };
    if (known.id !== null && known.body === body) return { action: "unchanged", commentId: known.id };
    if (known.id !== null) {
      try {
        // One request per changed board (an unchanged body returned above): the board is the
        // human's view of the issue, and one comment edited keeps the thread to one entry.
        const updated = await this.forge.updateComment(known.id, body);
        this.known.set(issue, { id: updated.id, body });
        return { action: "updated", commentId: updated.id };
      } catch (error) {
        // Somebody deleted the board: make a new one.
        if (!(error instanceof ForgeError) || error.kind !== "not_found") {
          this.known.delete(issue); // unsure what the comment holds now: look again next time
          throw error;
        }
      }
    }
    // The board's one creating request (a board is never posted twice, see above).
    const created = await this.forge.createComment(issue, body);
    this.known.set(issue, { id: created.id, body });
    return { action: "created", commentId: created.id };
  }

  // The oldest of the fleet's own board comments (there should be one).
  private find(comments: readonly Comment[]): Comment | null {
    let best: Comment | null = null;
    for (const comment of comments) {
      if (!sameLogin(comment.author, this.login) || !comment.body.startsWith(BOARD_MARKER)) continue;
      if (best === null || comment.id < best.id) best = comment;
    }
    return best;
  }
}
