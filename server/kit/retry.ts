// One way to try again with backoff, on p-retry (a kept library: attempts, exponential delays,
// errors it should never retry). Compare-and-swap loops are not retries (each round reads what
// won and decides again) and stay written out where they are.
import pRetry from "p-retry";

export interface Backoff {
  /** Tries after the first. */
  retries: number;
  /** The wait before the first retry; each next one is `factor` times longer (default 2). */
  minMs: number;
  factor?: number;
  /** No wait longer than this (default none). */
  maxMs?: number;
  /** Whether an error is worth another try (default: every error). */
  again?: (error: Error) => boolean;
  /** Told before each retry: the error that called for it and the retry's number (from 1). */
  onRetry?: (error: Error, retry: number) => void;
}

/** Runs `attempt` until it resolves or the retries run out; rejects with the last error. */
export function retry<T>(attempt: (n: number) => Promise<T>, backoff: Backoff): Promise<T> {
  const again = backoff.again ?? (() => true);
  return pRetry(attempt, {
    retries: backoff.retries,
    minTimeout: backoff.minMs,
    factor: backoff.factor ?? 2,
    maxTimeout: backoff.maxMs ?? Infinity,
    randomize: false,
    shouldRetry: ({ error }) => again(error),
    onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
      if (retriesLeft > 0 && again(error)) backoff.onRetry?.(error, attemptNumber);
    },
  });
}

/** The attempt's answer was not the one wanted: carried out of p-retry as an error. */
class Unwanted<T> extends Error {
  constructor(readonly answer: T) {
    super("unwanted answer");
  }
}

/**
 * For attempts that answer rather than throw (a git exit code): tries again while `again(answer)`
 * holds, and returns the last answer once the retries run out. An error thrown is not retried.
 */
export async function retryWhile<T>(attempt: (n: number) => Promise<T>, again: (answer: T) => boolean, backoff: Omit<Backoff, "again">): Promise<T> {
  try {
    return await retry(
      async (n) => {
        const answer = await attempt(n);
        if (again(answer)) throw new Unwanted(answer);
        return answer;
      },
      { ...backoff, again: (error) => error instanceof Unwanted },
    );
  } catch (error) {
    if (error instanceof Unwanted) return error.answer as T;
    throw error;
  }
}
