// The dashboard as server-rendered HTML: one page whose <main> the inline script swaps for a fresh
// fragment when /events says a board changed. Every string from issues, the ledger or a status is
// outside text (a title, a worker's message): it goes through `esc`, cut to a bound, never raw.
import type { Timeline } from "../host/api.js";
import { LIMITS, type DashboardData, type FleetView, type LedgerFilter } from "./data.js";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** HTML-escapes outside text, cut to `max` characters first (so a huge message stays bounded). */
export function esc(value: unknown, max = 300): string {
  let text = typeof value === "string" ? value : value === null || value === undefined ? "" : typeof value === "object" ? JSON.stringify(value) : String(value);
  if (text.length > max) text = `${text.slice(0, max)}…`;
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function spendText(spend: unknown): string {
  if (!spend || spend === "unknown" || typeof spend !== "object") return "unknown";
  const s = spend as { usd?: number; tokens?: Record<string, number> };
  const parts = [
    typeof s.usd === "number" ? `$${s.usd.toFixed(2)}` : "",
    s.tokens ? `${s.tokens.total ?? Object.values(s.tokens).reduce((a, b) => a + b, 0)} tokens` : "",
  ];
  return parts.filter(Boolean).join(", ") || "unknown";
}

function duration(ms: number | null): string {
  if (ms === null) return "…";
  const s = Math.round(ms / 1000);
  return s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`;
}

function fleetState(f: FleetView): string {
  const s = f.status;
  if (!s) return "unknown";
  if (!s.registration) return "not running";
  if (s.births?.paused) return `paused: ${esc(s.births.reason ?? "no reason given")}${s.births.until ? ` (until ${esc(s.births.until)})` : ""}`;
  return "running";
}

function spendToday(f: FleetView): string {
  const t = f.spendToday;
  if (t === "unknown") return "unknown";
  const parts = [t.usd !== null ? `$${t.usd.toFixed(2)}` : "", t.tokens !== null ? `${t.tokens} tokens` : ""].filter(Boolean).join(", ");
  return `${t.partial ? "at least " : ""}${esc(parts)}`;
}

function workers(f: FleetView): string {
  const rows = (f.status?.workers ?? []).slice(0, LIMITS.workers);
  if (rows.length === 0) return `<p class="quiet">no worker in flight</p>`;
  return `<table class="workers"><tr><th>issue</th><th>state</th><th>attempt</th><th>started</th><th>pid</th><th>doing</th><th>quiet</th></tr>${rows
    .map(
      (w) =>
        `<tr><td>#${esc(w.issue)}</td><td>${esc(w.state, 60)}</td><td>${esc(w.attempt)}</td><td>${esc(w.started_at, 40)}</td><td>${esc(w.pid ?? "")}</td>` +
        `<td>${esc(w.stage, 160)}</td><td>${w.quiet_seconds == null ? "" : `${esc(w.quiet_seconds)} s`}</td></tr>`,
    )
    .join("")}</table>`;
}

const PHASE_CLASS = new Set(["queued", "claimed", "worker", "reviewer", "ci", "review", "landing", "merged", "escalated", "closed_done", "released"]);

/** The Gantt-like chart: one row per issue, one CSS bar per phase on a shared time axis. */
export function gantt(timelines: readonly Timeline[], now: Date): string {
  const dated = timelines.filter((t) => t.start !== null);
  if (dated.length === 0) return `<p class="quiet">no timeline yet</p>`;
  const t0 = Math.min(...dated.map((t) => Date.parse(t.start!)));
  const t1 = Math.max(now.getTime(), ...dated.map((t) => (t.end ? Date.parse(t.end) : now.getTime())));
  const span = Math.max(1, t1 - t0);
  const pct = (ms: number) => ((100 * (ms - t0)) / span).toFixed(2);
  const rows = dated.map((t) => {
    const bars = t.phases.map((p) => {
      const start = Date.parse(p.start);
      const end = p.end ? Date.parse(p.end) : now.getTime();
      const width = Math.max(0.4, (100 * (end - start)) / span).toFixed(2);
      const kind = PHASE_CLASS.has(p.phase) ? p.phase : "other";
      const title = `${p.phase}${p.attempt ? ` (attempt ${p.attempt})` : ""}: ${p.start} → ${p.end ?? "now"}, ${duration(p.duration_ms)}${p.spend ? `, ${spendText(p.spend)}` : ""}`;
      return `<span class="bar p-${kind}" style="left:${pct(start)}%;width:${width}%" title="${esc(title)}"></span>`;
    });
    return `<div class="row" data-issue="${esc(t.issue)}"><span class="label">#${esc(t.issue)} <small>${esc(t.outcome, 20)}</small></span><span class="track">${bars.join("")}</span></div>`;
  });
  const legend = [...PHASE_CLASS].map((p) => `<span class="key"><span class="swatch p-${p}"></span>${p.replace("_", " ")}</span>`).join(" ");
  return `<div class="gantt">${rows.join("")}<div class="axis"><span>${esc(new Date(t0).toISOString())}</span><span>${esc(new Date(t1).toISOString())}</span></div></div><p class="legend">${legend}</p>`;
}

