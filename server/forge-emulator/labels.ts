// Repository labels. Names compare case-insensitively; creating an existing name is a 422
// `already_exists`, exactly what an "ensure label" caller has to tolerate on GitHub.
import { HttpError, notFound, validationFailed } from "./http-errors.js";
import { nullableString, optionalString, requiredString } from "./input.js";
import { actor } from "./issues.js";
import { paginate } from "./paginate.js";
import { STATE_ONLY, type Reply, type RequestContext, type Router } from "./router.js";
import type { LabelRecord } from "./state.js";

const REPO = "/repos/{owner}/{repo}";

function color(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const c = value.replace(/^#/, "").toLowerCase();
  if (!/^[0-9a-f]{6}$/.test(c)) throw validationFailed([{ resource: "Label", field: "color", code: "invalid", value }]);
  return c;
}

function labelParam(ctx: RequestContext): LabelRecord {
  const label = ctx.forge.state.label(ctx.params.name ?? "");
  if (!label) throw notFound();
  return label;
}

function listLabels(ctx: RequestContext): Reply {
  const page = paginate(ctx, ctx.forge.state.labels());
  return { status: 200, body: page.items.map((l) => ctx.forge.render.label(l)), headers: page.headers };
}

function createLabel(ctx: RequestContext): Reply {
  actor(ctx);
  const name = requiredString(ctx.body, "name", "Label");
  if (name.trim() === "") throw validationFailed([{ resource: "Label", field: "name", code: "missing_field" }]);
  const c = color(optionalString(ctx.body, "color", "Label")) ?? "ededed";
  const description = nullableString(ctx.body, "description", "Label") ?? null;
  if (ctx.forge.state.label(name)) {
    throw validationFailed([{ resource: "Label", code: "already_exists", field: "name" }]);
  }
  const label: LabelRecord = { id: ctx.forge.state.nextId(), name, color: c, description };
  ctx.forge.state.addLabel(label);
  return { status: 201, body: ctx.forge.render.label(label), headers: { location: `${ctx.forge.render.repoApi}/labels/${encodeURIComponent(name)}` } };
}

function getLabel(ctx: RequestContext): Reply {
  return { status: 200, body: ctx.forge.render.label(labelParam(ctx)) };
}

function updateLabel(ctx: RequestContext): Reply {
  actor(ctx);
  const label = labelParam(ctx);
  const newName = optionalString(ctx.body, "new_name", "Label");
  const c = color(optionalString(ctx.body, "color", "Label"));
  const description = nullableString(ctx.body, "description", "Label");
  if (newName !== undefined && newName !== label.name) {
    const clash = ctx.forge.state.label(newName);
    if (clash && clash !== label) throw validationFailed([{ resource: "Label", code: "already_exists", field: "name" }]);
    if (newName.trim() === "") throw new HttpError(422, "Validation Failed");
    ctx.forge.state.renameLabel(label, newName);
  }
  if (c !== undefined) label.color = c;
  if (description !== undefined) label.description = description;
  ctx.forge.state.changed();
  return { status: 200, body: ctx.forge.render.label(label) };
}

function deleteLabel(ctx: RequestContext): Reply {
  actor(ctx);
  ctx.forge.state.deleteLabel(labelParam(ctx));
  return { status: 204 };
}

export function registerLabelRoutes(router: Router): void {
  router
    .add("GET", `${REPO}/labels`, listLabels, STATE_ONLY)
    .add("POST", `${REPO}/labels`, createLabel)
    .add("GET", `${REPO}/labels/{name}`, getLabel, STATE_ONLY)
    .add("PATCH", `${REPO}/labels/{name}`, updateLabel)
    .add("DELETE", `${REPO}/labels/{name}`, deleteLabel);
}
