// Git facts read at most once per request: a list of 100 pull requests needs the branch tips
// once, not once per pull request.
import type { BareGit } from "./bare-git.js";

export class RequestMemo {
  private tips: Promise<Map<string, string>> | null = null;
  private readonly resolved = new Map<string, Promise<string | null>>();

  constructor(private readonly git: BareGit) {}

  /** Branch name -> tip sha. */
  branchTips(): Promise<Map<string, string>> {
    this.tips ??= this.git.branchTips();
    return this.tips;
  }

  /** A sha, branch or tag resolved to a commit sha (null: no such commit). */
  resolveCommit(rev: string): Promise<string | null> {
    let p = this.resolved.get(rev);
    if (!p) {
      p = this.git.resolveCommit(rev);
      this.resolved.set(rev, p);
    }
    return p;
  }

  /** After this request moved a ref, later reads in it must see the new value. */
  invalidate(): void {
    this.tips = null;
    this.resolved.clear();
  }
}
