// The web dashboard in a real browser: Debian's chromium, driven by playwright-core, against a
// fleet on the local forge (real HTTP, real git, scripted workers). The page loads through the
// token link (a cookie, then a redirect), shows the fleet and its worker in flight, renders a
// worker's hostile verdict as text, and shows a landing without a reload (server-sent events).
// A missing or wrong token and a foreign Host header are refused.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { request } from "node:http";
import { copyFileSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDir } from "./support/forge-fixtures.js";
import { cleanupsAfterFile } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";
import { boardScene, chromiumMissing, HOSTILE, launchChromium } from "./support/board-scene.js";
import { BIN } from "./support/paths.js";
import { serveHttp } from "../server/http.js";
import { esc } from "../server/dashboard/html.js";
import { parseFilter } from "../server/dashboard/serve.js";

const cleanups = cleanupsAfterFile();

/** A GET with a Host header of our choosing (fetch does not let us set one). */
function getWithHost(port: number, path: string, host: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { ...headers, host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once("error", reject);
    req.end();
  });
}

describe("the web dashboard", () => {
  it("escapes outside text and reads only well-formed filters", () => {
    assert.equal(esc(HOSTILE), "&lt;script&gt;window.__pwned=1&lt;/script&gt;&lt;img src=x onerror=&quot;window.__pwned=2&quot;&gt;");
    assert.equal(esc("x".repeat(500), 10), `${"x".repeat(10)}…`);
    assert.deepEqual(parseFilter(new URLSearchParams("issue=12&event=landing")), { repo: null, issue: 12, event: "landing" });
    for (const bad of ["issue=-1", "issue=1e3", "event=<b>", "repo=a/b/c"]) assert.equal(typeof parseFilter(new URLSearchParams(bad)), "string", bad);
  });

  it("afk-mcp dashboard serves the page alone on 127.0.0.1 behind its token link, and no MCP endpoint", async () => {
    const dir = await tempDir("afk-dashboard-cli-");
    const child = spawn(process.execPath, [BIN, "dashboard", "--port", "0"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, AFK_STATE_DIR: join(dir, "state") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let stdout = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    cleanups.push(async () => void (child.exitCode === null && child.kill("SIGKILL")));
    const link = await waitFor("the token link on stderr", () => /dashboard at (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/.exec(stderr)?.[1], {
      deadlineMs: 60_000,
      intervalMs: 50,
      explain: () => stderr,
    });
    const base = link.replace(/\?token=.*/, "");
    assert.equal((await fetch(base)).status, 401);
    const login = await fetch(link, { redirect: "manual" });
    assert.equal(login.status, 303);
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
    const home = await fetch(base, { headers: { cookie } });
    assert.equal(home.status, 200);
    assert.match(await home.text(), /no fleet is running on this host/);
    assert.equal((await fetch(`${base}mcp`, { method: "POST", headers: { cookie } })).status, 404);
    child.kill("SIGTERM");
    assert.equal(await exited, 0, stderr);
    assert.equal(stdout, "", "nothing on stdout");
  });

  it(
    "shows a fleet live in chromium: its worker, a hostile verdict as text, a landing without a reload; refuses a missing or wrong token and a foreign Host",
    { skip: chromiumMissing() },
    async () => {
      const { forge, host, dir, go, good, hard } = await boardScene(cleanups, "afk-dashboard-");
      const serving = await serveHttp(host, 0, {});
      cleanups.push(() => serving.close());
      const base = serving.dashboardUrl;
      const port = Number(new URL(base).port);

      // Refusals: no token, a wrong token link, a wrong bearer, a wrong cookie, a foreign Host (with the right token).
      assert.equal((await fetch(base)).status, 401);
      assert.equal((await fetch(`${base}?token=nope`, { redirect: "manual" })).status, 401);
      assert.equal((await fetch(`${base}fragment`, { headers: { authorization: "Bearer nope" } })).status, 401);
      assert.equal((await fetch(`${base}events`, { headers: { cookie: "afk_dashboard=nope" } })).status, 401);
      assert.equal(await getWithHost(port, "/", `evil.example:${port}`, { authorization: `Bearer ${serving.token}` }), 403);
      assert.equal(await getWithHost(port, `/?token=${serving.token}`, `evil.example:${port}`), 403);
      assert.equal(await getWithHost(port, "/", `localhost:${port}`, { authorization: `Bearer ${serving.token}` }), 200);
      const link = await fetch(`${base}?token=${serving.token}&issue=${good}`, { redirect: "manual" });
      assert.equal(link.status, 303);
      assert.equal(link.headers.get("location"), `/?issue=${good}`);
      assert.match(link.headers.get("set-cookie") ?? "", /^afk_dashboard=[\w-]+; HttpOnly; SameSite=Strict; Path=\/$/);
      assert.ok(!(link.headers.get("set-cookie") ?? "").includes(serving.token), "the cookie holds no token");

      const context = await launchChromium(dir, cleanups);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(`${base}?token=${serving.token}`);
      assert.equal(page.url(), base, "the token link redirects to / (the token leaves the address bar)");
      const cookie = (await context.cookies()).find((c) => c.name === "afk_dashboard");
      assert.ok(cookie && cookie.httpOnly && cookie.sameSite === "Strict", JSON.stringify(cookie));
      const fleet = page.locator(`section.fleet[data-repo="${forge.repo}"]`);
      await fleet.waitFor();
      assert.equal(await fleet.locator("h2").textContent(), forge.repo);
      assert.equal(await fleet.locator("dd.state").textContent(), "running");
      assert.equal(await fleet.locator("dd.budget").textContent(), "none set", "no budget is configured for this fleet");
      assert.match((await fleet.locator("table.workers").textContent()) ?? "", new RegExp(`#${good}`));
      await page.locator("#conn", { hasText: "live" }).waitFor();
      // The hostile verdict is in the ledger as text; nothing of it ran.
      assert.ok(((await fleet.locator("table.ledger").textContent()) ?? "").includes("<script>window.__pwned=1</script>"));
      assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
      assert.equal(await page.locator("table.ledger script, table.ledger img").count(), 0);
      assert.ok((await fleet.locator(`.gantt .row[data-issue="${hard}"] .bar.p-escalated`).count()) > 0, "the escalated issue's timeline has its bar");

      // The landing, without a reload: mark this document, let the worker commit, watch the report.
      await page.evaluate(() => ((window as unknown as { __same: boolean }).__same = true));
      await writeFile(go, "");
      await page.waitForFunction((n) => [...document.querySelectorAll("table.report tr")].some((tr) => tr.textContent?.startsWith(`#${n}merged`)), good, {
        timeout: 4 * 60_000,
        polling: 200,
      });
      assert.equal(await page.evaluate(() => (window as unknown as { __same?: boolean }).__same), true, "the same document: no reload");
      await page.locator(`.gantt .row[data-issue="${good}"] .bar.p-merged`).waitFor();
      assert.match((await fleet.locator("table.ledger").textContent()) ?? "", new RegExp(`#${good}: landed PR #\\d+`));
      assert.deepEqual(errors, []);

      // The filter: only the good issue's landing records.
      await page.goto(`${base}?issue=${good}&event=landing`);
      const rows = await page.locator("table.ledger tr.ev-landing").count();
      assert.equal(rows, 1);
      assert.equal(await page.locator("table.ledger tr:not(:first-child):not(.ev-landing)").count(), 0);
      const shot = join(dir, "dashboard.png");
      await page.goto(base);
      await fleet.waitFor();
      await page.screenshot({ path: shot, fullPage: true });
      assert.equal(readFileSync(shot).subarray(1, 4).toString(), "PNG");
      if (process.env.AFK_DASHBOARD_SCREENSHOT) copyFileSync(shot, process.env.AFK_DASHBOARD_SCREENSHOT);
    },
  );
});
