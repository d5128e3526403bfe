// A retried model call, as a line in the conversation: why the model is asked again, and for
// a call that waits (a rate limit, an overloaded provider), how long until it is made.

import type { EventEnvelope, LlmErrorKind } from "../../protocol/ts/protocol.ts";

export type ModelRetry = Extract<EventEnvelope, { type: "modelRetry" }>;

/** What went wrong, for people; kinds not listed are named as they are. */
const REASONS: Partial<Record<LlmErrorKind, string>> = {
  rate_limited: "Rate limited",
  overloaded: "The model is overloaded",
  server: "The model's server failed",
  network: "The model could not be reached",
  timeout: "The model did not answer in time",
  invalid_response: "The model's answer could not be read",
  no_tool_call: "The model answered without choosing a step",
  invalid_tool_arguments: "The model's step did not fit the schema",
};

/** Milliseconds until the retried call is made, seen at `now` (0 once it is). */
export function retryRemainingMs(event: ModelRetry, now: number): number {
  return Math.min(event.delayMs, Math.max(0, event.at + event.delayMs - now));
}

/**
 * "Rate limited — retrying in 4 s (attempt 1 of 3)" while it waits, "… — retried …" after; of
 * the live event or of its copy in the audit log.
 */
export function retryText(event: Pick<ModelRetry, "attempt" | "maxAttempts" | "reason">, remainingMs: number): string {
  const attempt = `(attempt ${event.attempt} of ${event.maxAttempts})`;
  if (event.reason === "context_too_long") {
    return `The conversation was too long for the model; older parts were summarised and it is asked again ${attempt}`;
  }
  const reason = REASONS[event.reason] ?? `The model call failed (${event.reason})`;
  if (remainingMs > 0) return `${reason} — retrying in ${Math.ceil(remainingMs / 1000)} s ${attempt}`;
  return `${reason} — retried ${attempt}`;
}
