// takeover on one repository's access: list the instances that hold claims or beat a heartbeat
// there, or take a dead (or, confirmed, a live) instance's claims over into this host's instance.
import type { TakeoverInput, TakeoverResult } from "./api.js";
import { parseNamespace } from "../state/claims.js";
import type { RepoAccess } from "./repo-access.js";
import { takeoverResult } from "./views.js";

/** `daemon`: this host is the machine's daemon, so its own instance is marked as such. */
export async function takeoverOn(access: RepoAccess, input: TakeoverInput, daemon: boolean): Promise<TakeoverResult> {
  const { lease, conn, namespace: probed } = access;
  const namespace = probed?.namespace ?? conn.config.namespace;
  const entries = await conn.refs.list(`${namespace}/`);
  const { claims, heartbeats } = parseNamespace(namespace, entries);
  const rows = lease.instances(claims, heartbeats).map((r) => ({
    instance: r.instance,
    host: r.host,
    claims: r.claims,
    claim_count: r.claims.length,
    heartbeat_at: r.heartbeatAt,
    heartbeat_age_seconds: r.heartbeatAgeSeconds,
    fresh: r.fresh,
    is_me: r.isMe,
    this_daemon: r.isMe && daemon,
  }));
  if (input.list || input.instance === undefined) {
    return {
      action: "list",
      instances: rows,
      from: null,
      taken: [],
      lost: [],
      message:
        rows.length === 0
          ? "no fleet instance has claims or a heartbeat in this repository"
          : `${rows.length} instance(s); take one with takeover {instance, confirm?}`,
    };
  }
  const outcome = await lease.takeover(input.instance, claims, heartbeats, input.confirm ?? false);
  if (outcome.action === "taken" && outcome.taken.length > 0) await lease.heartbeat(true);
  return takeoverResult(outcome, rows);
}
