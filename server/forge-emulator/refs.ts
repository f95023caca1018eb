// The git references API (`/git/refs`, `/git/ref`, `/git/matching-refs`) over the bare
// repository. Creation is create-if-absent (422 "Reference already exists"), which is what
// makes a claim ref a lock; updates and deletes are atomic in git but, as on GitHub, carry no
// expected old value from the client.
import { recordActivity } from "./activity.js";
import { ZERO_SHA } from "./bare-git.js";
import { HttpError, notFound, unprocessable } from "./http-errors.js";
import { optionalBoolean, requiredString } from "./input.js";
import { actor } from "./issues.js";
import { syncPulls } from "./pull-sync.js";
import type { Reply, RequestContext, Router } from "./router.js";
import { assertSafeRefName } from "../gh/refstore.js";

const REPO = "/repos/{owner}/{repo}";
/** Namespaces GitHub keeps for itself ("deny updating a hidden ref"). */
const READ_ONLY = ["refs/pull/", "refs/__gh__/"];
const CAS_RETRIES = 5;

function fullRef(param: string | undefined): string {
  const ref = (param ?? "").replace(/^\/+/, "");
  return ref.startsWith("refs/") ? ref : `refs/${ref}`;
}

function checkWritable(ref: string): void {
  try {
    assertSafeRefName(ref);
  } catch {
    throw unprocessable("Reference name is invalid");
  }
  if (READ_ONLY.some((p) => ref.startsWith(p))) throw unprocessable("Reference update denied: this namespace is read-only");
}

async function objectExists(ctx: RequestContext, sha: string): Promise<boolean> {
  if (!/^[0-9a-f]{40}$/.test(sha)) return false;
  const r = await ctx.forge.git.run(["cat-file", "-e", sha], { okCodes: [1, 128] });
  return r.code === 0;
}

/** After a branch moved through the API: let open pull requests follow (heads, merges). */
async function afterRefWrite(ctx: RequestContext, ref: string): Promise<void> {
  ctx.memo.invalidate();
  if (!ref.startsWith("refs/heads/")) return;
  const by = ctx.user?.login ?? ctx.forge.urls.owner;
  await ctx.forge.writeLock.run(() => syncPulls(ctx.forge, by));
}

async function readOne(ctx: RequestContext, ref: string): Promise<{ sha: string; type: string } | null> {
  // for-each-ref with the full name matches that ref (and refs below it): filter exactly.
  const found = (await ctx.forge.git.listRefs(ref)).find((r) => r.ref === ref);
  return found ? { sha: found.sha, type: found.type } : null;
}

async function matching(ctx: RequestContext, prefix: string): Promise<Reply["body"][]> {
  const dir = prefix.slice(0, prefix.lastIndexOf("/") + 1);
  const refs = await ctx.forge.git.listRefs(dir);
  return refs.filter((r) => r.ref.startsWith(prefix)).map((r) => ctx.forge.render.gitRef(r.ref, r.sha, r.type));
}

async function listMatching(ctx: RequestContext): Promise<Reply> {
  return { status: 200, body: await matching(ctx, fullRef(ctx.params.ref)) };
}

async function getRef(ctx: RequestContext): Promise<Reply> {
  const ref = fullRef(ctx.params.ref);
  const one = await readOne(ctx, ref);
  if (!one) throw notFound();
  return { status: 200, body: ctx.forge.render.gitRef(ref, one.sha, one.type) };
}

/** The legacy `GET /git/refs/{ref}`: one ref when it matches exactly, else all with that prefix. */
async function getRefsLegacy(ctx: RequestContext): Promise<Reply> {
  const ref = fullRef(ctx.params.ref);
  const one = await readOne(ctx, ref);
  if (one) return { status: 200, body: ctx.forge.render.gitRef(ref, one.sha, one.type) };
  const list = await matching(ctx, ref.endsWith("/") ? ref : `${ref}/`);
  if (list.length === 0) throw notFound();
  return { status: 200, body: list };
}

async function createRef(ctx: RequestContext): Promise<Reply> {
  const user = actor(ctx);
  const ref = requiredString(ctx.body, "ref", "Reference");
  const sha = requiredString(ctx.body, "sha", "Reference");
  if (!ref.startsWith("refs/") || ref.split("/").length < 3) {
    throw unprocessable("Reference name must contain at least three slash-separated components.");
  }
  checkWritable(ref);
  if (!(await objectExists(ctx, sha))) throw unprocessable("Object does not exist");
  if (!(await ctx.forge.git.casRef(ref, sha, ZERO_SHA, "create via API"))) {
    if (await readOne(ctx, ref)) throw unprocessable("Reference already exists");
    throw unprocessable("Reference cannot be created: a reference with a conflicting name exists");
  }
  await recordActivity(ctx.forge, user, ref, ZERO_SHA, sha);
  await afterRefWrite(ctx, ref);
  const one = await readOne(ctx, ref);
  const body = ctx.forge.render.gitRef(ref, sha, one?.type ?? "commit");
  return { status: 201, body, headers: { location: `${ctx.forge.render.repoApi}/git/${ref}` } };
}

async function updateRef(ctx: RequestContext): Promise<Reply> {
  const user = actor(ctx);
  const ref = fullRef(ctx.params.ref);
  checkWritable(ref);
  const sha = requiredString(ctx.body, "sha", "Reference");
  const force = optionalBoolean(ctx.body, "force", "Reference") ?? false;
  if (!(await objectExists(ctx, sha))) throw unprocessable("Object does not exist");
  for (let attempt = 0; attempt < CAS_RETRIES; attempt++) {
    const current = await readOne(ctx, ref);
    if (!current) throw unprocessable("Reference does not exist");
    if (!force && current.sha !== sha && !(await ctx.forge.git.isAncestor(current.sha, sha))) {
      throw unprocessable("Update is not a fast forward");
    }
    if (await ctx.forge.git.casRef(ref, sha, current.sha, "update via API")) {
      await recordActivity(ctx.forge, user, ref, current.sha, sha);
      await afterRefWrite(ctx, ref);
      const now = await readOne(ctx, ref);
      return { status: 200, body: ctx.forge.render.gitRef(ref, sha, now?.type ?? current.type) };
    }
  }
  throw new HttpError(409, "Reference update failed: the reference kept moving; try again");
}

async function deleteRef(ctx: RequestContext): Promise<Reply> {
  const user = actor(ctx);
  const ref = fullRef(ctx.params.ref);
  checkWritable(ref);
  if (ref === `refs/heads/${ctx.forge.defaultBranch}`) throw unprocessable("Cannot delete the default branch");
  for (let attempt = 0; attempt < CAS_RETRIES; attempt++) {
    const current = await readOne(ctx, ref);
    if (!current) throw unprocessable("Reference does not exist");
    if (await ctx.forge.git.casDeleteRef(ref, current.sha)) {
      await recordActivity(ctx.forge, user, ref, current.sha, ZERO_SHA);
      await afterRefWrite(ctx, ref);
      return { status: 204 };
    }
  }
  throw new HttpError(409, "Reference delete failed: the reference kept moving; try again");
}

export function registerRefRoutes(router: Router): void {
  router
    .add("GET", `${REPO}/git/matching-refs/{ref}`, listMatching)
    .add("GET", `${REPO}/git/ref/{ref}`, getRef)
    .add("GET", `${REPO}/git/refs/{ref}`, getRefsLegacy)
    .add("POST", `${REPO}/git/refs`, createRef)
    .add("PATCH", `${REPO}/git/refs/{ref}`, updateRef)
    .add("DELETE", `${REPO}/git/refs/{ref}`, deleteRef);
}
