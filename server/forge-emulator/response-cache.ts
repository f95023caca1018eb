// Finished answers of state-only GET routes (issues, labels, comments, ...), kept until the
// forge state's revision changes. A fleet polls the same lists over and over, mostly getting
// 304s: serving the body and its ETag from here skips rendering and hashing 100 issues.

import { LRUCache } from "lru-cache";

export interface CachedAnswer {
  body: unknown;
  text: string;
  etag: string;
  headers: Record<string, string>;
}

export class ResponseCache {
  private revision = -1;
  private readonly answers: LRUCache<string, CachedAnswer>;

  constructor(max = 1000) {
    this.answers = new LRUCache({ max });
  }

  get(revision: number, key: string): CachedAnswer | undefined {
    this.sync(revision);
    return this.answers.get(key);
  }

  set(revision: number, key: string, answer: CachedAnswer): void {
    this.sync(revision);
    this.answers.set(key, answer);
  }

  private sync(revision: number): void {
    if (revision !== this.revision) {
      this.answers.clear();
      this.revision = revision;
    }
  }
}
