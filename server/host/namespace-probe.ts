// Can the fleet write its claim refs? An org ruleset may forbid refs/afk/*; then claims fall
// back to a namespace under refs/heads/ (with a warning: those are branches, and pushes there
// may trigger "on: push" CI). The probe writes one ref and deletes it, leaving nothing behind
// (a host killed in between leaves it to the garbage sweep).
import { GitError } from "../gh/errors.js";
import type { RefStore } from "../gh/refstore.js";
import { formatProbeMessage } from "../state/garbage.js";

export interface NamespaceProbe {
  namespace: string;
  writable: boolean;
  fallback: boolean;
  detail: string;
}

export const FALLBACK_NAMESPACE = "refs/heads/afk";

async function tryWrite(refs: RefStore, namespace: string, instance: string): Promise<{ ok: boolean; detail: string }> {
  const ref = `${namespace}/probe/${instance}`;
  try {
    // Timed, so that any host can tell a probe left by a host killed mid-probe (state/garbage.ts).
    const created = await refs.create(ref, formatProbeMessage(instance, new Date()));
    if (!created.won) {
      // A leftover probe of ours from a crash: it proves the namespace is writable; clean it.
      if (created.current) await refs.remove(ref, created.current);
      return { ok: true, detail: "writable" };
    }
    await refs.remove(ref, created.sha);
    return { ok: true, detail: "writable" };
  } catch (error) {
    if (error instanceof GitError) return { ok: false, detail: error.message };
    throw error;
  }
}

export async function probeNamespace(refs: RefStore, namespace: string, instance: string): Promise<NamespaceProbe> {
  const first = await tryWrite(refs, namespace, instance);
  if (first.ok) return { namespace, writable: true, fallback: false, detail: first.detail };
  if (namespace.startsWith("refs/heads/")) return { namespace, writable: false, fallback: false, detail: first.detail };
  const second = await tryWrite(refs, FALLBACK_NAMESPACE, instance);
  return second.ok
    ? { namespace: FALLBACK_NAMESPACE, writable: true, fallback: true, detail: first.detail }
    : { namespace, writable: false, fallback: false, detail: first.detail };
}
