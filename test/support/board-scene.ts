// The board's browser tests in one scene (test/dashboard.test.ts, test/board-app.test.ts): Debian's
// chromium driven by playwright-core (which never downloads one), and a fleet on the local forge
// with two ready issues: one whose worker waits for a `go` file before it commits, one whose
// worker gives up at once with a hostile verdict (escalated, its reason a script as text).
import { accessSync, constants } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";
import type { FleetHost } from "../../server/host/host.js";
import { startTestForge, tempDir, type TestForge } from "./forge-fixtures.js";
import { COMMIT_WORK, fleetHost, readyIssues, type Cleanups } from "./fleet-fixtures.js";
import { waitFor } from "./wait.js";

const CHROMIUM = "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Outside text that would run if a page put it in raw. */
export const HOSTILE = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">`;

/** Why a browser test skips, or false where chromium is installed. */
export function chromiumMissing(): string | false {
  try {
    accessSync(CHROMIUM, constants.X_OK);
    return false;
  } catch {
    return `${CHROMIUM} is not installed (apt-get install chromium; .ci/run installs it)`;
  }
}

/** A headless chromium with its profile under `dir`, closed at cleanup. */
export async function launchChromium(dir: string, cleanups: Cleanups): Promise<BrowserContext> {
  const context = await chromium.launchPersistentContext(join(dir, "chromium-profile"), {
    executablePath: CHROMIUM,
    args: ARGS,
    headless: true,
    viewport: { width: 1280, height: 900 },
  });
  cleanups.push(() => context.close());
  return context;
}

export interface BoardScene {
  forge: TestForge;
  host: FleetHost;
  dir: string;
  /** Written, it lets `good`'s worker commit (and the fleet land it). */
  go: string;
  good: number;
  hard: number;
}

/** The fleet running, `good`'s worker in flight and `hard` escalated. */
export async function boardScene(cleanups: Cleanups, prefix: string): Promise<BoardScene> {
  const forge = await startTestForge();
  cleanups.push(() => forge.dispose());
  const [good, hard] = (await readyIssues(forge, ["dashboard work", "too hard"])) as [number, number];
  const dir = await tempDir(prefix);
  const go = join(dir, "go");
  const worker = join(dir, "worker.sh");
  const verdict = JSON.stringify({ verdict: "giving-up", reason: HOSTILE });
  await writeFile(
    worker,
    [
      "#!/bin/sh",
      "cat > /dev/null",
      `if [ "$AFK_ISSUE" = "${hard}" ]; then cat > "$AFK_VERDICT_FILE" <<'EOF'`,
      verdict,
      "EOF",
      "exit 0; fi",
      `while [ ! -f "${go}" ]; do sleep 0.1; done`,
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
    },
  });
  await waitFor(
    `#${good}'s worker in flight and #${hard} escalated`,
    async () => {
      const workers = (await host.status({ repo: forge.repo, scope: "worker" })).workers;
      const ledger = (await host.logs({ repo: forge.repo, lane: "ledger", tail_lines: 500 })).records;
      return workers.some((w) => w.issue === good) && ledger.some((r) => r.issue === hard && r.event === "escalation");
    },
    { deadlineMs: 3 * 60_000, intervalMs: 250 },
  );
  return { forge, host, dir, go, good, hard };
}
