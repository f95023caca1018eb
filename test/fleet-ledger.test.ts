// The ledger end to end: a fleet on the local forge (real HTTP, real git, real worker processes)
// drains two issues, one landing and one escalated by its worker's verdict. Its ledger holds the
// facts in order (dispatch, attempts with their transcript, the verdict, the PR, the landing with
// the gated sha, the escalation, the stop with its requests); the stop writes the final report
// (files and a comment); the escalation @mentions and reaches a webhook on loopback; the timeline
// and the report are read through a real MCP client; a new host on the same state dir reads it all.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync, statSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { api, repoPath, startTestForge, tempDir } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, COMMIT_WORK, fleetHost, readyIssues } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";
import { createServer } from "../server/server.js";
import { laneDir } from "../server/lanes/index.js";

const cleanups = cleanupsAfterFile();

describe("the fleet's ledger, timeline, report and notifications", () => {
  it("records a drain's facts, reports at the stop, notifies the escalation, and serves the timeline", async () => {
    const forge = await startTestForge();
    cleanups.push(() => forge.dispose());
    const [good, hard] = (await readyIssues(forge, ["good work", "too hard"])) as [number, number];
    const reports = (await api(forge, "POST", repoPath(forge, "/issues"), { title: "fleet reports", body: "" })).body.number as number;
    const hook: Array<Record<string, unknown>> = [];
    const server = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        hook.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>);
        res.writeHead(200).end("ok");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const dir = await tempDir("afk-ledger-fleet-");
    const worker = join(dir, "worker.sh");
    await writeFile(
      worker,
      [
        "#!/bin/sh",
        "cat > /dev/null",
        `if [ "$AFK_ISSUE" = "${hard}" ]; then echo '{"verdict": "giving-up", "reason": "too hard for a script"}' > "$AFK_VERDICT_FILE"; exit 0; fi`,
        ...COMMIT_WORK,
        "",
      ].join("\n"),
    );
    const host = fleetHost(forge, dir, cleanups);
    await host.start({
      repo: forge.repo,
      worker_command: `sh ${worker}`,
      target: 2,
      auto_merge: true,
      config: {
        retry: 0,
        gate: { ci: "local", local_command: "ls work-*.txt >/dev/null" },
        landing: { strategy: "push" },
        pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 },
        notify: { mention: ["@alice"], webhook_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, report_issue: reports },
      },
    });
    const issue = async (n: number) => (await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body as { state: string; labels: Array<{ name: string }> };
    const ledger = async () => (await host.logs({ repo: forge.repo, lane: "ledger", tail_lines: 1000 })).records;
    await waitFor(
      `#${good} landed and #${hard} escalated`,
      async () => (await issue(good)).state === "closed" && (await issue(hard)).labels.some((l) => l.name === "ready-for-human"),
      {
        deadlineMs: 5 * 60_000,
        intervalMs: 250,
        explain: async () => (await ledger()).map((r) => `${String(r.event)} ${String(r.msg)}`).join("\n"),
      },
    );
    await host.stop({ repo: forge.repo, stop_workers: true });

    const records = await ledger();
    const of = (n: number) => records.filter((r) => r.issue === n).map((r) => String(r.event));
    for (const event of ["queued", "dispatch", "attempt_start", "attempt_end", "pr_opened", "landing_start", "landing"])
      assert.ok(of(good).includes(event), `#${good} has ${event}: ${of(good).join(" ")}`);
    for (const event of ["queued", "dispatch", "attempt_start", "attempt_end", "verdict", "escalation"])
      assert.ok(of(hard).includes(event), `#${hard} has ${event}: ${of(hard).join(" ")}`);
    assert.ok(
      of(good).indexOf("dispatch") < of(good).indexOf("attempt_start") && of(good).indexOf("pr_opened") < of(good).indexOf("landing"),
      of(good).join(" "),
    );
    assert.equal(of(good).filter((e) => e === "landing").length, 1);
    const start = records.find((r) => r.issue === good && r.event === "attempt_start")!.data as Record<string, unknown>;
    assert.deepEqual([start.engine, start.model, start.role], ["unknown", "unknown", "worker"]);
    assert.equal((records.find((r) => r.issue === good && r.event === "attempt_end")!.data as Record<string, unknown>).spend, "unknown");
    // The landing names the gated head: the PR's head as it merged.
    const landing = records.find((r) => r.event === "landing")!.data as Record<string, unknown>;
    const pr = (await api(forge, "GET", repoPath(forge, `/pulls/${String(landing.pr)}`))).body as { merged: boolean; head: { sha: string } };
    assert.equal(pr.merged, true);
    assert.equal(landing.gated_sha, pr.head.sha);
    const stop = records.find((r) => r.event === "stop")!.data as { requests: { counted: number } };
    assert.ok(stop.requests.counted > 0);

    // The final report, beside the ledger, owner-only, and as a comment.
    const lanes = laneDir(join(dir, "state"), ...(forge.repo.split("/") as [string, string]));
    const report = JSON.parse(readFileSync(join(lanes, "report.json"), "utf8")) as {
      reason: string;
      totals: { outcomes: Record<string, number> };
      issues: Array<{ issue: number; outcome: string; attempts: number }>;
    };
    assert.equal(statSync(join(lanes, "report.json")).mode & 0o777, 0o600);
    assert.equal(report.reason, "stop");
    assert.deepEqual(
      report.issues.map((i) => [i.issue, i.outcome, i.attempts]),
      [
        [good, "merged", 1],
        [hard, "escalated", 1],
      ],
    );
    assert.match(readFileSync(join(lanes, "report.txt"), "utf8"), /2 issue\(s\): 1 merged, 1 escalated/);
    const comments = async (n: number) =>
      ((await api(forge, "GET", repoPath(forge, `/issues/${n}/comments`))).body as Array<{ body: string }>).map((c) => c.body);
    assert.equal((await comments(reports)).filter((b) => b.includes("afk-mcp final report") && b.includes("1 merged, 1 escalated")).length, 1);
    // The escalation's own comment @mentions; the webhook got it once.
    assert.equal((await comments(hard)).filter((b) => b.includes("cc @alice")).length, 1);
    await waitFor("the webhook's escalation", async () => hook.some((h) => h.event === "escalation"), { deadlineMs: 30_000, intervalMs: 100 });
    assert.deepEqual(
      hook.filter((h) => h.event === "escalation").map((h) => h.issue),
      [hard],
    );
    assert.match(String(hook.find((h) => h.event === "escalation")!.text), new RegExp(`#${hard}: escalated`));

    // The timeline and the report through a real MCP client.
    const mcp = createServer(host);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await mcp.connect(serverSide);
    const client = new Client({ name: "test", version: "1" });
    await client.connect(clientSide);
    cleanups.push(() => client.close());
    const read = async (uri: string) => (await client.readResource({ uri })).contents as Array<{ mimeType?: string; text: string }>;
    const timeline = JSON.parse((await read(`afk://${forge.repo}/issue/${good}/timeline`))[0]!.text) as {
      outcome: string;
      phases: Array<{ phase: string; end: string | null }>;
      attempts: Array<{ transcript: { files: { stdout: string } } }>;
      gated_sha: string;
    };
    assert.equal(timeline.outcome, "merged");
    const phases = timeline.phases.map((p) => p.phase);
    for (const p of ["queued", "claimed", "worker", "ci", "landing", "merged"]) assert.ok(phases.includes(p), `phase ${p} in ${phases.join(" ")}`);
    assert.ok(timeline.phases.every((p) => p.end !== null));
    assert.equal(timeline.gated_sha, pr.head.sha);
    assert.equal(timeline.attempts.length, 1);
    assert.ok(statSync(timeline.attempts[0]!.transcript.files.stdout).isFile(), "the transcript reference names the worker's output file");
    const [text, json] = await read(`afk://${forge.repo}/report`);
    assert.match(text!.text, /2 issue\(s\): 1 merged, 1 escalated/);
    assert.equal((JSON.parse(json!.text) as { totals: { issues: number } }).totals.issues, 2);
    assert.match((await read(`afk://${forge.repo}/issue/${good}`))[0]!.text, new RegExp(`timeline: afk://${forge.repo}/issue/${good}/timeline`));

    // A new host on the same state dir (a daemon restart) reads the same ledger.
    const again = fleetHost(forge, dir, cleanups);
    const later = await again.report({ repo: forge.repo });
    assert.deepEqual(
      later.issues.map((i) => [i.issue, i.outcome]),
      [
        [good, "merged"],
        [hard, "escalated"],
      ],
    );
    assert.equal(later.totals.stops, 1);
    assert.ok(!readFileSync(join(lanes, "ledger.jsonl"), "utf8").includes(forge.token), "no token in the ledger");
  });
});
