// Unit tests of the replay's pure parts: its address, the audit log's lines, and how a step's
// action, outcome and confirmation read.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AuditRecord } from "../../protocol/ts/protocol.ts";
import { actionOf, confirmationText, outcomeState, outcomeText, parseAuditLog, stepTitle } from "../src/replay.ts";
import { retryText } from "../src/retry.ts";
import { parseRoute, replayHash } from "../src/router.ts";
import { describeAction } from "../src/steps.ts";

const TASK = "5f0c2d8e-6a4b-4c1e-9d3f-2b7a8c9e0f11";

function record(extra: Partial<AuditRecord> = {}): AuditRecord {
  return { ts: 1_000, taskId: TASK, run: 1, step: 2, agentId: "main", action: { type: "click", target: 7, params: { index: 7 }, risk: "high" }, ...extra };
}

describe("the replay's address", () => {
  it("names the task and the step shown, and the live task without it", () => {
    assert.deepEqual(parseRoute(`#/task/${TASK}`), { taskId: TASK });
    assert.deepEqual(parseRoute(`#/task/${TASK}/replay`), { taskId: TASK, replay: { at: 1 } });
    assert.deepEqual(parseRoute(`#/task/${TASK.toUpperCase()}/replay/12/`), { taskId: TASK, replay: { at: 12 } });
    assert.deepEqual(parseRoute(replayHash(TASK, 3)), { taskId: TASK, replay: { at: 3 } });
    assert.deepEqual(parseRoute(`#/task/${TASK}/replay/0`), { taskId: TASK, replay: { at: 1 } }, "steps count from 1");
    assert.equal(parseRoute("#/task/not-a-task/replay"), null);
    assert.equal(parseRoute(`#/task/${TASK}/replay/x`), undefined);
    assert.equal(parseRoute(""), undefined);
  });
});

describe("a replayed step", () => {
  it("reads the audit log's lines, skipping blank ones", () => {
    const records = parseAuditLog(`${JSON.stringify(record({ step: 1 }))}\n${JSON.stringify(record())}\n\n`);
    assert.deepEqual(records.map((r) => r.step), [1, 2]);
    assert.throws(() => parseAuditLog("{not json"));
  });

  it("describes its action as the conversation does", () => {
    assert.equal(describeAction(actionOf(record())), "Click element [7]");
    const typed = record({ action: { type: "type", target: 3, params: { index: 3, text: "{{secret:pw}}", submit: true } } });
    assert.equal(describeAction(actionOf(typed)), "Type “{{secret:pw}}” into element [3] and submit");
    assert.equal(describeAction(actionOf(record({ action: { type: "back", params: {} } }))), "Go back");
  });

  it("names its run only when the log has several, and a sub-agent's job always", () => {
    assert.equal(stepTitle(record(), 1), "Step 2");
    assert.equal(stepTitle(record({ run: 2 }), 2), "Run 2 · step 2");
    assert.equal(stepTitle(record({ run: 3, agentId: "subtask-2" }), 3), "Sub-task 2 · step 2");
    assert.equal(stepTitle(record({ run: 3, agentId: "subtask-2" }), 1), "Sub-task 2 · step 2");
  });

  it("says why the model was asked again before it chose the step", () => {
    const retry = { at: 5, attempt: 1, maxAttempts: 3, reason: "rate_limited" as const, message: "slow down", delayMs: 4000 };
    assert.equal(retryText(retry, 0), "Rate limited — retried (attempt 1 of 3)");
    assert.match(retryText({ ...retry, reason: "context_too_long" }, 0), /too long for the model/);
  });

  it("says what came of it", () => {
    assert.equal(outcomeState(undefined), "unfinished");
    assert.match(outcomeText(undefined), /did not end/);
    assert.equal(outcomeText({ ok: true, at: 5 }), "Done.");
    assert.equal(outcomeState({ ok: true, partial: true, at: 5 }), "partial");
    const declined = { ok: false, at: 5, errors: [{ code: "CONFIRMATION_REQUIRED" as const, message: "the person declined", retryable: false }] };
    assert.equal(outcomeText(declined), "Failed: CONFIRMATION_REQUIRED — the person declined");
  });

  it("says who answered its confirmation, how and when", () => {
    const time = (ms: number) => `t${ms}`;
    const asked = { required: true, reason: "r", askedAt: 10_000 };
    assert.equal(confirmationText(asked, time), "Asked at t10000; not answered.");
    assert.equal(confirmationText({ ...asked, approved: true, by: "web", answeredAt: 22_400 }, time), "Confirmed in the web app at t22400, 12 s after it was asked.");
    assert.equal(confirmationText({ ...asked, approved: false, by: "web", answeredAt: 11_000 }, time), "Declined in the web app at t11000, 1 s after it was asked.");
  });
});
