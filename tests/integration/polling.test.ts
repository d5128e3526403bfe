// The extension's connection without a socket (seed 002 §4.1): `POST /api/extension/poll`
// carries the socket's frames both ways. A protocol client stands in for a polling extension;
// the real extension falling back to it is in tests/browser/polling.test.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ActionOutcome, BrowserAction, ExtensionList, ExtensionMessage, PollResponse } from "../../protocol/ts/protocol.ts";
import { api, ExtensionClient, newTask, pairExtension, post } from "../support/clients.ts";
import { ownRuntime } from "../support/mimo.ts";
import type { Mimo } from "../support/mimo.ts";

let mimo: Mimo;

const HELLO = (clientId: string): ExtensionMessage => ({
  type: "hello",
  clientId,
  name: `Poller ${clientId}`,
  browser: { name: "Chromium", version: "156", userAgent: "test" },
  extensionVersion: "0.1.0",
});

async function poll(clientId: string, token: string, body: { ack: number; frames?: ExtensionMessage[]; waitMs?: number }): Promise<PollResponse> {
  const res = await fetch(`${mimo.url}/api/extension/poll?clientId=${clientId}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await res.json();
  assert.equal(res.status, 200, JSON.stringify(answer));
  return answer as PollResponse;
}

/** Submits an action through the developer API without waiting for it. */
async function submit(taskId: string): Promise<void> {
  const res = await post(mimo, `/api/task/${taskId}/actions`, { command: { name: "task_start", params: { url: "http://shop.test/" } }, waitMs: 0 });
  assert.ok(res.status === 202 || res.status === 200, `submit: ${res.status} ${await res.text()}`);
}

type Record = { actionId: string; state: string; attempt: number; outcome?: ActionOutcome };
async function records(taskId: string): Promise<Record[]> {
  return (await (await api(mimo, `/api/task/${taskId}/actions`)).json()) as Record[];
}

function outcomeOf(action: BrowserAction): ActionOutcome {
  return { actionId: action.actionId, attempt: action.attempt, taskId: action.taskId, status: "ok", result: { tabId: 7, windowId: 1, url: "http://shop.test/" }, warnings: [] };
}

describe("the polling transport", () => {
  // Its own runtime: a task binds to the extension used last, which must be this test's.
  ownRuntime({}, (m) => (mimo = m));
  it("welcomes a polling extension, lists it online, and hands it a task's action on a held poll", async () => {
    const { clientId, token } = await pairExtension(mimo);
    const first = await poll(clientId, token, { ack: 0, frames: [HELLO(clientId)] });
    assert.deepEqual(first.replies, [{ type: "welcome", clientId }]);
    assert.deepEqual(first.frames, []);
    const list = (await (await api(mimo, "/api/extension/extension-list")).json()) as ExtensionList;
    assert.equal(list.extensions.find((e) => e.clientId === clientId)?.online, true, "a polling extension is online");

    // A poll held open is answered as soon as the task sends an action: within the ack
    // timeout, so the action is acked on its first attempt.
    const taskId = await newTask(mimo);
    const held = poll(clientId, token, { ack: 0, waitMs: 20_000 });
    await submit(taskId);
    // The held poll answers with the first frame kept (the task's state), the next ones with
    // the action, as an extension polls again at once.
    let delivered = await held;
    let kept = delivered.frames.find((f) => f.frame.type === "browser_action");
    for (let polls = 1; kept === undefined && polls < 5; polls++) {
      delivered = await poll(clientId, token, { ack: 0, waitMs: 20_000 });
      kept = delivered.frames.find((f) => f.frame.type === "browser_action");
    }
    assert.ok(kept !== undefined, JSON.stringify(delivered));
    const { seq, frame } = kept;
    const action = (frame as { action: BrowserAction }).action;
    assert.equal(action.name, "task_start");

    // Not acknowledged: delivered again (the same frame, the same sequence number).
    const again = await poll(clientId, token, { ack: 0 });
    assert.deepEqual(again.frames.find((f) => f.seq === seq), kept);

    // The ack and the result go up with the acknowledgement; the result is acknowledged back.
    const report: ExtensionMessage[] = [
      { type: "action_ack", actionId: action.actionId, attempt: action.attempt, taskId },
      { type: "action_result", outcome: outcomeOf(action) },
    ];
    const reported = await poll(clientId, token, { ack: seq, frames: report });
    assert.ok(reported.frames.every((f) => f.seq > seq), `acknowledged frames are forgotten: ${JSON.stringify(reported.frames)}`);
    assert.deepEqual(reported.replies, [{ type: "result_ack", taskId, actionId: action.actionId, attempt: action.attempt }]);
    // The same report again (its answer was lost): acknowledged again, recorded once.
    const repeated = await poll(clientId, token, { ack: seq, frames: report });
    assert.deepEqual(repeated.replies, reported.replies);
    const stored = await records(taskId);
    assert.equal(stored.length, 1);
    assert.equal(stored[0]!.state, "succeeded", JSON.stringify(stored));
    assert.equal(stored[0]!.attempt, 1, "acked on the first attempt: the held poll was woken");
    assert.deepEqual(stored[0]!.outcome?.result, outcomeOf(action).result);
  });

});

describe("the polling transport's refusals", () => {
  ownRuntime({}, (m) => (mimo = m));
  it("refuses a malformed poll and a revoked credential, and the connection goes on", async () => {
    const { clientId, token } = await pairExtension(mimo);
    const bad = await fetch(`${mimo.url}/api/extension/poll?clientId=${clientId}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ ack: "zero", frames: [] }),
    });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { code: string }).code, "SCHEMA_VALIDATION_FAILED");
    // A frame the server refuses is answered with an error reply, as on the socket.
    const wrongHello = await poll(clientId, token, { ack: 0, frames: [HELLO("someone-else")] });
    assert.equal(wrongHello.replies[0]?.type, "error");
    const fine = await poll(clientId, token, { ack: 0, frames: [HELLO(clientId)] });
    assert.deepEqual(fine.replies, [{ type: "welcome", clientId }]);

    const revoked = await fetch(`${mimo.url}/api/extension/${clientId}`, { method: "DELETE", headers: { authorization: `Bearer ${mimo.token}` } });
    assert.equal(revoked.status, 200);
    const refused = await fetch(`${mimo.url}/api/extension/poll?clientId=${clientId}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ ack: 0, frames: [] }),
    });
    assert.equal(refused.status, 401);
  });

});

describe("from polling back to a socket", () => {
  ownRuntime({}, (m) => (mimo = m));
  it("hands what it kept for the polls to the extension's socket once it has one again", async () => {
    const paired = await pairExtension(mimo);
    const { clientId, token } = paired;
    await poll(clientId, token, { ack: 0, frames: [HELLO(clientId)] });
    const taskId = await newTask(mimo);
    await submit(taskId);
    // Kept (no poll is held): the next connection gets it, here a socket.
    const ext = await ExtensionClient.connect(mimo, "poller-3", "Poller 3", paired);
    const frame = await ext.waitFor((m) => m.type === "browser_action", "the kept action on the socket");
    assert.ok(frame.type === "browser_action" && frame.action.taskId === taskId);
    // Kept frames went to the socket: a poll now finds none.
    assert.deepEqual((await poll(clientId, token, { ack: 0 })).frames, []);
    ext.ws.close();
  });
});
