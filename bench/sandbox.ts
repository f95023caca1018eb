// What the sandbox runtime costs a birth (server/runtimes/sandbox/): the same trivial worker
// (`true`, the brief on stdin) started 10 times through the production spawn path with runtime
// "local" and with runtime "sandbox", in a real worktree of a real work repository. The
// sandbox's share: its setup on the host (the private git dir, the box, the spec) and the
// launcher's (node, the proxy, bubblewrap's namespaces, socat listening inside), to the
// worker's exit with its commits taken back.
//
//   node dist/bench/run.js --only sandbox
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { DEFAULT_CONFIG } from "../schemas/config.js";
import { SandboxProbe, sandboxAvailability } from "../server/runtimes/sandbox/available.js";
import { sandboxedWorker } from "../server/runtimes/sandbox/index.js";
import { startWorker } from "../server/runtimes/local/spawn.js";
import { quantile } from "./fleet-harness.js";
import { round, type Section } from "./section.js";

const BIRTHS = 10;

export const sandboxSection: Section = {
  name: "sandbox",
  summary: "the sandbox runtime's start overhead per birth (bubblewrap, proxy, private git dir) against runtime local",
  async run(ctx) {
    const available = await sandboxAvailability();
    if (!available.ok)
      return {
        figures: [{ key: "overhead_ms", label: "sandbox start overhead per birth", value: null, unit: "ms", goal: "≤ 1000", ok: false }],
        notes: [`no sandbox here: ${available.detail}`],
      };
    const dir = await ctx.tempDir("afk-bench-sandbox-");
    const gitIn = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, stdio: ["ignore", "pipe", "pipe"] }).toString();
    const repo = join(dir, "work.git");
    gitIn(dir, "init", "-q", "--bare", repo);
    const seed = join(dir, "seed");
    gitIn(dir, "init", "-q", "-b", "main", seed);
    await writeFile(join(seed, "README"), "bench\n");
    gitIn(seed, "add", "-A");
    gitIn(seed, "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "base");
    gitIn(seed, "push", "-q", repo, "main");
    const worktree = join(dir, "worktrees", "issue-1");
    gitIn(repo, "worktree", "add", "-q", worktree, "-b", "afk/1-bench", "main");
    const runDir = join(dir, "state", "runs", "issue-1");
    await mkdir(runDir, { recursive: true });
    const briefPath = join(runDir, "brief.md");
    await writeFile(briefPath, "# bench\n");
    const hostEnv = { ...process.env, AFK_STATE_DIR: join(dir, "state"), HOME: join(dir, "home") };
    const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: hostEnv.HOME, SHELL: "/bin/sh" };
    const probe = new SandboxProbe();
    const once = async (runtime: "local" | "sandbox"): Promise<{ total: number; setup: number }> => {
      const t0 = performance.now();
      const boxed = await sandboxedWorker({
        probe,
        config: DEFAULT_CONFIG,
        hostEnv: { ...hostEnv, AFK_RUNTIME: runtime },
        command: "cat >/dev/null; true",
        worktree,
        branch: "afk/1-bench",
        env,
        briefPath,
        verdictPath: join(runDir, "verdict.json"),
        runDir,
        engine: "claude",
      });
      const setup = performance.now() - t0;
      const handle = await startWorker({ command: boxed.command, cwd: worktree, env: boxed.env, briefPath });
      const exit = await handle.exited;
      if (exit.code !== 0)
        throw new Error(
          `the ${runtime} worker exited with ${exit.code}: ${handle
            .tail()
            .map((l) => l.line)
            .join(" | ")}`,
        );
      return { total: performance.now() - t0, setup };
    };
    const local: number[] = [];
    const sandbox: number[] = [];
    const setups: number[] = [];
    for (let i = 0; i < BIRTHS; i += 1) {
      local.push((await once("local")).total);
      const s = await once("sandbox");
      sandbox.push(s.total);
      setups.push(s.setup);
      ctx.log(`sandbox: birth ${i + 1}/${BIRTHS}`);
    }
    const q = (values: number[], at: number): number => quantile(values, at) ?? 0;
    const overhead = round(q(sandbox, 0.5) - q(local, 0.5), 0);
    return {
      figures: [
        { key: "local_birth_ms", label: "birth to exit, runtime local (median)", value: round(q(local, 0.5), 0), unit: "ms" },
        { key: "sandbox_birth_ms", label: "birth to exit, runtime sandbox (median)", value: round(q(sandbox, 0.5), 0), unit: "ms" },
        { key: "sandbox_setup_ms", label: "of which the host's setup (git dir, box, spec)", value: round(q(setups, 0.5), 0), unit: "ms" },
        { key: "overhead_ms", label: "sandbox start overhead per birth (median)", value: overhead, unit: "ms", goal: "≤ 1000", ok: overhead <= 1000 },
        { key: "overhead_p90_ms", label: "sandbox start overhead per birth (p90)", value: round(q(sandbox, 0.9) - q(local, 0.9), 0), unit: "ms" },
      ],
      notes: [`${BIRTHS} births of each runtime, a trivial worker; ${available.detail}`],
    };
  },
};
