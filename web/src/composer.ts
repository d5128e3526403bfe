// The composer under the conversation: what the person writes, where the work starts (their
// current tab or Mimo's own window), the answer format, files to attach, and the task's controls
// (pause, take over, resume, stop), shown as the task's status allows.

import type { TaskStatus } from "../../protocol/ts/protocol.ts";
import { parseAnswerFormat } from "./answer.ts";
import { h } from "./dom.ts";

/** What the composer asks of the page it is on. */
export type ComposerHandlers = {
  /**
   * Returns false when the message could not be taken (the composer keeps the text).
   * `onCurrentTab`: the browser work starts on the tab the person is looking at.
   */
  onSend: (text: string, onCurrentTab: boolean, answerSchema: unknown) => boolean | Promise<boolean>;
  onStop: () => void;
  /** Hold the task where it is: what runs finishes, nothing new starts. */
  onPause: () => void;
  /** Hand the browser back to Mimo after taking over, or go on after a pause. */
  onResume: () => void;
  /** Take the browser over: the task waits, the task tab is the person's until they resume. */
  onTakeOver: () => void;
  /** The person chose files to attach to the task (none: no Attach). */
  onAttach?: (files: File[]) => void;
};

/**
 * Where the conversation and its composer are shown: the web app (`app`), or the extension's
 * side panel (`panel`), narrow, always about the tab the person is looking at: no tab choice, no
 * answer format.
 */
export type ChatPlace = "app" | "panel";

const DEFAULT_NOTE = "Enter to send · Shift+Enter for a new line";

/** Statuses in which the task is doing something that Stop can end. */
export function isActive(status: TaskStatus): boolean {
  return status === "running" || status === "ongoing" || status === "waiting_confirmation" || status === "waiting_permission" || status === "takeover" || status === "paused";
}

export class Composer {
  readonly el: HTMLFormElement;
  private readonly input: HTMLTextAreaElement;
  private readonly sendButton: HTMLButtonElement;
  private readonly stopButton: HTMLButtonElement;
  private readonly resumeButton: HTMLButtonElement;
  private readonly pauseButton: HTMLButtonElement;
  private readonly takeOverButton: HTMLButtonElement;
  private readonly note: HTMLElement;
  private readonly onCurrentTab: HTMLInputElement;
  /** The answer format (a JSON Schema) sent with each message while it is filled in. */
  private readonly answerFormat: HTMLTextAreaElement;
  private readonly answerFormatBox: HTMLElement;
  private readonly handlers: ComposerHandlers;
  private sending = false;

