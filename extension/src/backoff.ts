// Reconnection delays: exponential from 0.5 s, doubling up to 30 s, with jitter so that many
// browsers dropped by one server restart do not all come back in the same instant.

const BACKOFF_BASE_MS = 500;
export const BACKOFF_MAX_MS = 30_000;
/** Each delay is shortened by up to this fraction, at random. */
const BACKOFF_JITTER = 0.25;

/**
 * The delay before reconnection attempt `attempt` (0 for the first retry after a drop).
 * `random` is in [0, 1), as `Math.random` returns it.
 */
export function backoffDelay(attempt: number, random: number): number {
  const exponential = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempt));
  return Math.round(exponential * (1 - BACKOFF_JITTER * random));
}
