// The API client's retry of an artifact still on its way, against a stubbed `fetch`:
//   node --test web/test/*.test.ts
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { ApiError, artifactUrl } from "../src/api.ts";

const realFetch = globalThis.fetch;

/** `fetch` answering the scripted responses in turn; the URLs asked. */
function answering(...responses: Array<() => Response>): string[] {
  const asked: string[] = [];
  globalThis.fetch = (async (input: RequestInfo | URL) => {
    asked.push(String(input));
    const next = responses.shift();
    assert.ok(next, `an unexpected request: ${String(input)}`);
    return next();
  }) as typeof fetch;
  return asked;
}

const notYet = () => Response.json({ code: "NOT_FOUND", message: "the artifact was granted but its upload has not completed", retryable: true }, { status: 404 });
const never = () => Response.json({ code: "NOT_FOUND", message: "no such artifact", retryable: false }, { status: 404 });
const found = () => Response.json({ artifactId: "t.a", kind: "screenshot", downloadUrl: "http://r2/a", expiresAt: 1 });

describe("artifactUrl", () => {
  afterEach(() => {
    globalThis.fetch = realFetch;
  });

  it("asks again for an artifact the server says may come (stored just after its step)", async () => {
    const asked = answering(notYet, notYet, found);
    assert.equal(await artifactUrl("tok", "t.a"), "http://r2/a");
    assert.deepEqual(asked, ["/api/artifacts/t.a", "/api/artifacts/t.a", "/api/artifacts/t.a"]);
  });

  it("gives up at once on one that will not come, and after a few tries on one that does not", async () => {
    const once = answering(never);
    await assert.rejects(artifactUrl("tok", "t.b"), (e: unknown) => e instanceof ApiError && e.code === "NOT_FOUND" && !e.retryable);
    assert.equal(once.length, 1);
    const tries = answering(notYet, notYet, notYet, notYet, notYet, notYet);
    await assert.rejects(artifactUrl("tok", "t.c"), (e: unknown) => e instanceof ApiError && e.retryable);
    assert.equal(tries.length, 6);
  });
});
