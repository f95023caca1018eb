// The board as an MCP App: the `ui://` resource status links, bounded, with no control in it;
// then in Debian's chromium (playwright-core), a minimal host page frames it while the ext-apps
// AppBridge (the package's host side, run here in Node) speaks to it over postMessage, relayed
// through the page, on behalf of a real MCP client of afk-mcp on a local-forge fleet. The frame
// shows the fleet's issues, re-renders itself when an issue lands, asks only read-only things,
// and the same HTML in a frame that runs no script still shows the board.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import type { Frame, Page } from "playwright-core";
import { Client, type JSONRPCMessage, type Transport } from "@modelcontextprotocol/client";
import { AppBridge } from "@modelcontextprotocol/ext-apps/app-bridge";
import { cleanupsAfterFile } from "./support/fleet-fixtures.js";
import { boardScene, chromiumMissing, HOSTILE, launchChromium } from "./support/board-scene.js";
import { createServer } from "../server/server.js";
import { APP_MIME_TYPE, appPage, MAX_APP_BYTES } from "../server/dashboard/app.js";
import type { DashboardData, FleetView } from "../server/dashboard/data.js";
import { BOARD_APP_URI } from "../server/tools/resources.js";
import { renderStatus } from "../server/tools/status.js";
import type { StatusResult } from "../server/host/api.js";

const cleanups = cleanupsAfterFile();
/** Anything a person could press, type in or follow. */
const CONTROLS = "button, form, input, select, textarea, a[href], [onclick], [contenteditable]";

/** Two transports joined back to back (the v2 SDK ships none): a client's and a server's. */
function linkedPair(): [Transport, Transport] {
  const make = (): Transport & { peer?: Transport } => ({
    async start() {},
    async send(message: JSONRPCMessage) {
      const peer = this.peer!;
      queueMicrotask(() => peer.onmessage?.(message));
    },
    async close() {
      this.onclose?.();
    },
  });
  const a = make();
  const b = make();
  a.peer = b;
  b.peer = a;
  return [a, b];
}

/**
 * The host page's side of the bridge: what AppBridge sends goes to the frame's window by
 * postMessage, what the frame posts to its parent comes back to AppBridge (and is recorded).
 */
function frameTransport(page: Page, frameId: string, heard: JSONRPCMessage[]): Transport {
  const transport: Transport = {
    async start() {
      await page.exposeFunction(`__toHost_${frameId}`, (message: JSONRPCMessage) => {
        heard.push(message);
        transport.onmessage?.(message);
      });
      await page.evaluate((id) => {
        const frame = document.getElementById(id) as HTMLIFrameElement;
        const relay = (window as unknown as Record<string, (m: unknown) => Promise<void>>)[`__toHost_${id}`]!;
        window.addEventListener("message", (e) => void (e.source === frame.contentWindow && relay(e.data)));
      }, frameId);
    },
    async send(message) {
      await page.evaluate(([id, m]) => (document.getElementById(id as string) as HTMLIFrameElement).contentWindow!.postMessage(m, "*"), [
        frameId,
        message,
      ] as const);
    },
    async close() {
      transport.onclose?.();
    },
  };
  return transport;
}

/** The CSP a host builds from the resource's `_meta.ui.csp` (no domains: inline only, no network), put first in the head. */
function hosted(html: string, csp: { connectDomains?: string[]; resourceDomains?: string[] }): string {
  const res = (csp.resourceDomains ?? []).join(" ");
  const policy = `default-src 'none'; script-src 'unsafe-inline' ${res}; style-src 'unsafe-inline' ${res}; img-src data: ${res}; connect-src ${(csp.connectDomains ?? []).join(" ") || "'none'"}`;
  return html.replace("<head>", `<head><meta http-equiv="Content-Security-Policy" content="${policy}">`);
}

async function frameOf(page: Page, id: string): Promise<Frame> {
  const frame = await (await page.locator(`#${id}`).elementHandle())!.contentFrame();
  assert.ok(frame, `#${id} has a frame`);
  return frame;
}

