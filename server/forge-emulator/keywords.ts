// Closing keywords: "Closes #12", "fixes owner/repo#3", ... in a pull request's title or
// body close those issues when the pull request merges into the default branch. Each issue
// needs its own keyword ("Closes #1, closes #2"); "Closes #1, #2" closes only #1.

const PATTERN = /(?<![\w-])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+(?:([\w.-]+\/[\w.-]+))?#(\d+)(?!\w)/gi;

/** Issue numbers in this repository that `text` says it closes. */
export function closingReferences(text: string, fullName: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(PATTERN)) {
    const repo = m[1];
    if (repo && repo.toLowerCase() !== fullName.toLowerCase()) continue;
    const n = Number(m[2]);
    if (!out.includes(n)) out.push(n);
  }
  return out;
}