function report(f: FleetView): string {
  const r = f.report;
  if (!r) return `<p class="quiet">no report</p>`;
  const t = r.totals;
  const outcomes = Object.entries(t.outcomes)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k.replace("_", " ")}`)
    .join(", ");
  const rows = r.issues
    .slice(0, LIMITS.reportRows)
    .map(
      (i) =>
        `<tr class="o-${esc(i.outcome, 20)}"><td>#${esc(i.issue)}</td><td>${esc(i.outcome, 20)}</td><td>${esc(i.attempts)}</td><td>${duration(i.time_ms)}</td><td>${esc(spendText(i.spend))}</td><td>${i.pr ? `PR #${esc(i.pr)}` : ""}</td><td><code>${esc((i.merge_sha ?? "").slice(0, 12))}</code></td></tr>`,
    );
  const more = r.issues.length - rows.length + r.issues_omitted;
  return `<p class="totals">${esc(t.issues)} issue(s): ${esc(outcomes || "none")}; ${esc(t.attempts)} attempt(s), ${duration(t.worker_ms)} of worker time, spend ${esc(spendText(t.spend))}; ${esc(t.faults)} fault(s), ${esc(t.pauses)} pause(s), ${esc(t.breaker_trips)} breaker trip(s); GitHub requests ${esc(r.requests.counted)} counted, ${esc(r.requests.not_modified)} not modified</p>
<table class="report"><tr><th>issue</th><th>outcome</th><th>attempts</th><th>time</th><th>spend</th><th>PR</th><th>merge</th></tr>${rows.join("")}</table>${more > 0 ? `<p class="quiet">… and ${more} more issue(s)</p>` : ""}`;
}

/** A verdict's or a pause's reason, which the record keeps in its data. */
const reasonOf = (r: Record<string, unknown>): string | null => {
  const reason = (r.data as { reason?: unknown } | undefined)?.reason;
  return typeof reason === "string" ? reason : null;
};

function ledger(f: FleetView, filter: LedgerFilter): string {
  const rows = [...f.ledger]
    .reverse()
    .map(
      (r) =>
        `<tr class="ev-${esc(r.event, 30)}"><td>${esc(r.ts, 30)}</td><td>${esc(r.event, 30)}</td><td>${r.issue !== undefined ? `#${esc(r.issue)}` : ""}</td><td>${esc(r.msg)}${reasonOf(r) ? ` — ${esc(reasonOf(r))}` : ""}</td></tr>`,
    );
  const what = [filter.issue ? `issue #${filter.issue}` : "", filter.event ? `event ${esc(filter.event, 30)}` : ""].filter(Boolean).join(", ");
  return `<p class="quiet">newest first${what ? `, ${what}` : ""}; ${rows.length} record(s)</p><table class="ledger"><tr><th>at</th><th>event</th><th>issue</th><th>message</th></tr>${rows.join("")}</table>`;
}

function fleet(f: FleetView, filter: LedgerFilter, now: Date): string {
  const s = f.status;
  const reg = s?.registration;
  return `<section class="fleet" data-repo="${esc(f.repo, 200)}">
<h2>${esc(f.repo, 200)}</h2>
<dl class="facts"><dt>state</dt><dd class="state">${fleetState(f)}</dd><dt>target</dt><dd>${reg ? esc(reg.target) : "unknown"}</dd><dt>merges</dt><dd>${reg ? esc(reg.merges, 20) : "unknown"}</dd><dt>budget</dt><dd class="budget">${esc(s?.spend?.budget ?? "unknown", 200)}</dd><dt>spend today</dt><dd class="spend-today">${spendToday(f)}</dd><dt>last tick</dt><dd>${esc(s?.last_tick ?? "none")}</dd><dt>next tick</dt><dd>${esc(s?.next_tick ?? "none", 40)}</dd></dl>
${f.error ? `<p class="error">${esc(f.error, 1000)}</p>` : ""}
<h3>Workers in flight</h3>${workers(f)}
<h3>Timelines</h3>${gantt(f.timelines, now)}
<h3>Report</h3>${report(f)}
<h3>Ledger</h3>${ledger(f, filter)}
</section>`;
}

