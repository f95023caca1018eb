// A session that listens to the daemon's events (board updates, log messages for its MCP client)
// and loses its connection, as `afk-mcp daemon restart` does when it hands the fleet to a new
// daemon, reaches the next daemon by itself: a client that only subscribed would otherwise hear
// nothing until it next asks for something. A few tries, backing off (about 30 s in all), and
// never starting a daemon: one that was stopped stays stopped.
export const REJOIN_DELAYS_MS: readonly number[] = [250, 500, 1_000, 2_000, 4_000, 8_000, 16_000];

/** Calls `attempt` after each delay in turn until it answers true (joined) or the delays run out. */
export function rejoin(attempt: () => Promise<boolean>, delays: readonly number[] = REJOIN_DELAYS_MS): void {
  const next = (index: number): void => {
    if (index >= delays.length) return;
    const timer = setTimeout(() => {
      attempt().then(
        (joined) => void (joined || next(index + 1)),
        () => next(index + 1),
      );
    }, delays[index]);
    timer.unref();
  };
  next(0);
}
