import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { PageDialog } from "../../protocol/ts/protocol.ts";
import { dialogFromCdp, heldByDialog, PageDialogs } from "../src/dialogs.ts";
import { ActionError, errorOutcome, successOutcome } from "../src/results.ts";

const CONFIRM: PageDialog = { kind: "confirm", message: "Delete everything in the trash?", url: "http://shop.test/trash" };

/** Dialogs with timers run by hand and every answer recorded. */
function harness(opts: { held?: boolean; answerFails?: boolean } = {}) {
  const timers: Array<{ run: () => void; ms: number; cleared: boolean }> = [];
  const answers: Array<[number, boolean, string | undefined]> = [];
  let held = opts.held ?? false;
  const dialogs = new PageDialogs({
    async answer(tabId, accept, text) {
      if (opts.answerFails) throw new Error("No dialog is showing");
      answers.push([tabId, accept, text]);
    },
    timeoutMs: async () => 5_000,
    heldForPerson: async () => held,
    setTimer(run, ms) {
      const timer = { run, ms, cleared: false };
      timers.push(timer);
      return timer;
    },
    clearTimer(timer) {
      (timer as { cleared: boolean }).cleared = true;
    },
  });
  const fire = async () => {
    const live = timers.filter((t) => !t.cleared);
    for (const t of live) t.cleared = true;
    for (const t of live) t.run();
    await new Promise((r) => setTimeout(r, 0));
  };
  return { dialogs, timers, answers, fire, release: () => (held = false) };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe("JavaScript dialogs in task tabs", () => {
  it("reads CDP's dialog event, and only the kinds it knows", () => {
    assert.deepEqual(dialogFromCdp({ type: "prompt", message: "Your name?", url: "http://x/", defaultPrompt: "Ann", hasBrowserHandler: true }), {
      kind: "prompt",
      message: "Your name?",
      url: "http://x/",
      defaultPrompt: "Ann",
    });
    assert.deepEqual(dialogFromCdp({ type: "confirm", message: "Sure?", url: "http://x/", defaultPrompt: "" }), { kind: "confirm", message: "Sure?", url: "http://x/" });
    assert.equal(dialogFromCdp({ type: "print" }), null);
    assert.equal(dialogFromCdp(undefined), null);
  });

  it("tells a watcher of a dialog that opens, and answers it once", async () => {
    const { dialogs, answers } = harness();
    const watch = dialogs.watch(7);
    const other = dialogs.watch(8);
    dialogs.opened(7, CONFIRM);
    assert.deepEqual(await watch.opened, CONFIRM);
    watch.cancel();
    other.cancel();
    assert.deepEqual(dialogs.current(7), CONFIRM);
    assert.equal(dialogs.current(8), undefined);

    assert.deepEqual(await dialogs.answer(7, true), CONFIRM);
    assert.deepEqual(answers, [[7, true, undefined]]);
    assert.equal(dialogs.current(7), undefined);
    await assert.rejects(dialogs.answer(7, true), (e: unknown) => e instanceof ActionError && e.code === "TARGET_NOT_FOUND");
  });

  it("forgets a dialog the person answered or the page closed", () => {
    const { dialogs, timers } = harness();
    dialogs.opened(7, CONFIRM);
    dialogs.closed(7);
    assert.equal(dialogs.current(7), undefined);
    assert.ok(timers.every((t) => t.cleared), "its timer is stopped");
  });

  it("dismisses a dialog nobody answers in time, and says so once with the tab's next action", async () => {
    const { dialogs, answers, timers, fire } = harness();
    dialogs.opened(7, CONFIRM);
    await settle();
    assert.equal(timers[0]?.ms, 5_000);
    await fire();
    assert.deepEqual(answers, [[7, false, undefined]], "Cancel");
    assert.equal(dialogs.current(7), undefined);
    const notes = dialogs.takeNotes(7);
    assert.equal(notes.length, 1);
    assert.match(notes[0]!, /confirm dialog "Delete everything in the trash\?" was dismissed \(Cancel\) after 5 s/);
    assert.deepEqual(dialogs.takeNotes(7), []);
  });

  it("lets a dialog wait while its task waits for the person, then dismisses it", async () => {
    const { dialogs, answers, timers, fire, release } = harness({ held: true });
    dialogs.opened(7, CONFIRM);
    await settle();
    await fire();
    await settle();
    assert.deepEqual(answers, [], "not dismissed while the person is asked");
    assert.equal(timers.filter((t) => !t.cleared).length, 1, "armed again");
    release();
    await fire();
    assert.deepEqual(answers, [[7, false, undefined]]);
  });

  it("does not report a dialog that went away before its time as dismissed", async () => {
    const { dialogs, fire } = harness({ answerFails: true });
    dialogs.opened(7, CONFIRM);
    await settle();
    await fire();
    assert.equal(dialogs.current(7), undefined);
    assert.deepEqual(dialogs.takeNotes(7), []);
  });

  it("carries the dialog into the action's outcome, refused or ended by it", () => {
    const ids = { actionId: "a", attempt: 1, taskId: "t" };
    const refused = errorOutcome(ids, heldByDialog(CONFIRM));
    assert.equal(refused.error?.code, "TARGET_NOT_INTERACTABLE");
    assert.match(refused.error!.message, /confirm dialog "Delete everything in the trash\?".*browser_dialog/);
    assert.deepEqual(refused.dialog, CONFIRM);
    assert.deepEqual(successOutcome(ids, { result: {}, dialog: CONFIRM }).dialog, CONFIRM);
    assert.equal("dialog" in successOutcome(ids, { result: {} }), false);
  });
});
