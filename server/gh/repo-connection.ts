// What a fleet holds of one repository once connected (server/host/connection.ts makes it): the
// forge and ref store, the fleet's login, the repository's settings and config, the base. A
// type only, here below the rooms that take one (the fleet, the landing) so none reaches up to the host.
import type { FleetConfig } from "../../schemas/config.js";
import type { RepoInfo } from "./forge.js";
import type { GitHubForge } from "./github-forge.js";
import type { GitRefStore } from "./gitrefs.js";
import type { GatherMemory } from "./gather.js";

export interface RepoConnection {
  repo: string;
  forge: GitHubForge;
  refs: GitRefStore;
  login: string;
  info: RepoInfo;
  config: FleetConfig;
  /** Where the config came from: the file at the base, or defaults. */
  configSource: string;
  base: string;
  /** The base tip when connected, or null when the branch does not exist. */
  baseSha: string | null;
  token: string;
  apiUrl: string;
  hostName: string;
  /** What the gathers of this connection's forge client remember between them. */
  gatherMemory: GatherMemory;
}
