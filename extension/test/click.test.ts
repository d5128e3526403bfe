// A trusted click whose page answers it by closing its own tab (a sign-in popup's button): the
// press reached the page, so the click is done, never tried again with DOM events; a release
// Chrome does not confirm on a tab still open is a click that may have taken effect.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Debugger } from "../src/cdp.ts";
import { CdpFailure } from "../src/cdp.ts";
import { clickMouse } from "../src/input.ts";
import { ActionError } from "../src/results.ts";

/** A debugger whose answer to each mouse event type is `answer`'s, recording what was sent. */
function fakeDebugger(answer: (type: string) => Promise<void>): { cdp: Debugger; sent: string[] } {
  const sent: string[] = [];
  const cdp = {
    send: async (_tabId: number, method: string, params: { type: string }) => {
      assert.equal(method, "Input.dispatchMouseEvent");
      sent.push(params.type);
      return answer(params.type);
    },
  } as unknown as Debugger;
  return { cdp, sent };
}

/** Chrome's tabs as the click sees them: `open` or closed. */
function tabs(open: boolean): void {
  (globalThis as unknown as { chrome: unknown }).chrome = {
    tabs: { get: async (tabId: number) => (open ? { id: tabId } : Promise.reject(new Error(`No tab with id: ${tabId}.`))) },
  };
}

const closed = () => Promise.reject(new CdpFailure("Debugger is not attached to the tab"));

describe("a trusted click", () => {
  it("is done when its release goes unanswered because the click closed the tab", async () => {
    tabs(false);
    const { cdp, sent } = fakeDebugger((type) => (type === "mouseReleased" ? closed() : Promise.resolve()));
    await clickMouse(cdp, 7, { x: 10, y: 20 });
    assert.deepEqual(sent, ["mouseMoved", "mousePressed", "mouseReleased"]);
  });

  it("may have taken effect when its release goes unanswered on a tab still open: not to be run again", async () => {
    tabs(true);
    const { cdp } = fakeDebugger((type) => (type === "mouseReleased" ? closed() : Promise.resolve()));
    await assert.rejects(clickMouse(cdp, 7, { x: 10, y: 20 }), (error: unknown) => {
      assert.ok(error instanceof ActionError && !(error instanceof CdpFailure), String(error));
      assert.equal(error.code, "TIMEOUT");
      assert.equal(error.retryable, false);
      assert.match(error.message, /pressed, but its release was not confirmed .*may have taken effect/);
      return true;
    });
  });

  it("fails with CDP's error, which DOM events may follow, when the press did not reach the page", async () => {
    tabs(true);
    const { cdp } = fakeDebugger((type) => (type === "mouseMoved" ? Promise.resolve() : closed()));
    await assert.rejects(clickMouse(cdp, 7, { x: 10, y: 20 }), CdpFailure);
  });
});
