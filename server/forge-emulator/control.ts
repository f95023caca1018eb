// The forge's own control surface under `/_forge/` (not part of GitHub's API): fault
// injection, one-shot faults, request accounting, and adding users at runtime. It needs no
// token (the forge listens on loopback only), costs no rate limit and is not accounted.
import { handleActionsControl } from "./actions-control.js";
import { isValidLogin, type ForgeEmulator } from "./core.js";
import { ONCE_KINDS, type FaultSpec, type OnceKind } from "./faults.js";
import { HttpError, notFound } from "./http-errors.js";
import type { Reply } from "./router.js";

export async function handleControl(forge: ForgeEmulator, method: string, path: string, body: Record<string, unknown>): Promise<Reply> {
  const key = `${method} ${path.replace(/\/+$/, "")}`;
  const actions = await handleActionsControl(forge, method, path.replace(/\/+$/, ""), body);
  if (actions) return actions;
  switch (key) {
    case "GET /_forge/faults":
      return { status: 200, body: forge.faults.list() };
    case "POST /_forge/faults": {
      const spec: FaultSpec = {};
      if (body.route !== undefined) {
        if (typeof body.route !== "string") throw new HttpError(422, "route must be a string");
        spec.route = body.route;
      }
      for (const k of ["error_rate", "secondary_rate_limit", "latency_ms", "seed"] as const) {
        if (body[k] !== undefined) spec[k] = body[k] as number;
      }
      forge.faults.add(spec);
      return { status: 201, body: forge.faults.list() };
    }
    case "DELETE /_forge/faults":
      forge.faults.clear();
      return { status: 204 };
    case "POST /_forge/once": {
      const kind = body.kind;
      if (typeof kind !== "string" || !(ONCE_KINDS as readonly string[]).includes(kind)) {
        throw new HttpError(422, `kind must be one of ${ONCE_KINDS.join(", ")}`);
      }
      forge.faults.armOnce(kind as OnceKind);
      return { status: 201, body: forge.faults.list() };
    }
    case "GET /_forge/accounting":
      return { status: 200, body: forge.accounting.snapshot() };
    case "POST /_forge/accounting/reset":
      forge.accounting.reset();
      return { status: 200, body: forge.accounting.snapshot() };
    case "POST /_forge/users": {
      if (!isValidLogin(body.login)) throw new HttpError(422, "login must be a GitHub-style login (letters, digits, single hyphens)");
      const scopes = body.scopes;
      if (scopes !== undefined && scopes !== null && !(Array.isArray(scopes) && scopes.every((s) => typeof s === "string" && /^[a-z:_]+$/.test(s)))) {
        throw new HttpError(422, 'scopes must be a list of classic OAuth scope names (e.g. ["repo", "workflow"]), or null for a fine-grained token');
      }
      if (body.push !== undefined && typeof body.push !== "boolean")
        throw new HttpError(422, "push must be true (write access, the default) or false (a read-only collaborator)");
      const existed = forge.state.user(body.login) !== undefined;
      const user = forge.addUser(body.login, false);
      if (scopes !== undefined) {
        if (scopes === null) delete user.scopes;
        else user.scopes = [...(scopes as string[])];
      }
      if (body.push === false) user.push = false;
      else if (body.push === true) delete user.push;
      // The record is shared with the server's other repositories: each persists it.
      for (const f of [forge, ...forge.siblings]) f.state.changed();
      return { status: existed ? 200 : 201, body: { login: user.login, token: user.token, scopes: user.scopes ?? null, push: forge.canPush(user) } };
    }
    case "GET /_forge/users":
      return { status: 200, body: forge.state.users().map((u) => ({ login: u.login, admin: u.admin, scopes: u.scopes ?? null, push: forge.canPush(u) })) };
    default:
      throw notFound();
  }
}
