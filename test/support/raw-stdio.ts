// The built binary as an MCP client sees it, with nothing between: raw JSON-RPC lines on its
// stdin, its answers read back from stdout by id, its stderr kept. For what the SDK's client
// would hide or smooth over: a session whose stdin closes with a call in flight, a non-object
// `arguments`, an answer's exact error code.
import { spawn, type ChildProcess } from "node:child_process";
import { BIN } from "./paths.js";
import { waitFor } from "./wait.js";

export interface RawAnswer {
  id: number;
  result?: { isError?: boolean; content?: { text?: string }[]; structuredContent?: Record<string, unknown> };
  error?: { code: number; message: string };
}

export interface RawSession {
  child: ChildProcess;
  /** Sends one request; resolves with its id (answer() waits for the answer). */
  send(method: string, params?: Record<string, unknown>): number;
  /** Every message the server wrote that answers no request (notifications), in order. */
  notifications(): { method: string; params?: Record<string, unknown> }[];
  /** The answer to request `id`, once it arrived. */
  answer(id: number, deadlineMs?: number): Promise<RawAnswer>;
  /** Ends stdin, as a client that goes away does. */
  closeStdin(): void;
  /** Resolves with the exit code and signal once the process has exited. */
  exited(deadlineMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

/**
 * Starts `node dist/server/bin.js [args]` and initializes the MCP session on it (2025-11-25),
 * or, with `handshake: false`, sends nothing first (2026-07-28 has no handshake).
 */
export function rawSession(env: Record<string, string>, args: string[] = [], { handshake = true }: { handshake?: boolean } = {}): RawSession {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ["pipe", "pipe", "pipe"] });
  let err = "";
  let buffer = "";
  const answers = new Map<number, RawAnswer>();
  const notes: { method: string; params?: Record<string, unknown> }[] = [];
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      const message = JSON.parse(line) as Partial<RawAnswer>;
      if (typeof message.id === "number") answers.set(message.id, message as RawAnswer);
      else if ("method" in message) notes.push(message as { method: string; params?: Record<string, unknown> });
    }
  });
  child.on("exit", (code, signal) => (exit = { code, signal }));
  child.stdin!.on("error", () => undefined);
  let next = 0;
  const write = (message: Record<string, unknown>) => child.stdin!.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
  const session: RawSession = {
    child,
    send(method, params = {}) {
      const id = next++;
      write({ id, method, params });
      return id;
    },
    answer: (id, deadlineMs = 300_000) =>
      waitFor(
        `the answer to request ${id}`,
        () => answers.get(id) ?? (exit ? Promise.reject(new Error(`the session exited (${JSON.stringify(exit)}) before answering ${id}: ${err}`)) : null),
        {
          deadlineMs,
          intervalMs: 20,
          explain: () => err,
        },
      ),
    notifications: () => [...notes],
    closeStdin: () => void child.stdin!.end(),
    exited: (deadlineMs = 120_000) => waitFor("the session to exit", () => exit, { deadlineMs, intervalMs: 20, explain: () => `stderr:\n${err}` }),
    stderr: () => err,
  };
  if (!handshake) return session;
  session.send("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "afk-raw-test", version: "0.0.0" } });
  write({ method: "notifications/initialized" });
  return session;
}
