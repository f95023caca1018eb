// The dashboard's first paint on 1,000 issues (server/dashboard/): a ledger of 1,000 issues' lives
// (bench/ledger.ts), served over real HTTP on loopback; p50/p99 of the page (`/`, the HTML) and
// of its live part (`/fragment`, what a board change fetches). "Cold": no page listens on /events,
// so each request reads the ledger (report, timelines, ledger tail, spend today) and renders, as
// the first paint after a board change does; "warm": a page listens, and the data read once since
// the last board change serves every request, which only renders.
//
//   node dist/bench/run.js --only dashboard
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createDashboard } from "../server/dashboard/serve.js";
import { FleetHost } from "../server/host/host.js";
import { createRedactor, laneDir, Ledger } from "../server/lanes/index.js";
import { quantile } from "./fleet-harness.js";
import { life } from "./ledger.js";
import { round, type Figure, type Section } from "./section.js";

const ISSUES = 1000;
const REPO = "afk/bench";

async function serve(host: FleetHost, maxAgeMs: number) {
  let allowed: string[] = [];
  const dashboard = createDashboard(host, { token: "bench-token", allowedHosts: () => allowed, maxAgeMs });
  const http = createServer((req, res) => dashboard.handle(req, res));
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const port = (http.address() as AddressInfo).port;
  allowed = [`127.0.0.1:${port}`];
  return {
    base: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => (dashboard.close(), http.close(() => resolve()))),
  };
}

async function timed(url: string, n: number): Promise<{ ms: number[]; bytes: number }> {
  const ms: number[] = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await fetch(url, { headers: { authorization: "Bearer bench-token" } });
    const body = await res.text();
    ms.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${body.slice(0, 200)}`);
    bytes = Buffer.byteLength(body);
  }
  return { ms, bytes };
}

export const dashboardSection: Section = {
  name: "dashboard",
  summary: "the web dashboard's first paint on 1,000 issues: p50/p99 of the page's HTML and of its live fragment, cold (ledger read) and warm (cached)",
  async run(ctx) {
    const state = await ctx.tempDir("afk-bench-dashboard-");
    let t = Date.parse("2026-01-01T00:00:00Z");
    const ledger = new Ledger({
      dir: laneDir(state, "afk", "bench"),
      redactor: createRedactor(() => []),
      clock: () => new Date((t += 1000)),
      maxBytes: 1024 * 1024 * 1024,
    });
    for (let n = 1; n <= ISSUES; n++) for (const entry of life(n)) ledger.record(entry, "bench-instance");
    ledger.close();
    const host = new FleetHost({ env: { AFK_STATE_DIR: state, PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: state }, cwd: state, clock: () => new Date(t) });
    ctx.defer(() => host.close());
    const figures: Figure[] = [];
    const notes: string[] = [];
    const server = await serve(host, 60 * 60_000);
    ctx.defer(server.close);
    const listening = new AbortController();
    ctx.defer(() => listening.abort());
    for (const [kind, n] of [
      ["cold", 30],
      ["warm", 200],
    ] as const) {
      if (kind === "warm") {
        const events = await fetch(`${server.base}/events`, { headers: { authorization: "Bearer bench-token" }, signal: listening.signal });
        if (events.status !== 200) throw new Error(`/events: ${events.status}`);
      }
      await timed(`${server.base}/?repo=${REPO}`, 3);
      ctx.log(`dashboard: ${kind}`);
      for (const [path, what] of [
        ["/", "page (HTML)"],
        ["/fragment", "live fragment"],
      ] as const) {
        const { ms, bytes } = await timed(`${server.base}${path}?repo=${REPO}`, n);
        const p99 = quantile(ms, 0.99)!;
        const key = `${kind}_${path === "/" ? "page" : "fragment"}`;
        figures.push({ key: `${key}_p50_ms`, label: `${what}, ${kind}, p50`, value: round(quantile(ms, 0.5)!, 1), unit: "ms" });
        figures.push({ key: `${key}_p99_ms`, label: `${what}, ${kind}, p99`, value: round(p99, 1), unit: "ms", goal: "<= 200", ok: p99 <= 200 });
        if (path === "/") figures.push({ key: `${kind}_page_kib`, label: `page size, ${kind}`, value: round(bytes / 1024, 0), unit: "KiB" });
      }
    }
    listening.abort();
    await server.close();
    notes.push(`${ISSUES} issues, ${ISSUES * life(1).length} ledger records; the page lists 200 report rows, 30 timelines and the newest 200 ledger records`);
    return { figures, notes };
  },
};