  constructor(handlers: ComposerHandlers, place: ChatPlace) {
    this.handlers = handlers;
    this.input = h("textarea", {
      class: "composer-input",
      "data-testid": "composer",
      rows: 1,
      placeholder: "Message Mimo…",
      "aria-label": "Message",
      onkeydown: ((e: KeyboardEvent) => {
        if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
          e.preventDefault();
          void this.submit();
        }
      }) as EventListener,
      oninput: () => this.sync(),
    });
    this.sendButton = h("button", { class: "btn btn-primary", type: "submit", "data-testid": "send", disabled: true, title: "Send (Enter)" }, "Send");
    this.resumeButton = h("button", { class: "btn", type: "button", "data-testid": "resume", hidden: true, onclick: () => this.handlers.onResume(), title: "Go on: hand the browser back to Mimo" }, "Resume");
    this.pauseButton = h("button", { class: "btn", type: "button", "data-testid": "pause", hidden: true, onclick: () => this.handlers.onPause(), title: "Pause: what runs finishes, nothing new starts until you resume" }, "Pause");
    this.takeOverButton = h("button", { class: "btn", type: "button", "data-testid": "take-over", hidden: true, onclick: () => this.handlers.onTakeOver(), title: "Take over: the task waits and the tab is yours until you resume" }, "Take over");
    this.stopButton = h("button", { class: "btn btn-danger", type: "button", "data-testid": "stop", hidden: true, onclick: () => this.handlers.onStop(), title: "Stop the task" }, h("span", { class: "stop-square" }), "Stop");
    this.note = h("div", { class: "composer-note" }, DEFAULT_NOTE);
    // Files for the agent to put into a page's file inputs; it sees their names only.
    const onAttach = this.handlers.onAttach;
    const picker = h("input", {
      type: "file",
      multiple: true,
      hidden: true,
      "data-testid": "attach-input",
      onchange: () => {
        const files = Array.from(picker.files ?? []);
        picker.value = "";
        if (files.length > 0) onAttach?.(files);
      },
    });
    this.onCurrentTab = h("input", { type: "checkbox", "data-testid": "on-current-tab" });
    const currentTab = h("label", { class: "composer-toggle", title: "Continue on the tab you are looking at instead of a window of Mimo's own" }, this.onCurrentTab, "On my current tab");
    const attachButton = h("button", { class: "btn", type: "button", "data-testid": "attach", title: "Attach files for Mimo to upload into pages", onclick: () => picker.click() }, "Attach");
    this.answerFormat = h("textarea", {
      class: "answer-format-input",
      "data-testid": "answer-format",
      rows: 4,
      spellcheck: false,
      placeholder: '{"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}, "price": {"type": "number"}}, "required": ["name", "price"]}}',
      "aria-label": "Answer format (JSON Schema)",
    });
    this.answerFormatBox = h(
      "div",
      { class: "answer-format", hidden: true },
      h("div", { class: "answer-format-label" }, "Answer format — a JSON Schema the answer's data must match (sent with each message while filled in)"),
      this.answerFormat,
    );
    const formatButton = h("button", {
      class: "btn",
      type: "button",
      "data-testid": "answer-format-toggle",
      title: "Ask for the answer as data in a format of yours (JSON Schema)",
      onclick: () => {
        this.answerFormatBox.hidden = !this.answerFormatBox.hidden;
        if (!this.answerFormatBox.hidden) this.answerFormat.focus();
      },
    }, "Format");
    this.el = h(
      "form",
      { class: "composer", onsubmit: ((e: Event) => { e.preventDefault(); void this.submit(); }) as EventListener },
      this.answerFormatBox,
      h(
        "div",
        { class: "composer-box" },
        this.input,
        // Send stays in reach: the other buttons scroll within their row when it is too narrow.
        h("div", { class: "composer-row" }, h("div", { class: "composer-actions" }, ...(place === "app" ? [currentTab, formatButton] : []), ...(onAttach !== undefined ? [picker, attachButton] : []), this.pauseButton, this.takeOverButton, this.resumeButton, this.stopButton), this.sendButton),
      ),
      this.note,
    );
  }

  focus(): void {
    this.input.focus();
  }

  /** A note under the composer (a warning), or the usual hint (`null`). */
  setNote(text: string | null): void {
    this.note.textContent = text ?? DEFAULT_NOTE;
    this.note.classList.toggle("warn", text !== null);
  }

  /** Shows the task's controls its status allows. */
  setStatus(status: TaskStatus): void {
    this.stopButton.hidden = !isActive(status);
    // The person took over the browser, or paused: automation waits until they resume.
    this.resumeButton.hidden = !(status === "takeover" || status === "paused");
    this.pauseButton.hidden = !(status === "running" || status === "ongoing");
    this.takeOverButton.hidden = this.pauseButton.hidden;
    this.sync();
  }

  private sync(): void {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight, 200)}px`;
    this.sendButton.disabled = this.sending || this.input.value.trim() === "";
  }

  private async submit(): Promise<void> {
    const text = this.input.value.trim();
    if (!text || this.sending) return;
    const format = parseAnswerFormat(this.answerFormat.value);
    if (format.error !== undefined) {
      this.answerFormatBox.hidden = false;
      this.setNote(format.error);
      return;
    }
    this.sending = true;
    this.sync();
    try {
      if (await this.handlers.onSend(text, this.onCurrentTab.checked, format.schema)) {
        this.input.value = "";
        this.onCurrentTab.checked = false;
      }
    } finally {
      this.sending = false;
      this.sync();
      this.input.focus();
    }
  }
}
