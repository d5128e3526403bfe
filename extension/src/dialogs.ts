// JavaScript dialogs (alert, confirm, prompt, "leave this page?") in task tabs, as CDP reports
// them (`Page.javascriptDialogOpening` / `Page.javascriptDialogClosed`). While one is open the
// page's scripts are held — a content-script call would wait for the answer — so an action that
// opens one ends at once and says so, every other action is refused until it is answered
// (`browser_dialog`), and one nobody answers is dismissed after a while and reported with the
// tab's next action: a dialog never hangs a task.
//
// Chrome is reached only through `DialogDeps`, so this runs under node:test.
import type { DialogKind, PageDialog } from "../../protocol/ts/protocol.ts";
import { ActionError } from "./results.ts";
import { Waiters } from "./waiters.ts";

/** How long a dialog may wait for an answer before it is dismissed (setting `dialogTimeoutMs`). */
export const DEFAULT_DIALOG_TIMEOUT_MS = 60_000;
export const DIALOG_TIMEOUT_KEY = "dialogTimeoutMs";

export type DialogDeps = {
  /** Answers the tab's dialog (`Page.handleJavaScriptDialog`). */
  answer(tabId: number, accept: boolean, text?: string): Promise<void>;
  /** How long an unanswered dialog waits, read when it opens. */
  timeoutMs(): Promise<number>;
  /** Whether the tab's task waits for the person (a confirmation, a takeover): its dialog waits too. */
  heldForPerson(tabId: number): Promise<boolean>;
  setTimer(run: () => void, ms: number): unknown;
  clearTimer(timer: unknown): void;
};

type Open = { dialog: PageDialog; timer?: unknown };

const KINDS: ReadonlySet<string> = new Set<DialogKind>(["alert", "confirm", "prompt", "beforeunload"]);

/** The dialog of a CDP `Page.javascriptDialogOpening` event, or null for one we do not know. */
export function dialogFromCdp(params: unknown): PageDialog | null {
  const p = params as { type?: unknown; message?: unknown; url?: unknown; defaultPrompt?: unknown } | undefined;
  if (p === undefined || typeof p.type !== "string" || !KINDS.has(p.type)) return null;
  const dialog: PageDialog = { kind: p.type as DialogKind, message: typeof p.message === "string" ? p.message : "", url: typeof p.url === "string" ? p.url : "" };
  if (p.type === "prompt" && typeof p.defaultPrompt === "string") dialog.defaultPrompt = p.defaultPrompt;
  return dialog;
}

/** How a dialog is named to the model and the person. */
export function describeDialog(dialog: PageDialog): string {
  const kind = dialog.kind === "beforeunload" ? '"leave this page?" dialog' : dialog.kind === "alert" ? "alert" : `${dialog.kind} dialog`;
  return `${kind} ${JSON.stringify(dialog.message.length > 200 ? `${dialog.message.slice(0, 199)}…` : dialog.message)}`;
}

/** The refusal of an action that cannot run while the page shows `dialog`. */
export function heldByDialog(dialog: PageDialog): ActionError {
  return new ActionError(
    "TARGET_NOT_INTERACTABLE",
    `the page shows a ${describeDialog(dialog)}: nothing else on it can be used until it is answered (browser_dialog)`,
    false,
    dialog,
  );
}

export class PageDialogs {
  readonly #deps: DialogDeps;
  readonly #open = new Map<number, Open>();
  readonly #waiters = new Waiters<number, PageDialog>();
  /** What became of dialogs nobody answered, told with the tab's next action. */
  readonly #notes = new Map<number, string[]>();

  constructor(deps: DialogDeps) {
    this.#deps = deps;
  }

  /** The dialog open in the tab now. */
  current(tabId: number): PageDialog | undefined {
    return this.#open.get(tabId)?.dialog;
  }

  /** CDP says a dialog opened. */
  opened(tabId: number, dialog: PageDialog): void {
    this.#forget(tabId);
    const open: Open = { dialog };
    this.#open.set(tabId, open);
    void this.#arm(tabId, open);
    this.#waiters.tell(tabId, dialog);
  }

  /** CDP says the dialog closed (answered by us, by the person, or the tab navigated). */
  closed(tabId: number): void {
    this.#forget(tabId);
  }

  /** A dialog opening in the tab from now on; `cancel` stops watching. */
  watch(tabId: number): { opened: Promise<PageDialog>; cancel(): void } {
    const { next, cancel } = this.#waiters.watch(tabId);
    return { opened: next, cancel };
  }

  /** Answers the tab's dialog: OK (`accept`) or Cancel, with `text` for a prompt. */
  async answer(tabId: number, accept: boolean, text?: string): Promise<PageDialog> {
    const open = this.current(tabId);
    if (open === undefined) throw new ActionError("TARGET_NOT_FOUND", "no dialog is open on the page", false);
    await this.#deps.answer(tabId, accept, text);
    if (this.current(tabId) === open) this.#forget(tabId);
    return open;
  }

  /** What became of the tab's unanswered dialogs since its last action (once). */
  takeNotes(tabId: number): string[] {
    const notes = this.#notes.get(tabId) ?? [];
    this.#notes.delete(tabId);
    return notes;
  }

  #forget(tabId: number): void {
    const open = this.#open.get(tabId);
    if (open?.timer !== undefined) this.#deps.clearTimer(open.timer);
    this.#open.delete(tabId);
  }

  async #arm(tabId: number, open: Open): Promise<void> {
    const ms = await this.#deps.timeoutMs();
    if (this.#open.get(tabId) !== open) return;
    open.timer = this.#deps.setTimer(() => void this.#expire(tabId, open, ms), ms);
  }

  /** Nobody answered in time: dismissed (Cancel; "stay" for leaving), unless the person is asked something. */
  async #expire(tabId: number, open: Open, ms: number): Promise<void> {
    if (this.#open.get(tabId) !== open) return;
    if (await this.#deps.heldForPerson(tabId)) {
      void this.#arm(tabId, open);
      return;
    }
    if (this.#open.get(tabId) !== open) return;
    const note = `the page's ${describeDialog(open.dialog)} was dismissed (Cancel) after ${Math.round(ms / 1000)} s without an answer`;
    try {
      await this.#deps.answer(tabId, false);
    } catch {
      // Already gone (the tab closed or navigated): nothing is held any more.
      this.#forget(tabId);
      return;
    }
    this.#forget(tabId);
    this.#notes.set(tabId, [...(this.#notes.get(tabId) ?? []), note]);
  }
}
