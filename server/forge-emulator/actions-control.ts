// The Actions part of the `/_forge/` control surface: repository secrets (GitHub's secrets
// API encrypts values with the repository's libsodium public key; the local forge takes them
// in plain text here, on loopback, and keeps them in its state file), job logs in plain text, and
// pausing the local runner (a run no runner picks up, for tests of what a host does then).
import type { ForgeEmulator } from "./core.js";
import { runnerOf } from "./actions-runner.js";
import { HttpError, notFound } from "./http-errors.js";
import type { Reply } from "./router.js";
import { actionsData } from "./workflows.js";

const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Sets repository secrets; a bad name or value is refused with the rule it breaks. */
export function setSecrets(forge: ForgeEmulator, secrets: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(secrets)) {
    if (!SECRET_NAME.test(name) || /^GITHUB_/i.test(name)) {
      throw new HttpError(422, `secret name ${JSON.stringify(name)}: letters, digits and _ only, not starting with a digit or GITHUB_`);
    }
    if (typeof value !== "string") throw new HttpError(422, `secret ${name}: the value must be a string`);
  }
  Object.assign(actionsData(forge).secrets, secrets);
  forge.state.changed();
}

/** The answer for an Actions control path, or null when the path is not one of them. */
export async function handleActionsControl(forge: ForgeEmulator, method: string, path: string, body: Record<string, unknown>): Promise<Reply | null> {
  const logs = /^\/_forge\/actions\/jobs\/(\d+)\/logs$/.exec(path);
  if (logs && method === "GET") {
    const text = await runnerOf(forge).log(Number(logs[1]));
    if (text === null) throw notFound();
    return { status: 200, body: text, headers: { "content-type": "text/plain; charset=utf-8" } };
  }
  if (path === "/_forge/actions/runner" && method === "POST") {
    if (typeof body.paused !== "boolean") throw new HttpError(422, 'body must be {"paused": true} or {"paused": false}');
    return { status: 200, body: runnerOf(forge).setPaused(body.paused) };
  }
  if (path === "/_forge/secrets" && method === "POST") {
    if (typeof body.name !== "string") throw new HttpError(422, 'body must be {"name": "API_KEY", "value": "..."}');
    setSecrets(forge, { [body.name]: body.value });
    return { status: 201, body: { names: Object.keys(actionsData(forge).secrets).sort() } };
  }
  if (path === "/_forge/secrets" && method === "GET") return { status: 200, body: { names: Object.keys(actionsData(forge).secrets).sort() } };
  const one = /^\/_forge\/secrets\/([A-Za-z0-9_]+)$/.exec(path);
  if (one && method === "DELETE") {
    const data = actionsData(forge);
    if (!(one[1]! in data.secrets)) throw notFound();
    delete data.secrets[one[1]!];
    forge.state.changed();
    return { status: 204 };
  }
  return null;
}
