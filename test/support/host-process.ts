// A FleetHost in a process of its own, started on a project: SIGKILL is then a real crash
// (no stop, no release, nothing pushed), as the chaos harness kills its hosts.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "./paths.js";

/** Spawns the host (from the compiled dist/, beside this file); `children` collects it for the file's cleanup. */
export function spawnHost(
  children: ChildProcess[],
  env: Record<string, string>,
  instance: string,
  input: Record<string, unknown>,
  timeScale: number,
): ChildProcess {
  const hostModule = join(import.meta.dirname, "..", "..", "server", "host", "host.js");
  const script = [
    `import { FleetHost } from ${JSON.stringify(hostModule)};`,
    `const host = new FleetHost({ env: ${JSON.stringify(env)}, instance: ${JSON.stringify(instance)}, timeScale: ${timeScale} });`,
    `await host.start(${JSON.stringify(input)});`,
    `setInterval(() => {}, 1000);`,
  ].join("\n");
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "ignore", "pipe"], cwd: ROOT });
  child.stderr!.setEncoding("utf8").on("data", () => undefined);
  children.push(child);
  return child;
}

/** Kills the process at once (SIGKILL) and resolves once it is gone. */
export async function crash(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await gone;
}
