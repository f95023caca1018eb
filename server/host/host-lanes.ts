// The lanes of every repository a host runs, and every token a project of each ran with: none
// may reach a log, so each repository's lanes redact all of its tokens, the first and the later.
import { stateDir } from "../paths.js";
import { repoKey, parseSlug } from "../gh/slug.js";
import { laneDir, openLanes, type LaneWriter } from "../lanes/index.js";

export class HostLanes {
  private readonly lanes = new Map<string, LaneWriter>();
  private readonly tokens = new Map<string, string[]>();

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly observe: (repo: string, lane: string, line: string) => void,
  ) {}

  /** The lanes of a repository; every token a project of it ran with is redacted from them. */
  of(repo: string, token: string): LaneWriter {
    const key = repoKey(repo);
    let secrets = this.tokens.get(key);
    if (!secrets) this.tokens.set(key, (secrets = []));
    if (!secrets.includes(token)) secrets.push(token);
    let lanes = this.lanes.get(key);
    if (!lanes) {
      const slug = parseSlug(repo);
      const held = secrets;
      lanes = openLanes({
        dir: laneDir(stateDir(this.env), slug.owner, slug.name),
        secrets: () => held,
        onRecord: (lane, line) => this.observe(repo, lane, line),
      });
      this.lanes.set(key, lanes);
    }
    return lanes;
  }

  /** Every token a project on this host ran with. */
  secrets(): string[] {
    return [...this.tokens.values()].flat();
  }

  all(): IterableIterator<LaneWriter> {
    return this.lanes.values();
  }
}
