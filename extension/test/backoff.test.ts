import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BACKOFF_MAX_MS, backoffDelay } from "../src/backoff.ts";

describe("reconnection backoff", () => {
  it("starts at 0.5 s and doubles up to 30 s", () => {
    const delays = Array.from({ length: 10 }, (_, attempt) => backoffDelay(attempt, 0));
    assert.deepEqual(delays, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000]);
    assert.equal(backoffDelay(1000, 0), BACKOFF_MAX_MS, "no overflow for a long outage");
  });

  it("shortens each delay by up to a quarter at random, never beyond the maximum", () => {
    for (let attempt = 0; attempt < 12; attempt++) {
      const full = backoffDelay(attempt, 0);
      for (const random of [0.001, 0.3, 0.5, 0.999]) {
        const delay = backoffDelay(attempt, random);
        assert.ok(delay <= full && delay >= full * 0.75, `attempt ${attempt}, random ${random}: ${delay}`);
        assert.ok(delay <= BACKOFF_MAX_MS);
      }
    }
    assert.notEqual(backoffDelay(6, 0.2), backoffDelay(6, 0.8), "jitter spreads reconnections");
  });
});
