// The board as an MCP App (io.modelcontextprotocol/ui): one `ui://` resource of type
// text/html;profile=mcp-app, which `status` and the board resource link, and which hosts that
// render apps show in a sandboxed frame beside the answer. Its HTML is the dashboard's own
// rendering of the same data (html.ts), so a frame that runs no scripts still shows the board.
// Where the host runs scripts and relays reads, a small inline script speaks the host bridge
// (JSON-RPC over postMessage): `ui/initialize`, then the status answer from
// `ui/notifications/tool-result`, and a fresh board every few seconds by `resources/read` of this
// same resource (or, where the host relays tool calls only, `status` scope "worker"). It reads
// and never writes: no button, form or link; stopping or taking over stays a tool call the user
// approves. No network of its own: the resource's `_meta.ui.csp` names no domain, and the page's
// own CSP lets only its one script and one style (by hash) run.
import { createHash } from "node:crypto";
import type { Host } from "../host/api.js";
import { DashboardCache, type DashboardData, type FleetView, type LedgerFilter } from "./data.js";
import { esc, fragment, STYLE } from "./html.js";

/** The MIME type the MCP Apps extension gives an app's HTML. */
export const APP_MIME_TYPE = "text/html;profile=mcp-app";
/** An app page never exceeds this: the rows per fleet shrink (TRIMS), then the fleets. */
export const MAX_APP_BYTES = 256 * 1024;
/** How often a live board re-reads itself through the host. */
const POLL_MS = 5000;
/** How long a read serves again (a frame polls; several frames share one read). */
const CACHE_MS = 2000;
const ALL: LedgerFilter = { repo: null, issue: null, event: null };
const EMPTY = "no fleet is running on this host: project_start one, or ask status for a repository's plan";

interface Trim {
  workers: number;
  timelines: number;
  reportRows: number;
  ledger: number;
}

/** Rows per fleet, tried in order until the page fits MAX_APP_BYTES. */
const TRIMS: readonly Trim[] = [
  { workers: 32, timelines: 20, reportRows: 60, ledger: 40 },
  { workers: 16, timelines: 10, reportRows: 20, ledger: 10 },
  { workers: 8, timelines: 0, reportRows: 0, ledger: 0 },
];

function trimmed(f: FleetView, t: Trim): FleetView {
  const r = f.report;
  return {
    ...f,
    status: f.status && { ...f.status, workers: f.status.workers.slice(0, t.workers) },
    timelines: f.timelines.slice(0, t.timelines),
    report: r && { ...r, issues: r.issues.slice(0, t.reportRows), issues_omitted: r.issues_omitted + Math.max(0, r.issues.length - t.reportRows) },
    ledger: t.ledger > 0 ? f.ledger.slice(-t.ledger) : [],
  };
}