/** A fleet view as big as the dashboard's limits let one be, every string hostile and long. */
function hugeFleet(n: number): FleetView {
  const long = `${HOSTILE}${"x".repeat(400)}`;
  const worker = { issue: 7, state: "running", attempt: 1, started_at: long, pid: 1, stage: long, quiet_seconds: 3 };
  const status = { registration: null, workers: Array.from({ length: 64 }, () => worker) } as unknown as StatusResult;
  const phase = { phase: "worker", start: "2026-01-01T00:00:00Z", end: null, duration_ms: null, attempt: 1 };
  return {
    repo: `owner/repo-${n}`,
    status,
    report: {
      totals: { issues: 200, outcomes: { merged: 200 }, attempts: 1, worker_ms: 1, spend: "unknown", faults: 0, pauses: 0, breaker_trips: 0 },
      requests: { counted: 1, not_modified: 0 },
      issues: Array.from({ length: 200 }, (_, i) => ({ issue: i + 1, outcome: "merged", attempts: 1, time_ms: 1, spend: "unknown", pr: 1, merge_sha: long })),
      issues_omitted: 0,
    } as unknown as FleetView["report"],
    timelines: Array.from({ length: 30 }, (_, i) => ({
      issue: i + 1,
      start: phase.start,
      end: null,
      outcome: long,
      phases: [phase],
    })) as unknown as FleetView["timelines"],
    ledger: Array.from({ length: 200 }, () => ({ ts: long, event: "note", issue: 7, msg: long })),
    spendToday: "unknown",
    error: long,
  };
}

