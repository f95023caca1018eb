// A session that listens to the daemon's events (board updates, log messages for its MCP client)
// and loses its connection, as `afk-mcp daemon restart` does when it hands the fleet to a new
// daemon, reaches the next daemon by itself: a client that only subscribed would otherwise hear
// nothing until it next asks for something. It backs off to one try every 16 s and goes on for as
// long as the session still listens (a new daemon may take its time coming up on a loaded
// machine), and never starts a daemon: one that was stopped stays stopped, and the next call
// that needs a daemon starts one as usual. A try is one connect to the socket.
export const REJOIN_DELAYS_MS: readonly number[] = [250, 500, 1_000, 2_000, 4_000, 8_000, 16_000];

/**
 * Calls `attempt` after each delay in turn, then every last delay, until it answers true (joined)
 * or `wanted()` answers false (the session closed or stopped listening).
 */
export function rejoin(attempt: () => Promise<boolean>, wanted: () => boolean, delays: readonly number[] = REJOIN_DELAYS_MS): void {
  const next = (index: number): void => {
    if (!wanted()) return;
    const timer = setTimeout(
      () => {
        if (!wanted()) return;
        attempt().then(
          (joined) => void (joined || next(index + 1)),
          () => next(index + 1),
        );
      },
      delays[Math.min(index, delays.length - 1)],
    );
    timer.unref();
  };
  next(0);
}
