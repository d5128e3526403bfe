// The overlay in the task tab's top frame, drawn in a shadow root so the page's CSS cannot
// reach it (seed 000 §2.2): `idle` and `hidden` show nothing; `ongoing` a thin border and a
// small label saying what Mimo does, with a "Take over" button; `waiting` and `paused` a small
// note in a corner that takes no clicks (whatever it lies over still gets them); `takeover` a
// bar with "Resume" and "Stop". Only the label and the bar take clicks; the border lets them
// through.
//
// The page must not press these buttons for the person (Resume hands the tab back to the agent):
// the shadow root is closed, so the page's scripts cannot reach into it, and a click counts only
// when the browser made it from real input (`isTrusted`), never when a script dispatched it.
import type { OverlayState } from "../frame-protocol.ts";
import { OVERLAY_HOST_ID } from "./dom.ts";

const CSS = `
:host { all: initial; }
.frame { position: fixed; inset: 0; border: 3px solid #7c4dff; box-sizing: border-box; pointer-events: none; z-index: 2147483647; }
.label, .bar { position: fixed; z-index: 2147483647; font: 13px/1.3 system-ui, sans-serif; color: #fff; background: #311b92ee;
  border-radius: 8px; padding: 6px 8px 6px 12px; display: flex; gap: 10px; align-items: center; pointer-events: auto; box-shadow: 0 2px 10px #0004; }
.label { right: 12px; bottom: 12px; max-width: 60vw; }
.label span { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.bar { left: 50%; top: 12px; transform: translateX(-50%); }
.note { right: 12px; bottom: 12px; padding: 6px 12px; pointer-events: none; opacity: 0.92; }
button { font: inherit; color: #311b92; background: #fff; border: 0; border-radius: 6px; padding: 3px 10px; cursor: pointer; }
button.stop { color: #b71c1c; }
`;

export type OverlayHandlers = { takeOver(): void; resume(): void; stop(): void };

export class Overlay {
  readonly #handlers: OverlayHandlers;
  #host: HTMLElement | null = null;
  #root: ShadowRoot | null = null;
  state: OverlayState = "idle";
  label = "";
  /** Hidden for a moment (our own input, a screenshot) without changing state. */
  #suspended = false;

  constructor(handlers: OverlayHandlers) {
    this.#handlers = handlers;
  }

  /** Whether an event came from the overlay itself. */
  owns(event: Event): boolean {
    return this.#host !== null && event.composedPath().includes(this.#host);
  }

  set(state: OverlayState, label?: string): void {
    this.state = state;
    if (label !== undefined) this.label = label;
    this.#render();
  }

  suspend(on: boolean): void {
    if (this.#suspended === on) return;
    this.#suspended = on;
    if (this.#host) this.#host.style.display = on ? "none" : "";
  }

  #ensureHost(): ShadowRoot {
    if (this.#host === null || !this.#host.isConnected) {
      const host = document.createElement("div");
      host.id = OVERLAY_HOST_ID;
      const root = host.attachShadow({ mode: "closed" });
      const style = document.createElement("style");
      style.textContent = CSS;
      root.append(style);
      document.documentElement.append(host);
      this.#host = host;
      this.#root = root;
    }
    return this.#root!;
  }

  #render(): void {
    if (this.state === "idle" || this.state === "hidden") {
      if (this.#host !== null) {
        this.#host.remove();
        this.#host = null;
      }
      return;
    }
    const root = this.#ensureHost();
    this.#host!.dataset.state = this.state;
    this.#host!.dataset.label = this.label;
    if (this.#suspended) this.#host!.style.display = "none";
    for (const el of Array.from(root.children)) if (el.tagName !== "STYLE") el.remove();
    if (this.state === "ongoing") {
      const frame = document.createElement("div");
      frame.className = "frame";
      const label = document.createElement("div");
      label.className = "label";
      const text = document.createElement("span");
      text.textContent = `Mimo: ${this.label || "working"}`;
      const take = this.#button("Take over", "take", () => this.#handlers.takeOver());
      label.append(text, take);
      root.append(frame, label);
    } else if (this.state === "waiting" || this.state === "paused") {
      const note = document.createElement("div");
      note.className = "label note";
      note.textContent = this.state === "waiting" ? "Mimo is waiting for you: confirm or decline the step in Mimo" : "Mimo is paused: resume it in Mimo";
      root.append(note);
    } else {
      const bar = document.createElement("div");
      bar.className = "bar";
      const text = document.createElement("span");
      text.textContent = "You have control: Mimo is paused.";
      bar.append(text, this.#button("Resume", "resume", () => this.#handlers.resume()), this.#button("Stop", "stop", () => this.#handlers.stop()));
      root.append(bar);
    }
  }

  #button(text: string, cls: string, onClick: () => void): HTMLButtonElement {
    const b = document.createElement("button");
    b.textContent = text;
    b.className = cls;
    b.addEventListener("click", (e) => {
      e.stopPropagation();
      if (e.isTrusted) onClick();
    });
    return b;
  }
}
