// GitHub's page-based pagination: `per_page` (default 30, at most 100) and `page`, with an
// RFC 5988 `Link` header naming first/prev/next/last on the host the client used.
import type { RequestContext } from "./router.js";

export interface Page<T> {
  items: T[];
  headers: Record<string, string>;
}

export function pageParams(ctx: RequestContext): { perPage: number; page: number } {
  const rawPer = Number.parseInt(ctx.query.get("per_page") ?? "", 10);
  const rawPage = Number.parseInt(ctx.query.get("page") ?? "", 10);
  const perPage = Number.isFinite(rawPer) && rawPer > 0 ? Math.min(rawPer, 100) : 30;
  const page = Number.isFinite(rawPage) && rawPage > 0 ? rawPage : 1;
  return { perPage, page };
}

export function paginate<T>(ctx: RequestContext, all: readonly T[]): Page<T> {
  const { perPage, page } = pageParams(ctx);
  const items = all.slice((page - 1) * perPage, page * perPage);
  const last = Math.max(1, Math.ceil(all.length / perPage));
  return { items, headers: linkHeader(ctx, page, last) };
}

export function linkHeader(ctx: RequestContext, page: number, last: number): Record<string, string> {
  const url = (p: number): string => {
    const q = new URLSearchParams(ctx.query);
    q.set("page", String(p));
    return `<${ctx.requestBase}${ctx.rawPath}?${q.toString()}>`;
  };
  const links: string[] = [];
  if (page > 1) links.push(`${url(Math.min(page - 1, last))}; rel="prev"`);
  if (page < last) links.push(`${url(page + 1)}; rel="next"`, `${url(last)}; rel="last"`);
  if (page > 1) links.push(`${url(1)}; rel="first"`);
  return links.length > 0 ? { link: links.join(", ") } : {};
}
