// The caller and the repository: `GET /user`, `GET /users/{username}`, `GET /rate_limit`,
// `GET /repos/{owner}/{repo}`.
import { BOT_LOGIN } from "./actions-types.js";
import { HttpError, notFound } from "./http-errors.js";
import { actor } from "./issues.js";
import { rateLimitHeaders } from "./ratelimit.js";
import type { Reply, RequestContext, Router } from "./router.js";

function me(ctx: RequestContext): Reply {
  // A workflow run's token is an installation token: GitHub refuses it on /user.
  if (ctx.user?.login === BOT_LOGIN) throw new HttpError(403, "Resource not accessible by integration");
  return { status: 200, body: ctx.forge.render.privateUser(actor(ctx)) };
}

function userByName(ctx: RequestContext): Reply {
  const login = ctx.params.username ?? "";
  if (!ctx.forge.state.user(login) && login.toLowerCase() !== ctx.forge.urls.owner.toLowerCase()) throw notFound();
  return { status: 200, body: ctx.forge.render.publicUser(login) };
}

function rateLimit(ctx: RequestContext): Reply {
  const b = ctx.forge.rateLimits.peek(ctx.user?.login ?? "");
  const core = { limit: b.limit, remaining: b.remaining, reset: b.reset, used: b.used };
  const other = (limit: number) => ({ limit, remaining: limit, reset: b.reset, used: 0 });
  return {
    status: 200,
    body: {
      resources: {
        core,
        search: other(30),
        graphql: other(ctx.user ? 5000 : 0),
        integration_manifest: other(5000),
        code_search: other(10),
      },
      rate: core,
    },
    headers: rateLimitHeaders(b),
  };
}

function repository(ctx: RequestContext): Reply {
  let open = 0;
  for (const i of ctx.forge.state.issues()) if (i.state === "open") open++;
  return { status: 200, body: ctx.forge.render.repository(ctx.user, open) };
}

export function registerRepoRoutes(router: Router): void {
  router
    .add("GET", "/user", me)
    .add("GET", "/users/{username}", userByName)
    .add("GET", "/rate_limit", rateLimit)
    .add("GET", "/repos/{owner}/{repo}", repository);
}