// The bridge, by hand (the ext-apps App class is 500 kB with its dependencies): requests out with
// ids, answers matched back, notifications in. Only `resources/read` of this page and `status`.
const SCRIPT = `(function(){var root=document.documentElement,uri=root.getAttribute("data-uri"),conn=document.getElementById("conn");
if(window.parent===window)return;var seq=0,waiting={},host=null,args={},busy=false,timer=0;
function post(m){m.jsonrpc="2.0";window.parent.postMessage(m,"*")}
function ask(method,params){return new Promise(function(ok,no){var id=++seq;waiting[id]=[ok,no];post({id:id,method:method,params:params})})}
function size(){post({method:"ui/notifications/size-changed",params:{height:Math.ceil(root.scrollHeight)}})}
function answer(r){var text=((r&&r.content)||[]).filter(function(c){return c.type==="text"}).map(function(c){return c.text}).join("\\n");if(!text)return;document.getElementById("answer").textContent=text.slice(0,20000);document.getElementById("asked").hidden=false;size()}
function swap(html){var t=document.createElement("template");t.innerHTML=html;var m=t.content.querySelector("main#live");if(m){document.getElementById("live").replaceWith(m);size()}}
function refresh(){if(busy||!host)return;var read=host.serverResources?ask("resources/read",{uri:uri}).then(function(r){var c=r&&r.contents&&r.contents[0];if(c&&typeof c.text==="string")swap(c.text)}):host.serverTools&&args.repo?ask("tools/call",{name:"status",arguments:{repo:args.repo,scope:"worker"}}).then(answer):null;if(!read)return;busy=true;
read.then(function(){conn.textContent="live"},function(){conn.textContent="not live: the host refused a read"}).then(function(){busy=false})}
addEventListener("message",function(e){if(e.source!==window.parent)return;var m=e.data;if(!m||m.jsonrpc!=="2.0")return;
if(m.method===undefined){var w=waiting[m.id];if(w){delete waiting[m.id];if(m.error)w[1](m.error);else w[0](m.result)}return}
if(m.method==="ui/notifications/tool-input")args=(m.params&&m.params.arguments)||{};else if(m.method==="ui/notifications/tool-result"){answer(m.params);refresh()}
else if(m.method==="ui/resource-teardown"){clearInterval(timer);post({id:m.id,result:{}})}else if(m.method==="ping")post({id:m.id,result:{}});
else if(m.id!==undefined)post({id:m.id,error:{code:-32601,message:"Method not found"}})});
ask("ui/initialize",{appInfo:{name:"afk-mcp board",version:root.getAttribute("data-version")},appCapabilities:{},protocolVersion:"2026-01-26"}).then(function(r){host=(r&&r.hostCapabilities)||{};post({method:"ui/notifications/initialized",params:{}});
conn.textContent=host.serverResources||host.serverTools?"live":"snapshot: the host relays no reads";size();refresh();timer=setInterval(refresh,${POLL_MS})},function(){conn.textContent="snapshot"})})();`;

const APP_STYLE = `${STYLE}
body{margin:.5rem 1rem}pre{white-space:pre-wrap;font-size:12px;max-height:24rem;overflow:auto}`;

const hash = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;
/** Exactly this page's script and style; no load from anywhere, no form, no base. */
const CSP = `default-src 'none'; script-src ${hash(SCRIPT)}; style-src-elem ${hash(APP_STYLE)}; style-src-attr 'unsafe-inline'; base-uri 'none'; form-action 'none'`;

function render(data: DashboardData, uri: string, version: string): string {
  return `<!doctype html><html lang="en" data-uri="${esc(uri, 200)}" data-version="${esc(version, 40)}"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${CSP}"><meta name="viewport" content="width=device-width,initial-scale=1"><title>afk-mcp board</title><style>${APP_STYLE}</style></head>
<body><span id="conn">snapshot</span><h1>afk-mcp board</h1><details id="asked" open hidden><summary>status</summary><pre id="answer"></pre></details>
${fragment(data, ALL, EMPTY)}
<script>${SCRIPT}</script></body></html>`;
}

/** The app page for this data, its rows cut until it fits MAX_APP_BYTES; `version`: afk-mcp's, told to the host. */
export function appPage(data: DashboardData, uri: string, version: string): string {
  let fleets = data.fleets;
  for (;;) {
    for (const t of TRIMS) {
      const html = render({ at: data.at, fleets: fleets.map((f) => trimmed(f, t)) }, uri, version);
      if (Buffer.byteLength(html) <= MAX_APP_BYTES || (t === TRIMS.at(-1) && fleets.length <= 1)) return html;
    }
    fleets = fleets.slice(0, Math.ceil(fleets.length / 2));
  }
}

/** What the app's resource and its read carry in `_meta`: no domain to reach, a border please. */
const APP_RESOURCE_META = { ui: { csp: {}, prefersBorder: true } };

/** The app's resource as the MCP server serves it: its metadata and a read, fresh or a moment old. */
export function boardApp(host: Host, uri: string, version: string) {
  const cache = new DashboardCache(host, CACHE_MS);
  return {
    metadata: {
      title: "Fleet board (MCP App)",
      description: "The dashboard's board of every fleet on this host as an MCP App: read-only, live where the host relays reads, readable with no scripts.",
      mimeType: APP_MIME_TYPE,
      _meta: APP_RESOURCE_META,
    },
    read: async () => ({ contents: [{ uri, mimeType: APP_MIME_TYPE, text: appPage(await cache.get(ALL), uri, version), _meta: APP_RESOURCE_META }] }),
  };
}
