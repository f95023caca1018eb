// The one shutdown path of a long-running afk-mcp process (`afk-mcp run`, the stdio server, the
// daemon): SIGINT, SIGTERM, SIGHUP and the end of stdin all ask for the same drain; a second
// signal during the drain ends what it can at once, says what it left, and exits.
//
// The listeners are persistent (`process.on`), never `process.once`: execa loads signal-exit
// while a git child runs, and signal-exit re-raises a signal when its own listeners are the
// only ones left. A once-listener has removed itself by the time signal-exit looks, so the
// process died of the signal (exit 130) with no drain, leaving claims and the landing lock.
import { constants } from "node:os";

export type ShutdownCause = NodeJS.Signals | "stdin" | "closed";

export const SHUTDOWN_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

export interface ShutdownOptions {
  /** One line for the operator (the CLI's printer, or stderr for the stdio server). */
  say: (line: string) => void;
  /**
   * A second signal while draining: end at once what can be ended (workers, the landing lock)
   * and return what is left behind, for the last line. Bounded by `abandonMs`.
   */
  abandon: () => Promise<string>;
  /**
   * What the first request goes on to do, said after "stopping (<cause>): ". Default: the drain
   * of a process that holds the fleet; a thin client (the MCP server) says what it does instead.
   */
  stopping?: string;
  /** A stream whose end or close asks for the drain (the stdio server's stdin). */
  stdin?: NodeJS.ReadableStream;
  signals?: readonly NodeJS.Signals[];
  /** How long the abandon may take before the process exits anyway. Default 3 s. */
  abandonMs?: number;
  /** Ends the process; only tests of this module replace it. */
  exit?: (code: number) => void;
}

export interface ShutdownWatch {
  /** Resolves with the cause of the first request to stop. */
  readonly requested: Promise<ShutdownCause>;
  /** Asks for the drain from inside the process (e.g. the MCP transport closed). */
  request(cause: ShutdownCause): void;
  /** Removes every listener: the drain is over and the process may end on its own. */
  dispose(): void;
}

export function watchShutdown(options: ShutdownOptions): ShutdownWatch {
  const signals = options.signals ?? SHUTDOWN_SIGNALS;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let first: ShutdownCause | null = null;
  let abandoning = false;
  let resolveRequested!: (cause: ShutdownCause) => void;
  const requested = new Promise<ShutdownCause>((resolve) => (resolveRequested = resolve));

  const request = (cause: ShutdownCause): void => {
    if (first !== null) return;
    first = cause;
    const how = cause === "stdin" || cause === "closed" ? "the client went away" : `${cause} received`;
    options.say(`stopping (${how}): ${options.stopping ?? "no new claims; draining… (signal again to exit at once)"}`);
    resolveRequested(cause);
  };

  const abandon = (signal: NodeJS.Signals): void => {
    if (abandoning) return;
    abandoning = true;
    const code = 128 + (constants.signals[signal] ?? 2);
    let done = false;
    const finish = (left: string): void => {
      if (done) return;
      done = true;
      options.say(`exiting at once on a second signal (${signal}): ${left}`);
      exit(code);
    };
    const timer = setTimeout(() => finish("the cleanup did not finish in time; whatever it had not reached is left behind"), options.abandonMs ?? 3_000);
    timer.unref?.();
    options.abandon().then(
      (left) => finish(left),
      (error: unknown) => finish(`the cleanup failed (${error instanceof Error ? error.message : String(error)})`),
    );
  };

  const onSignal = (signal: NodeJS.Signals): void => {
    if (first === null) request(signal);
    else abandon(signal);
  };
  const onStdinEnd = (): void => request("stdin");
  for (const signal of signals) process.on(signal, onSignal);
  options.stdin?.on("end", onStdinEnd);
  options.stdin?.on("close", onStdinEnd);

  return {
    requested,
    request,
    dispose(): void {
      for (const signal of signals) process.off(signal, onSignal);
      options.stdin?.off("end", onStdinEnd);
      options.stdin?.off("close", onStdinEnd);
    },
  };
}
