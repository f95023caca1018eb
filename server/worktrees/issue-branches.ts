// An issue's branches in the work repository, local and on origin: which one a dead worker's
// progress continues from (tier 2), which name a fresh attempt restarts under, and backups of
// tips set aside so that no commit is ever lost.
import { assertSafeBranchName } from "../gh/git.js";
import { parseFleetBranch } from "../state/markers.js";
import type { RefTip, RepoGit } from "./work-repo.js";

interface Candidate {
  name: string;
  local: RefTip | undefined;
  remote: RefTip | undefined;
  time: number;
}

export class IssueBranches {
  constructor(
    private readonly git: RepoGit,
    private readonly branchPrefix: string,
    private readonly now: () => Date,
  ) {}

  // What tier 2 continues from: the issue's branch (the expected name first, else the most
  // recently committed) whose local or remote tip has commits that origin/<base> lacks.
  async continuation(issue: number, expected: string, baseSha: string, note: string): Promise<{ branch: string; tip: string; backups: string[] } | null> {
    const replaceable = await this.git.revParse(replaceRef(issue));
    const candidates = await this.candidates(issue);
    const progressed: Candidate[] = [];
    for (const candidate of candidates) {
      const local = candidate.local && !(await this.git.isAncestor(candidate.local.sha, baseSha)) ? candidate.local : undefined;
      // A remote tip that `fresh` declared replaceable is the old attempt: nothing to continue.
      const remote =
        candidate.remote && candidate.remote.sha !== replaceable && !(await this.git.isAncestor(candidate.remote.sha, baseSha)) ? candidate.remote : undefined;
      if (local || remote) progressed.push({ name: candidate.name, local, remote, time: Math.max(local?.time ?? 0, remote?.time ?? 0) });
    }
    const chosen = progressed.find((c) => c.name === expected) ?? progressed.sort((a, b) => b.time - a.time || a.name.localeCompare(b.name))[0];
    if (!chosen) return null;
    const backups: string[] = [];
    const local = chosen.local?.sha;
    const remote = chosen.remote?.sha;
    let tip: string;
    if (local && remote) {
      if (local === remote || (await this.git.isAncestor(remote, local)))
        tip = local; // unpushed commits on top
      else if (await this.git.isAncestor(local, remote)) tip = remote;
      else {
        tip = remote;
        backups.push(await this.backup(issue, local, `${note}: diverged from origin`));
      }
    } else {
      tip = (local ?? remote)!;
    }
    // Origin may still hold a tip with nothing of its own (or the replaced one): the next push
    // may overwrite it, since nothing on it is lost.
    const raw = candidates.find((c) => c.name === chosen.name)?.remote?.sha;
    if (raw && raw !== tip && !(await this.git.isAncestor(raw, tip))) {
      await this.git.updateRef(replaceRef(issue), raw, `${note}: origin's ${chosen.name} holds nothing to continue`);
    }
    return { branch: chosen.name, tip, backups };
  }

  async candidates(issue: number): Promise<Candidate[]> {
    const byName = new Map<string, Candidate>();
    const entry = (name: string): Candidate => {
      let found = byName.get(name);
      if (!found) byName.set(name, (found = { name, local: undefined, remote: undefined, time: 0 }));
      return found;
    };
    for (const tip of await this.issueTips("refs/heads/", issue)) entry(short(tip.ref, "refs/heads/")).local = tip;
    for (const tip of await this.issueTips("refs/remotes/origin/", issue)) entry(short(tip.ref, "refs/remotes/origin/")).remote = tip;
    return [...byName.values()];
  }

  // The name `fresh` restarts under: the issue's branch on origin (so its PR follows), else a
  // local one, else the name from the title.
  async preferredName(issue: number, expected: string): Promise<string> {
    for (const namespace of ["refs/remotes/origin/", "refs/heads/"]) {
      const tips = await this.issueTips(namespace, issue);
      if (tips.some((t) => short(t.ref, namespace) === expected)) return expected;
      const tip = newest(tips);
      if (tip) return short(tip.ref, namespace);
    }
    return expected;
  }

  /** Branches of the issue under `namespace` ("refs/heads/" or "refs/remotes/origin/"). */
  async issueTips(namespace: string, issue: number): Promise<RefTip[]> {
    const tips = await this.git.refs(`${namespace}${this.branchPrefix}${issue}*`);
    return tips.filter((tip) => {
      const name = short(tip.ref, namespace);
      if (parseFleetBranch(name, this.branchPrefix) !== issue) return false;
      try {
        assertSafeBranchName(name);
        return true;
      } catch {
        return false;
      }
    });
  }

  async backup(issue: number, sha: string, why: string): Promise<string> {
    const ref = `refs/afk-backup/${issue}/${stamp(this.now())}-${sha.slice(0, 12)}`;
    await this.git.updateRef(ref, sha, `afk: issue ${issue}: ${why}`);
    return ref;
  }
}

/** `refs/afk-replace/<n>`: a tip on origin that `fresh` decided the next push may overwrite. */
export function replaceRef(issue: number): string {
  return `refs/afk-replace/${issue}`;
}

export function short(ref: string, namespace: string): string {
  return ref.startsWith(namespace) ? ref.slice(namespace.length) : ref;
}

export function newest(tips: RefTip[]): RefTip | undefined {
  return [...tips].sort((a, b) => b.time - a.time || a.ref.localeCompare(b.ref))[0];
}

// "20250102T030405Z": a ref-safe UTC time.
export function stamp(date: Date): string {
  return date
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replace(/[-:]/g, "");
}
