// Status of a host that runs two fleets, as a user asks it from a directory with no origin: every
// registration on a line (text and structure alike), a call that must name one repository told
// which there are, and each worker's stage, last line and quiet time read from what the real
// local worker printed (a plain line; an agent CLI's stream-json tool call carrying a token).
// An in-process host on the local forge: the behaviour is the host's (the daemon serves the same host).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { api, startTestForge, tempDir } from "./support/forge-fixtures.js";
import { COMMIT_WORK, PUSH_LANDING, READY, cleanupsAfterFile, fleetHost, laneText } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";
import { renderStatus } from "../server/tools/status.js";
import type { FleetHost } from "../server/host/host.js";
import type { StatusResult } from "../server/host/api.js";

const cleanups = cleanupsAfterFile();
const OTHER = "afk/other";
const TOKEN = `ghp_${"x".repeat(36)}`;

/** A worker that prints `lines`, waits for `release` to exist, then commits its work. */
async function worker(dir: string, name: string, lines: string[], release: string): Promise<string> {
  const script = join(dir, `${name}.sh`);
  const waits = `while [ ! -e "${release}" ]; do sleep 0.2; done`;
  await writeFile(script, ["#!/bin/sh", "cat > /dev/null", ...lines, waits, ...COMMIT_WORK, ""].join("\n"));
  return `sh ${script}`;
}

function startInput(repo: string, command: string): Parameters<FleetHost["start"]>[0] {
  return {
    repo,
    worker_command: command,
    target: 1,
    auto_merge: true,
    config: PUSH_LANDING,
  };
}

async function readyIssue(forge: { repo: string } & Parameters<typeof api>[0], repo: string): Promise<number> {
  await api(forge, "POST", `/repos/${repo}/labels`, { name: READY, color: "0e8a16" });
  const r = await api(forge, "POST", `/repos/${repo}/issues`, { title: `work in ${repo}`, body: "", labels: [READY] });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.number as number;
}

describe("status of a host running two fleets", () => {
  it("without a repository: every registration on a line; what each worker is doing; a call that must name one is told which", async () => {
    const forge = await startTestForge({ repos: [OTHER] });
    cleanups.push(() => forge.dispose());
    const dir = await tempDir("afk-overview-");
    const nowhere = await tempDir("afk-nogit-");
    const release = join(dir, "release");
    const host = fleetHost(forge, dir, cleanups, {}, { cwd: nowhere, timeScale: 0.2 });
    cleanups.push(() => host.stop({ repo: OTHER, stop_workers: true }).catch(() => undefined));
    const a = await readyIssue(forge, forge.repo);
    const b = await readyIssue(forge, OTHER);
    const plain = await worker(dir, "plain", ["echo cloning", "echo 'stage: compiling widgets'"], release);
    const toolCall = JSON.stringify({
      type: "assistant",
      message: {
        content: [
          { type: "text", text: "Running the tests" },
          { type: "tool_use", name: "Bash", input: { command: `npm test --token ${TOKEN}` } },
        ],
      },
    });
    const agent = await worker(dir, "agent", [`echo '${toolCall}'`], release);
    await host.start(startInput(forge.repo, plain));
    await host.start(startInput(OTHER, agent));

    const explain = async () => `${await laneText(host, forge.repo, "supervisor")}\n${await laneText(host, OTHER, "supervisor")}`;
    const doing = (repo: string, stage: string) =>
      waitFor(
        `${repo}'s worker at ${stage}`,
        async () => {
          const s = await host.status({ repo, scope: "worker" });
          return s.workers[0]?.stage === stage ? s : false;
        },
        { deadlineMs: 60_000, explain },
      );
    // A plain worker: its last line is its stage.
    const plainStatus = await doing(forge.repo, "stage: compiling widgets");
    const w = plainStatus.workers[0]!;
    assert.equal(w.issue, a);
    assert.equal(w.last_line, "stage: compiling widgets");
    assert.equal(typeof w.quiet_seconds, "number");
    assert.ok(w.quiet_seconds! >= 0);
    const plainText = renderStatus(plainStatus);
    assert.match(plainText, new RegExp(`^#${a}  running  pid \\d+  attempt 1  since \\S+\\n    doing: stage: compiling widgets \\(quiet \\d+ s\\)$`, "m"));
    assert.doesNotMatch(plainText, /last line:/, "a last line that is the stage is said once");
    // An agent CLI's stream: the tool it runs is its stage, its words the last line, the token redacted.
    const agentStatus = await doing(OTHER, "Bash: npm test --token [redacted]");
    assert.equal(agentStatus.workers[0]!.issue, b);
    assert.equal(agentStatus.workers[0]!.last_line, "Running the tests");
    const agentText = renderStatus(agentStatus);
    assert.match(agentText, /\n {4}doing: Bash: npm test --token \[redacted\] \(quiet \d+ s\)\n {4}last line: Running the tests/);
    assert.ok(!JSON.stringify(agentStatus).includes(TOKEN) && !agentText.includes(TOKEN), "the token is in neither the structure nor the text");

    // No origin, two projects: status answers for every registration, one a line.
    const rowsOf = (s: StatusResult) => Object.fromEntries(s.registrations.map((r) => [r.repo, r]));
    const overview = await waitFor(
      "both fleets ticked with their worker in flight",
      async () => {
        const s = await host.status({});
        return s.registrations.length === 2 && s.registrations.every((r) => r.in_flight === 1 && r.needs_human === 0) ? s : false;
      },
      { deadlineMs: 60_000, explain },
    );
    assert.equal(overview.scope, "project");
    assert.equal(overview.registration, null);
    assert.equal(overview.plan, null);
    for (const repo of [forge.repo, OTHER]) {
      assert.deepEqual(
        { state: rowsOf(overview)[repo]!.state, target: rowsOf(overview)[repo]!.target, workers: rowsOf(overview)[repo]!.workers },
        { state: "running", target: 1, workers: 1 },
      );
      assert.equal(rowsOf(overview)[repo]!.landed_today, 0);
    }
    const text = renderStatus(overview);
    for (const repo of [forge.repo, OTHER])
      assert.match(
        text,
        new RegExp(`^registration ${repo}: running, target 1 \\(0 slot\\(s\\) free\\), 1 worker\\(s\\), 1 in flight, 0 landed today, 0 needing a human, `, "m"),
      );
    assert.match(text, /pass repo \("owner\/name"\) for one registration's plan, workers or issue$/);

    // A call that must name one repository says which there are.
    const names = new RegExp(`pass repo \\("owner/name"\\): ${nowhere} has no GitHub "origin" remote, and this host runs ${forge.repo}, ${OTHER}`);
    await assert.rejects(host.resize({ target: 2 }), names);
    await assert.rejects(host.status({ scope: "worker" }), names);
    await assert.rejects(host.logs({ lane: "supervisor" }), names);
    await assert.rejects(host.report({}), names);

    // Released, both land: each registration counts its landing today.
    await writeFile(release, "");
    const landed = await waitFor(
      "both landed",
      async () => {
        const s = await host.status({});
        return s.registrations.length === 2 && s.registrations.every((r) => r.landed_today === 1) ? s : false;
      },
      { deadlineMs: 120_000, explain },
    );
    assert.match(renderStatus(landed), new RegExp(`^registration ${OTHER}: running, .*, 1 landed today, `, "m"));
  });
});
