// A tiny npm registry on loopback for the worker pin's checks (server/runtimes/actions/worker-pin.ts):
// `GET /afk-mcp/<version or dist-tag>` answers the version's document for the versions it holds,
// 404 for the rest. Tests point `npm_config_registry` at it; nothing reaches the network.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeRegistry {
  url: string;
  /** The paths asked, in order. */
  asked: string[];
  close(): Promise<void>;
}

export async function fakeRegistry(versions: readonly string[], options: { status?: number } = {}): Promise<FakeRegistry> {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://registry.invalid").pathname);
    asked.push(path);
    if (options.status !== undefined) {
      res.writeHead(options.status, { "content-type": "application/json" }).end("{}");
      return;
    }
    const match = /^\/afk-mcp\/([^/]+)$/.exec(path);
    const wanted = match?.[1] === "latest" ? versions.at(-1) : match?.[1];
    if (!wanted || !versions.includes(wanted)) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "Not found" }));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ name: "afk-mcp", version: wanted }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, asked, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A loopback URL nothing listens on (a port just freed): an unreachable registry. */
export async function deadRegistryUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/`;
}
