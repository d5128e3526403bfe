// JavaScript dialogs end to end: alert, confirm and prompt opened by the fixture mail page in
// the task's tab, seen by the real extension through CDP, answered by `browser_dialog` (by
// itself through the developer API, and by the scripted model in an agent run), dismissed when
// nobody answers, and never hanging a task.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { DomIndexResult, EventEnvelope, FrontendEvent, PageDialog } from "../../protocol/ts/protocol.ts";
import { newTask, WebClient } from "../support/clients.ts";
import { agentStep, onElement } from "../support/shopper.ts";
import { act, fails, logged, ok, pageAt, pageLog, startHarness, startTask } from "./harness.ts";
import type { Harness } from "./harness.ts";

let h: Harness;
before(async () => {
  h = await startHarness();
  // Left open for the extension to answer: Playwright dismisses a dialog nobody listens for.
  h.context.on("dialog", () => undefined);
});
after(async () => {
  await h?.close();
});

async function clickOn(taskId: string, label: string) {
  const { result } = await ok<DomIndexResult>(h, taskId, { name: "browser_dom_index", params: {} });
  const element = result.elements.find((e) => e.text === label);
  assert.ok(element, `no "${label}" in ${result.text}`);
  return act(h, taskId, { name: "browser_click", params: { clickId: element.clickId } });
}

describe("a JavaScript dialog", () => {
  it("ends the click that opened it at once, holds every other action, and is answered by browser_dialog", { timeout: 60_000 }, async () => {
    const { taskId, page } = await startTask(h, `${h.a}/dialogs.html?answer`);
    const clicked = await clickOn(taskId, "Empty trash");
    assert.equal(clicked.state, "succeeded", JSON.stringify(clicked));
    const dialog = clicked.outcome?.dialog as PageDialog;
    assert.deepEqual(dialog, { kind: "confirm", message: "Delete all 3 messages in the trash for ever?", url: `${h.a}/dialogs.html?answer` });
    assert.match(clicked.outcome!.warnings.join(" "), /confirm dialog "Delete all 3 messages/);

    // The page's scripts are held: anything else is refused at once, with the dialog.
    const held = await act(h, taskId, { name: "browser_dom_index", params: {} });
    assert.equal(held.outcome?.error?.code, "TARGET_NOT_INTERACTABLE", JSON.stringify(held));
    assert.deepEqual(held.outcome?.dialog, dialog);

    const { result } = await ok<{ accepted: boolean }>(h, taskId, { name: "browser_dialog", params: { accept: false } });
    assert.equal(result.accepted, false);
    await logged(page, "kept");
    assert.deepEqual(await pageLog(page), ["kept"], "answered once");
    // Nothing is open any more: answering again finds nothing.
    await fails(h, taskId, { name: "browser_dialog", params: { accept: true } }, "TARGET_NOT_FOUND");

    // A prompt takes the text typed into it; an alert is acknowledged.
    const renamed = await clickOn(taskId, "Rename folder");
    assert.equal(renamed.outcome?.dialog?.kind, "prompt");
    assert.equal(renamed.outcome?.dialog?.defaultPrompt, "Inbox");
    await ok(h, taskId, { name: "browser_dialog", params: { accept: true, text: "Receipts" } });
    await logged(page, "renamed:Receipts");
    const notice = await clickOn(taskId, "Show notice");
    assert.equal(notice.outcome?.dialog?.message, "Your mailbox is almost full.");
    await ok(h, taskId, { name: "browser_dialog", params: { accept: true } });
    await logged(page, "notice:closed");
    assert.equal(await page.locator("#folder").innerText(), "Receipts");
  });

  it("asks before leaving a page with a draft, and leaves once the leave dialog is accepted", { timeout: 60_000 }, async () => {
    const { taskId } = await startTask(h, `${h.a}/dialogs.html?leave`);
    const { result } = await ok<DomIndexResult>(h, taskId, { name: "browser_dom_index", params: {} });
    const draft = result.elements.find((e) => e.tag === "textarea")!;
    await ok(h, taskId, { name: "browser_type", params: { clickId: draft.clickId, text: "Half a reply" } });
    const leaving = await act(h, taskId, { name: "browser_navigate", params: { url: `${h.a}/page2.html?left` } });
    assert.equal(leaving.outcome?.dialog?.kind, "beforeunload", JSON.stringify(leaving));
    await ok(h, taskId, { name: "browser_dialog", params: { accept: true } });
    await ok(h, taskId, { name: "browser_wait_for", params: { url: "page2.html?left", timeoutMs: 10_000 } });
  });

  it("is dismissed when nobody answers it in time, and the next action says so", { timeout: 60_000 }, async () => {
    await h.options.evaluate(() => chrome.storage.local.set({ dialogTimeoutMs: 1_500 }));
    try {
      const { taskId, page } = await startTask(h, `${h.a}/dialogs.html?unanswered`);
      const clicked = await clickOn(taskId, "Empty trash");
      assert.equal(clicked.outcome?.dialog?.kind, "confirm");
      await logged(page, "kept", 10_000);
      const { warnings } = await ok(h, taskId, { name: "browser_dom_index", params: {} });
      assert.match(warnings.join(" "), /confirm dialog "Delete all 3 messages.*" was dismissed \(Cancel\) after 2 s without an answer/);
      assert.equal(await page.locator("#trash").innerText(), "3 messages in the trash.");
    } finally {
      await h.options.evaluate(() => chrome.storage.local.remove("dialogTimeoutMs"));
    }
  });
});

describe("an agent run meeting a dialog", () => {
  it("shows the dialog to the model and the web app, and OK to a destructive question waits for the person", { timeout: 90_000 }, async () => {
    const url = `${h.a}/dialogs.html?agent`;
    h.mimo.llm.script([
      agentStep({ navigate: { url } }, "Opening the mail."),
      onElement("Empty trash", (index) => ({ click: { index } }), "Mail open."),
      {
        respond: ({ userText }) => {
          assert.match(userText, /dialog: the page shows a confirm dialog \(OK \/ Cancel\): "Delete all 3 messages in the trash for ever\?"/);
          return agentStep({ dialog: { accept: true } }, "The page asks to confirm.");
        },
      },
      {
        respond: ({ userText }) => {
          assert.doesNotMatch(userText, /dialog: the page shows/, "answered, the dialog is gone");
          return agentStep({ done: { success: true, text: "The trash is empty." } }, "Emptied.");
        },
      },
    ]);
    const taskId = await newTask(h.mimo);
    const web = await WebClient.connect(h.mimo, taskId);
    web.send({ type: "user_message", content: `Empty the trash at ${url}` });
    type Confirmation = Extract<FrontendEvent, { type: "confirmationRequested" }>;
    const asked = (await web.waitFor((e) => e.type === "confirmationRequested", "the confirmation", 60_000)) as Confirmation & EventEnvelope;
    assert.deepEqual(asked.action, { dialog: { accept: true } });
    assert.match(asked.reason, /“Delete all 3 messages in the trash for ever\?”/);
    const observed = web.received.filter((e): e is Extract<FrontendEvent, { type: "pageObserved" }> & EventEnvelope => e.type === "pageObserved");
    assert.equal(observed.at(-1)?.dialog?.kind, "confirm", "the web app is shown the dialog");

    web.send({ type: "confirm", step: asked.step, approve: true });
    const done = (await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 60_000)) as Extract<FrontendEvent, { type: "structuredOutput" }>;
    assert.equal(done.status, "ok", JSON.stringify(done));
    await logged(await pageAt(h, url), "emptied");
    web.close();
  });
});
