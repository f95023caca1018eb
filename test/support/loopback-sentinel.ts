// A proxy on 127.0.0.1 that answers nothing and counts who tried it. The real CLIs a test runs
// (Claude Code, Codex) get every proxy variable pointing here and NO_PROXY for loopback, so a
// request for anything but 127.0.0.1 fails and shows up in `connections`; the file's tests end
// with an assertion that there were none.
import { after } from "node:test";
import assert from "node:assert/strict";
import { createServer, type AddressInfo } from "node:net";

export interface LoopbackSentinel {
  url: string;
  connections: number;
  /** The proxy variables of a CLI's environment: everything but loopback goes to the sentinel. */
  proxyEnv(): Record<string, string>;
}

/** Starts the sentinel for this test file; after the file's tests it closes, asserting no connection. */
export async function loopbackSentinel(): Promise<LoopbackSentinel> {
  const proxy = createServer((socket) => {
    sentinel.connections += 1;
    socket.destroy();
  });
  await new Promise<void>((done) => proxy.listen(0, "127.0.0.1", done));
  const sentinel: LoopbackSentinel = {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    connections: 0,
    proxyEnv: () => ({ HTTPS_PROXY: sentinel.url, HTTP_PROXY: sentinel.url, ALL_PROXY: sentinel.url, NO_PROXY: "127.0.0.1,localhost" }),
  };
  after(async () => {
    await new Promise<void>((done) => proxy.close(() => done()));
    assert.equal(sentinel.connections, 0, "a CLI tried to reach beyond loopback");
  });
  return sentinel;
}
