// Paths of the package under test, whether the tests run from TypeScript (tsx) or from dist/.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i += 1) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "server"))) return dir;
    dir = resolve(dir, "..");
  }
  throw new Error("cannot find the package root from " + fileURLToPath(import.meta.url));
}

export const ROOT = findRoot();
/** The built binary (npm test builds before it runs the suite). */
export const BIN = join(ROOT, "dist", "server", "bin.js");
