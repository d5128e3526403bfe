import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { fetchRetrying } from "../src/artifacts.ts";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

/** A fetch that answers with each of `answers` in turn: an Error is thrown, a number is a status. */
function scripted(answers: Array<Error | number>): { calls: () => number } {
  let calls = 0;
  globalThis.fetch = (async () => {
    const answer = answers[calls++];
    if (answer === undefined) throw new Error("no more answers");
    if (answer instanceof Error) throw answer;
    return new Response(null, { status: answer });
  }) as typeof fetch;
  return { calls: () => calls };
}

describe("uploads through a server that restarts", () => {
  it("tries a request that got no answer again, after a backoff, and says so", async () => {
    const server = scripted([new TypeError("Failed to fetch"), new TypeError("Failed to fetch"), 201]);
    let retries = 0;
    const res = await fetchRetrying("http://mimo.test/x", () => ({ method: "PUT" }), () => retries++);
    assert.equal(res.status, 201);
    assert.equal(server.calls(), 3);
    assert.equal(retries, 2);
  });

  it("takes any answer as it is, and gives up on a timeout or after three retries", async () => {
    const answered = scripted([500]);
    assert.equal((await fetchRetrying("http://mimo.test/x", () => ({}))).status, 500);
    assert.equal(answered.calls(), 1, "an answer is never retried here");

    const timeout = new DOMException("timed out", "TimeoutError");
    const slow = scripted([timeout, 201]);
    await assert.rejects(fetchRetrying("http://mimo.test/x", () => ({})), (e) => e === timeout);
    assert.equal(slow.calls(), 1, "a timeout already waited long enough");

    const down = scripted([1, 2, 3, 4, 5].map(() => new TypeError("Failed to fetch")));
    await assert.rejects(fetchRetrying("http://mimo.test/x", () => ({})), TypeError);
    assert.equal(down.calls(), 4);
  });
});
