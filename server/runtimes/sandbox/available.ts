// Whether this machine can run the sandbox: bubblewrap and socat on PATH, and a trial run of
// bubblewrap with every namespace unshared (a kernel or an AppArmor policy that forbids user
// namespaces fails here, not in the first worker). Checked once per process; the answer names
// the install command when something is missing.
import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { BASE_ARGS } from "./plan.js";

export interface SandboxAvailability {
  ok: boolean;
  /** bubblewrap's version ("bubblewrap 0.8.0"), or why the sandbox cannot run. */
  detail: string;
  bwrap: string | null;
  socat: string | null;
}

export const INSTALL_HINT: Readonly<Record<string, string>> = {
  linux: "install bubblewrap and socat (Debian, Ubuntu: `sudo apt-get install bubblewrap socat`; Fedora: `sudo dnf install bubblewrap socat`)",
  darwin: 'the sandbox runtime needs Linux\'s bubblewrap; on macOS run workers with `runtime: "local"` for now',
};

export function installHint(platform: NodeJS.Platform = process.platform): string {
  return INSTALL_HINT[platform] ?? INSTALL_HINT.darwin!.replace("on macOS", `on ${platform}`);
}

/** The program's path on PATH, or null. */
export function which(program: string, pathVar = process.env.PATH ?? ""): string | null {
  for (const dir of pathVar.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  return null;
}

function run(file: string, args: string[]): Promise<{ ok: boolean; out: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 10_000 }, (error, stdout, stderr) => resolve({ ok: !error, out: `${stdout}${stderr}`.trim() }));
  });
}

/**
 * Whether the sandbox can run here, probed once per PATH (the host's environment may name another
 * PATH than ours) and kept by its owner: the host's runtimes (server/runtimes/registry.ts).
 */
export class SandboxProbe {
  private readonly answers = new Map<string, Promise<SandboxAvailability>>();

  availability(pathVar = process.env.PATH ?? ""): Promise<SandboxAvailability> {
    let answer = this.answers.get(pathVar);
    if (!answer) {
      answer = probe(pathVar);
      this.answers.set(pathVar, answer);
    }
    return answer;
  }

  /**
   * The answer at a worker's birth: the kept one while it said yes and bubblewrap and socat are
   * still the programs it found; probed again otherwise (a program removed or replaced since the
   * start, or a sandbox that could not run before and may now), so a birth never trusts a stale
   * yes and a fixed host is seen without a restart.
   */
  async availableNow(pathVar = process.env.PATH ?? ""): Promise<SandboxAvailability> {
    const answer = await this.availability(pathVar);
    if (answer.ok && answer.bwrap === which("bwrap", pathVar) && answer.socat === which("socat", pathVar)) return answer;
    this.answers.delete(pathVar);
    return this.availability(pathVar);
  }
}

/** One probe, kept by no one (the demo's and a test's single question). */
export function sandboxAvailability(pathVar = process.env.PATH ?? ""): Promise<SandboxAvailability> {
  return new SandboxProbe().availability(pathVar);
}

async function probe(pathVar: string): Promise<SandboxAvailability> {
  if (process.platform !== "linux") return { ok: false, detail: `no sandbox on ${process.platform}: ${installHint()}`, bwrap: null, socat: null };
  const bwrap = which("bwrap", pathVar);
  const socat = which("socat", pathVar);
  const missing = [bwrap ? null : "bwrap (bubblewrap)", socat ? null : "socat"].filter(Boolean);
  if (!bwrap || !socat) return { ok: false, detail: `${missing.join(" and ")} not found on PATH: ${installHint()}`, bwrap, socat };
  const version = await run(bwrap, ["--version"]);
  const trial = await run(bwrap, [...BASE_ARGS, "--", "/bin/true"]);
  if (!trial.ok)
    return {
      ok: false,
      detail: `bubblewrap cannot create its namespaces here (${trial.out.split("\n")[0] || "it failed"}): allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or an AppArmor profile for bwrap), or choose runtime "local"`,
      bwrap,
      socat,
    };
  return { ok: true, detail: version.out || "bubblewrap", bwrap, socat };
}
