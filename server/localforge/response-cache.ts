// Finished answers of state-only GET routes (issues, labels, comments, ...), kept until the
// forge state's revision changes. A fleet polls the same lists over and over, mostly getting
// 304s: serving the body and its ETag from here skips rendering and hashing 100 issues.

export interface CachedAnswer {
  body: unknown;
  text: string;
  etag: string;
  headers: Record<string, string>;
}

export class ResponseCache {
  private revision = -1;
  private readonly answers = new Map<string, CachedAnswer>();

  constructor(private readonly max = 1000) {}

  get(revision: number, key: string): CachedAnswer | undefined {
    this.sync(revision);
    return this.answers.get(key);
  }

  set(revision: number, key: string, answer: CachedAnswer): void {
    this.sync(revision);
    if (this.answers.size >= this.max) this.answers.delete(this.answers.keys().next().value as string);
    this.answers.set(key, answer);
  }

  private sync(revision: number): void {
    if (revision !== this.revision) {
      this.answers.clear();
      this.revision = revision;
    }
  }
}