const NO_FLEET = "no fleet is running on this host (add ?repo=owner/name to read a repository's ledger)";

/** The live part of the page: what /fragment answers and the script swaps in. `empty`: what it says with no fleet. */
export function fragment(data: DashboardData, filter: LedgerFilter, empty = NO_FLEET): string {
  const now = new Date(data.at);
  const body = data.fleets.length === 0 ? `<p class="quiet">${esc(empty)}</p>` : data.fleets.map((f) => fleet(f, filter, now)).join("\n");
  return `<main id="live" data-at="${esc(data.at, 40)}"><p class="quiet">as of ${esc(data.at, 40)}</p>${body}</main>`;
}

export const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:1rem 2rem;color:#222;background:#fafafa}h1{font-size:1.3rem}h2{margin-top:1.5rem;border-bottom:1px solid #ccc}h3{font-size:1rem;margin:1rem 0 .3rem}
table{border-collapse:collapse;font-size:12px}td,th{padding:2px 8px;border-bottom:1px solid #e4e4e4;text-align:left;vertical-align:top}.quiet{color:#777}.error{color:#a00}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0}dt{color:#666}dd{margin:0}form{margin:.5rem 0}
.gantt{max-width:1100px}.row{display:flex;align-items:center;height:18px}.label{width:9rem;font-size:12px;white-space:nowrap;overflow:hidden}.track{position:relative;flex:1;height:12px;background:#eee}
.bar{position:absolute;top:0;height:12px}.axis{display:flex;justify-content:space-between;margin-left:9rem;font-size:11px;color:#777}.key{margin-right:8px;font-size:11px}.swatch{display:inline-block;width:10px;height:10px;margin-right:3px}
.p-queued{background:#c9c9c9}.p-claimed{background:#9fb7d9}.p-worker{background:#3b73c4}.p-reviewer{background:#7b5cc4}.p-ci{background:#e0a030}.p-review{background:#c4a05c}.p-landing{background:#39a86b}.p-merged{background:#17703f}.p-escalated{background:#c43b3b}.p-closed_done{background:#5c9c9c}.p-released{background:#999}.p-other{background:#555}
#conn{float:right;font-size:12px;color:#777}`;

// Waits for /events; on a change fetches /fragment with the page's own query (the filter) and
// swaps <main>. EventSource reconnects by itself; the dot says whether the stream is up.
const SCRIPT = `(function(){var c=document.getElementById("conn");var es=new EventSource("events");var busy=false,again=false;
function load(){if(busy){again=true;return}busy=true;fetch("fragment"+location.search,{credentials:"same-origin"}).then(function(r){if(!r.ok)throw new Error(r.status);return r.text()}).then(function(html){var t=document.createElement("template");t.innerHTML=html;var m=t.content.querySelector("main");if(m)document.getElementById("live").replaceWith(m)}).catch(function(){}).finally(function(){busy=false;if(again){again=false;load()}})}
es.addEventListener("change",load);es.onopen=function(){c.textContent="live";load()};es.onerror=function(){c.textContent="reconnecting…"}})();`;

/** The whole page. `nonce` lets the CSP allow exactly this page's script and style. */
export function page(data: DashboardData, filter: LedgerFilter, nonce: string): string {
  const value = (v: string | number | null) => (v === null ? "" : esc(v, 200));
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>afk-mcp dashboard</title><style nonce="${nonce}">${STYLE}</style></head>
<body><span id="conn">connecting…</span><h1>afk-mcp dashboard</h1>
<form method="get" action="/"><label>repository <input name="repo" value="${value(filter.repo)}" size="24" placeholder="owner/name"></label> <label>ledger: issue <input name="issue" value="${value(filter.issue)}" size="6" inputmode="numeric"></label> <label>event <input name="event" value="${value(filter.event)}" size="14" placeholder="landing"></label> <button>filter</button></form>
${fragment(data, filter)}
<script nonce="${nonce}">${SCRIPT}</script></body></html>`;
}
