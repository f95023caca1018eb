// `afk-mcp actions init` (the built binary) and the start with runtime "actions", on the local
// forge with a loopback npm registry (npm_config_registry): --worker writes a step of one's own
// (no registry asked); the default npx pin is said to be missing from the registry while it is
// (proposed, pending and present alike); the start says the same, and says it could not check
// when the registry is gone, without failing.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { join } from "node:path";
import { INIT_BRANCH } from "../server/host/actions-init.js";
import { version } from "../server/version.js";
import { api, git, repoPath, startTestForge, tempDir } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost } from "./support/fleet-fixtures.js";
import { deadRegistryUrl, fakeRegistry } from "./support/fake-registry.js";
import { BIN } from "./support/paths.js";

const run = promisify(execFile);
const cleanups = cleanupsAfterFile();
const WORKFLOW = ".github/workflows/afk-worker.yml";

interface InitAnswer {
  status: string;
  pr: { number: number } | null;
  worker: string;
  message: string;
}

describe("afk-mcp actions init and the worker step's pin", () => {
  const closers: Array<() => Promise<void>> = [];
  after(async () => {
    for (const close of closers) await close();
  });

  it("--worker writes a step of one's own; the default pin is checked against the registry at init and at the start", { timeout: 180_000 }, async () => {
    const forge = await startTestForge();
    cleanups.push(() => forge.dispose());
    const dir = await tempDir("afk-cli-actions-init-");
    // The registry has an older afk-mcp only: this build's version is not published.
    const registry = await fakeRegistry(["0.0.1"]);
    closers.push(registry.close);
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dir,
      GITHUB_API_URL: forge.apiUrl,
      GITHUB_TOKEN: forge.token,
      AFK_STATE_DIR: join(dir, "state"),
      npm_config_registry: registry.url,
    };
    const init = async (...args: string[]): Promise<InitAnswer> => {
      const r = await run(process.execPath, [BIN, "actions", "init", "--repo", forge.repo, "--json", ...args], { env, timeout: 60_000 });
      return JSON.parse(r.stdout) as InitAnswer;
    };
    const proposedStep = async () => (await git(forge.bareRepo, "show", `${INIT_BRANCH}:${WORKFLOW}`)).stdout;

    // A build of one's own: the step runs it, nothing is asked of the registry.
    const own = await init("--worker", "node tools/afk/bin.js worker");
    assert.equal(own.status, "proposed", own.message);
    assert.match(await proposedStep(), /\n {8}run: "node tools\/afk\/bin\.js worker"\n?$/);
    assert.equal(own.worker, "the worker step runs `node tools/afk/bin.js worker`, not a registry package: no version to check");
    assert.deepEqual(registry.asked, []);
    const pr = (await api(forge, "GET", repoPath(forge, `/pulls/${own.pr!.number}`))).body as { body: string };
    assert.match(pr.body, /The worker step runs `node tools\/afk\/bin\.js worker`/);

    // The default: this version from the registry, which lacks it; said when proposed and when pending.
    await api(forge, "PATCH", repoPath(forge, `/pulls/${own.pr!.number}`), { state: "closed" });
    const pinned = await init();
    assert.equal(pinned.status, "proposed", pinned.message);
    assert.match(await proposedStep(), new RegExp(`run: "npx -y afk-mcp@${version.replace(/\./g, "\\.")} worker"`));
    const missing = new RegExp(
      `the worker step runs afk-mcp@${version.replace(/\./g, "\\.")}, which the npm registry \\(${registry.url}\\) does not have: every run will fail before its worker starts`,
    );
    assert.match(pinned.worker, missing);
    assert.match(pinned.message, missing, "the answer says it");
    const pending = await init();
    assert.equal(pending.status, "pending");
    assert.match(pending.worker, missing, "read from the PR's branch");
    assert.deepEqual(registry.asked, [`/afk-mcp/${version}`, `/afk-mcp/${version}`]);

    // Merged: init finds it present, and a start (a dry run, then a real one) says the same.
    assert.equal((await api(forge, "PUT", repoPath(forge, `/pulls/${pinned.pr!.number}/merge`), { merge_method: "merge" })).status, 200);
    const present = await init();
    assert.equal(present.status, "present");
    assert.match(present.worker, missing, "read from the base");
    // The ready label exists (a start's precondition); no issue carries it, so no run is dispatched.
    assert.equal((await api(forge, "POST", repoPath(forge, "/labels"), { name: "ready-for-agent", color: "0e8a16" })).status, 201);
    const host = fleetHost(forge, dir, cleanups, { AFK_RUNTIME: "actions", npm_config_registry: registry.url });
    const steps: string[] = [];
    const dry = await host.start({ repo: forge.repo, dry_run: true }, (step) => steps.push(step));
    assert.match(dry.message, /^dry run: a start would be accepted; nothing was done; runtime actions: /);
    assert.match(dry.message, missing);
    assert.ok(
      steps.some((s) => missing.test(s)),
      steps.join("\n"),
    );

    // The registry gone: the start goes on, and says it could not check.
    const offline = fleetHost(forge, join(dir, "offline"), cleanups, { AFK_RUNTIME: "actions", npm_config_registry: await deadRegistryUrl() });
    const started = await offline.start({ repo: forge.repo, worker_command: "true", target: 1 });
    assert.ok(started.registration, started.message);
    assert.match(
      started.message,
      new RegExp(`the worker step runs afk-mcp@${version.replace(/\./g, "\\.")}; whether the npm registry \\(.*\\) has it could not be checked: unreachable`),
    );
    await offline.stop({ repo: forge.repo, stop_workers: true });
  });
});