describe("the board as an MCP App", () => {
  it("is one bounded page with no control, its own strict CSP, and every outside string escaped", () => {
    const data: DashboardData = { at: "2026-01-01T00:00:00.000Z", fleets: Array.from({ length: 16 }, (_, i) => hugeFleet(i)) };
    const html = appPage(data, BOARD_APP_URI, "0.0.0");
    assert.ok(Buffer.byteLength(html) <= MAX_APP_BYTES, `${Buffer.byteLength(html)} bytes`);
    assert.ok(html.endsWith("</body></html>"));
    assert.match(html, /<main id="live"/);
    assert.match(html, /<section class="fleet" data-repo="owner\/repo-0">/);
    const one = appPage({ at: data.at, fleets: [hugeFleet(0)] }, BOARD_APP_URI, "0.0.0");
    for (const page of [html, one]) {
      assert.doesNotMatch(page, /<(button|form|input|select|textarea|a |iframe|img)\b/i, "no control, no link, no load");
      assert.equal(page.match(/<script>/g)?.length, 1, "the one script of its own");
      assert.ok(!page.includes(HOSTILE), "hostile text only escaped");
    }
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(one)?.[1] ?? "";
    assert.match(csp, /default-src 'none'; script-src 'sha256-[\w+/=]+'; style-src-elem 'sha256-[\w+/=]+';/);
    assert.doesNotMatch(csp, /https?:|script-src[^;]*unsafe/);
    assert.ok(Buffer.byteLength(one) < Buffer.byteLength(html), "one fleet is smaller than sixteen");
    assert.match(appPage({ at: data.at, fleets: [] }, BOARD_APP_URI, "0.0.0"), /no fleet is running on this host/);
  });

  it(
    "linked by status, rendered in chromium through AppBridge: the fleet's issues, live after a landing, read-only, and readable with scripts off",
    { skip: chromiumMissing() },
    async () => {
      const { forge, host, dir, go, good, hard } = await boardScene(cleanups, "afk-board-app-");

      // A real client of afk-mcp: what it lists, reads and gets back.
      const mcp = createServer(host);
      const [clientSide, serverSide] = linkedPair();
      await mcp.connect(serverSide);
      const client = new Client({ name: "afk-app-host", version: "0.0.0" });
      await client.connect(clientSide);
      cleanups.push(() => client.close());
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.filter((t) => t._meta).map((t) => [t.name, (t._meta as { ui?: { resourceUri?: string } }).ui?.resourceUri]),
        [["status", BOARD_APP_URI]],
        "only status links the board: no tool that changes anything opens it",
      );
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.equal(
        (resourceTemplates.find((t) => t.name === "board")?._meta as { ui?: { resourceUri?: string } } | undefined)?.ui?.resourceUri,
        BOARD_APP_URI,
        "0.0.0",
      );
      const listed = (await client.listResources()).resources.find((r) => r.uri === BOARD_APP_URI, "0.0.0");
      assert.equal(listed?.mimeType, APP_MIME_TYPE);
      const read = async () => {
        const [content, ...rest] = (await client.readResource({ uri: BOARD_APP_URI })).contents as Array<{
          mimeType?: string;
          text: string;
          _meta?: Record<string, unknown>;
        }>;
        assert.equal(rest.length, 0);
        assert.equal(content!.mimeType, APP_MIME_TYPE);
        return content!;
      };
      const app = await read();
      assert.deepEqual(app._meta, { ui: { csp: {}, prefersBorder: true } }, "no domain to reach");
      // A client that renders no apps gets the answer it always got: text and structured content, nothing of the app.
      const answer = await client.callTool({ name: "status", arguments: { repo: forge.repo } });
      assert.deepEqual(Object.keys(answer).sort(), ["content", "structuredContent"]);
      assert.deepEqual(answer.content, [{ type: "text", text: renderStatus(answer.structuredContent as StatusResult) }]);
      assert.ok(!JSON.stringify(answer).includes("ui://"));

      // The host: a page with the app's frame (scripts on, no same origin) and a second with scripts off.
      const context = await launchChromium(dir, cleanups);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      page.on("console", (m) => void (/Content Security Policy|Refused to/i.test(m.text()) && errors.push(m.text())));
      await page.setContent(
        `<!doctype html><title>host</title><iframe id="app" sandbox="allow-scripts" style="width:1100px;height:700px"></iframe><iframe id="still" sandbox="" style="width:1100px;height:700px"></iframe><iframe id="calls" sandbox="allow-scripts"></iframe>`,
      );
      const heard: JSONRPCMessage[] = [];
      const bridge = new AppBridge(client, { name: "afk-test-host", version: "0.0.0" }, { serverTools: {}, serverResources: {} });
      const initialized = new Promise<void>((resolve) => bridge.addEventListener("initialized", () => resolve()));
      await bridge.connect(frameTransport(page, "app", heard));
      await page.evaluate((html) => void ((document.getElementById("app") as HTMLIFrameElement).srcdoc = html), hosted(app.text, {}));
      await initialized;
      assert.equal(bridge.getAppVersion()?.name, "afk-mcp board");
      await bridge.sendToolInput({ arguments: { repo: forge.repo } });
      await bridge.sendToolResult(answer as Parameters<AppBridge["sendToolResult"]>[0]);

      const frame = await frameOf(page, "app");
      const fleet = frame.locator(`section.fleet[data-repo="${forge.repo}"]`);
      await fleet.waitFor();
      assert.match((await fleet.locator("table.workers").textContent()) ?? "", new RegExp(`#${good}`));
      assert.ok((await fleet.locator(`.gantt .row[data-issue="${hard}"] .bar.p-escalated`).count()) > 0, "the escalated issue's timeline");
      assert.ok(((await fleet.locator("table.ledger").textContent()) ?? "").includes("<script>window.__pwned=1</script>"), "the verdict as text");
      assert.equal(await frame.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
      assert.equal(
        await frame.locator("#answer").textContent(),
        (answer.content as Array<{ text: string }>)[0]!.text,
        "the status answer from the tool result",
      );
      await frame.locator("#conn", { hasText: "live" }).waitFor();

      // The landing, without a reload: the frame re-reads the board through the host.
      await frame.evaluate(() => ((window as unknown as { __same: boolean }).__same = true));
      await writeFile(go, "");
      await frame.waitForFunction((n) => [...document.querySelectorAll("table.report tr")].some((tr) => tr.textContent?.startsWith(`#${n}merged`)), good, {
        timeout: 4 * 60_000,
        polling: 250,
      });
      assert.equal(await frame.evaluate(() => (window as unknown as { __same?: boolean }).__same), true, "the same document");

      // Read-only: nothing to press, and the frame asked the host for nothing but reads of itself and status.
      assert.equal(await frame.locator(CONTROLS).count(), 0);
      const asked = heard.filter((m): m is JSONRPCMessage & { method: string; params?: Record<string, unknown> } => "method" in m);
      const methods = new Set(asked.map((m) => m.method));
      assert.ok(methods.has("resources/read"), [...methods].join(" "));
      for (const m of methods)
        assert.ok(["ui/initialize", "ui/notifications/initialized", "ui/notifications/size-changed", "resources/read", "tools/call"].includes(m), m);
      assert.deepEqual([...new Set(asked.filter((m) => m.method === "resources/read").map((m) => m.params?.uri))], [BOARD_APP_URI]);
      assert.deepEqual(
        asked.filter((m) => m.method === "tools/call").filter((m) => m.params?.name !== "status"),
        [],
      );

      // Scripts off: the server-rendered board as it is now, and nothing claims to be live.
      const still = await read();
      await page.evaluate(() => {
        const frame = document.getElementById("still") as HTMLIFrameElement;
        const w = window as unknown as { __fromStill: number };
        w.__fromStill = 0;
        window.addEventListener("message", (e) => void (e.source === frame.contentWindow && w.__fromStill++));
      });
      await page.evaluate((html) => void ((document.getElementById("still") as HTMLIFrameElement).srcdoc = html), hosted(still.text, {}));
      const snapshot = await frameOf(page, "still");
      const frozen = snapshot.locator(`section.fleet[data-repo="${forge.repo}"]`);
      await frozen.waitFor();
      assert.match((await frozen.locator("table.report").textContent()) ?? "", new RegExp(`#${good}merged`));
      assert.equal(await snapshot.locator("#conn").textContent(), "snapshot");
      assert.equal(await page.evaluate(() => (window as unknown as { __fromStill: number }).__fromStill), 0, "its script never ran: no word to the host");
      assert.equal(await snapshot.locator("#asked").isVisible(), false);
      assert.equal(await snapshot.locator(CONTROLS).count(), 0);

      // A host that relays tool calls but no reads: the frame re-asks status for the workers, nothing else.
      const heardCalls: JSONRPCMessage[] = [];
      const callsOnly = new AppBridge(client, { name: "afk-test-host", version: "0.0.0" }, { serverTools: {} });
      const ready = new Promise<void>((resolve) => callsOnly.addEventListener("initialized", () => resolve()));
      await callsOnly.connect(frameTransport(page, "calls", heardCalls));
      await page.evaluate((html) => void ((document.getElementById("calls") as HTMLIFrameElement).srcdoc = html), hosted(still.text, {}));
      await ready;
      await callsOnly.sendToolInput({ arguments: { repo: forge.repo } });
      const calls = await frameOf(page, "calls");
      await calls.locator("#answer", { hasText: "no live workers" }).waitFor({ timeout: 60_000 });
      const called = heardCalls.filter(
        (m): m is JSONRPCMessage & { method: string; params?: Record<string, unknown> } => "method" in m && m.method === "tools/call",
      );
      assert.deepEqual(
        [...new Set(called.map((m) => JSON.stringify(m.params)))],
        [JSON.stringify({ name: "status", arguments: { repo: forge.repo, scope: "worker" } })],
      );
      assert.ok(!heardCalls.some((m) => "method" in m && m.method === "resources/read"), "no read the host does not relay");
      assert.deepEqual(errors, []);
      await bridge.teardownResource({});
      await callsOnly.teardownResource({});
    },
  );
});
