// The overlay in the task tab's top frame, drawn in a shadow root so the page's CSS cannot
// reach it (seed 000 §2.2): `idle` and `hidden` show nothing; `ongoing` a thin border and a
// small label saying what Mimo does, with a "Take over" button; `waiting` and `paused` a small
// note in a corner that takes no clicks (whatever it lies over still gets them); `takeover` a
// bar with "Resume" and "Stop". Only the label and the bar take clicks; the border lets them
// through.
//
// The label, the note and the bar never lie over the page's controls: each goes to the first
// corner (or edge) of the viewport with nothing there a person could click (`#place`), again
// as the page scrolls or resizes: a person who takes over must reach everything of the page.
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
:host([data-suspended]) .label, :host([data-suspended]) .bar { pointer-events: none; }
`;

export type OverlayHandlers = { takeOver(): void; resume(): void; stop(): void };

/** What a person clicks or types into: what the overlay must not cover. */
const CONTROLS =
  'a[href], button, input, select, textarea, summary, label, [role="button"], [role="link"], [role="checkbox"], [role="radio"], [role="tab"], [role="menuitem"], [role="switch"], [contenteditable=""], [contenteditable="true"], [tabindex]:not([tabindex="-1"])';

type Spot = { vertical: "top" | "bottom"; horizontal: "left" | "center" | "right" };

const spot = (vertical: Spot["vertical"], horizontal: Spot["horizontal"]): Spot => ({ vertical, horizontal });
/** Where the label and the note go, best first (where a person looks least). */
const CORNERS = [spot("bottom", "right"), spot("bottom", "left"), spot("top", "right"), spot("top", "left"), spot("bottom", "center"), spot("top", "center")];
/** Where the takeover bar goes, best first (where a person sees it). */
const EDGES = [spot("top", "center"), spot("bottom", "center"), spot("top", "right"), spot("top", "left"), spot("bottom", "right"), spot("bottom", "left")];
/** Distance from the viewport's edge, in CSS pixels. */
const MARGIN = 12;

export class Overlay {
  readonly #handlers: OverlayHandlers;
  #host: HTMLElement | null = null;
  #root: ShadowRoot | null = null;
  state: OverlayState = "idle";
  label = "";
  /** Out of the way of our own input for a moment: it takes no clicks, and looks the same. */
  #suspended = false;
  /** Not drawn for a moment (a screenshot), without changing state. */
  #hidden = false;
  /** The box shown (label, note or bar), and where it may go. */
  #box: { el: HTMLElement; spots: Spot[] } | null = null;
  /** Hides a lingering label (see `set`). */
  #lingering: ReturnType<typeof setTimeout> | undefined;
  /** The text of the `ongoing` label, while it is shown. */
  #text: HTMLElement | null = null;
  #placing = false;

  constructor(handlers: OverlayHandlers) {
    this.#handlers = handlers;
    const again = () => this.#placeSoon();
    addEventListener("scroll", again, { passive: true, capture: true });
    addEventListener("resize", again, { passive: true });
  }

  /** Whether an event came from the overlay itself. */
  owns(event: Event): boolean {
    return this.#host !== null && event.composedPath().includes(this.#host);
  }

  /**
   * Shows `state`. `lingerMs`: an `ongoing` label that goes `hidden` stays drawn this long
   * first, unless something else is shown meanwhile: one action after another (the developer
   * API's) keeps one label that says what each does, rather than the label coming and going
   * with each. A page whose drawing changes has the browser draw a frame before it hands it the
   * next click, so each coming and going made every click slower.
   */
  set(state: OverlayState, label?: string, lingerMs = 0): void {
    clearTimeout(this.#lingering);
    if (lingerMs > 0 && state === "hidden" && this.state === "ongoing") {
      this.#lingering = setTimeout(() => this.set(state), lingerMs);
      return;
    }
    const relabel = state === "ongoing" && this.state === "ongoing" && this.#text !== null && this.#host?.isConnected === true;
    const unchanged = relabel && (label === undefined || label === this.label);
    this.state = state;
    if (label !== undefined) this.label = label;
    if (unchanged) return;
    if (!relabel) return this.#render();
    // Each action says what it does: only the text changes, and the box is placed again at the
    // next frame. Placing it hit-tests the page, which after a change costs a huge page tens of
    // milliseconds: the action it labels does not wait for that.
    this.#host!.dataset.label = this.label;
    this.#text!.textContent = this.#labelText();
    this.#placeSoon();
  }

  /**
   * Our own input goes through the label and the bar to the page beneath. Nothing is hidden or
   * moved for it: a page whose drawing changed makes the browser draw a frame before it hands
   * the click to the page (hiding and showing the label made a click ~8 ms slower). `hide`: not
   * drawn at all meanwhile (a screenshot is taken, which draws a frame anyway).
   */
  suspend(on: boolean, hide = false): void {
    const hidden = on && hide;
    if (this.#suspended === on && this.#hidden === hidden) return;
    const shownAgain = this.#hidden && !hidden;
    this.#suspended = on;
    this.#hidden = hidden;
    this.#suspendHost();
    // Shown again where it was; placed again at the next frame (the page may have moved).
    if (shownAgain) this.#placeSoon();
  }

  /** Puts the host as `suspend` says, touching only what differs (each change is a redraw). */
  #suspendHost(): void {
    const host = this.#host;
    if (host === null) return;
    if (host.hasAttribute("data-suspended") !== this.#suspended) host.toggleAttribute("data-suspended", this.#suspended);
    const display = this.#hidden ? "none" : "";
    if (host.style.display !== display) host.style.display = display;
  }

  #labelText(): string {
    return `Mimo: ${this.label || "working"}`;
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
    this.#text = null;
    if (this.state === "idle" || this.state === "hidden") {
      this.#box = null;
      if (this.#host !== null) {
        this.#host.remove();
        this.#host = null;
      }
      return;
    }
    const root = this.#ensureHost();
    this.#host!.dataset.state = this.state;
    this.#host!.dataset.label = this.label;
    this.#suspendHost();
    for (const el of Array.from(root.children)) if (el.tagName !== "STYLE") el.remove();
    if (this.state === "ongoing") {
      const frame = document.createElement("div");
      frame.className = "frame";
      const label = document.createElement("div");
      label.className = "label";
      const text = document.createElement("span");
      text.textContent = this.#labelText();
      this.#text = text;
      const take = this.#button("Take over", "take", () => this.#handlers.takeOver());
      label.append(text, take);
      root.append(frame, label);
      this.#box = { el: label, spots: CORNERS };
    } else if (this.state === "waiting" || this.state === "paused") {
      const note = document.createElement("div");
      note.className = "label note";
      note.textContent = this.state === "waiting" ? "Mimo is waiting for you: confirm or decline the step in Mimo" : "Mimo is paused: resume it in Mimo";
      root.append(note);
      this.#box = { el: note, spots: CORNERS };
    } else {
      const bar = document.createElement("div");
      bar.className = "bar";
      const text = document.createElement("span");
      text.textContent = "You have control: Mimo is paused.";
      bar.append(text, this.#button("Resume", "resume", () => this.#handlers.resume()), this.#button("Stop", "stop", () => this.#handlers.stop()));
      root.append(bar);
      this.#box = { el: bar, spots: EDGES };
    }
    // Placed at the next frame, unseen (and not in the way of a click) until then: placing
    // hit-tests the page, which costs a huge page tens of milliseconds that the action drawing
    // it would otherwise wait for.
    this.#box.el.style.visibility = "hidden";
    this.#placeSoon();
  }

  #placeSoon(): void {
    if (this.#placing || this.#box === null) return;
    this.#placing = true;
    requestAnimationFrame(() => {
      this.#placing = false;
      this.#place();
    });
  }

  /** Moves the box shown to the first of its spots where it covers none of the page's controls. */
  #place(): void {
    const box = this.#box;
    if (box === null || !box.el.isConnected || this.#hidden) return;
    const { width, height } = box.el.getBoundingClientRect();
    const viewport = { width: document.documentElement.clientWidth || innerWidth, height: document.documentElement.clientHeight || innerHeight };
    const at = (s: Spot) => ({
      left: s.horizontal === "left" ? MARGIN : s.horizontal === "right" ? viewport.width - MARGIN - width : (viewport.width - width) / 2,
      top: s.vertical === "top" ? MARGIN : viewport.height - MARGIN - height,
    });
    const free = box.spots.map(at).find((p) => !this.#coversControl(p.left, p.top, width, height)) ?? at(box.spots[0]!);
    Object.assign(box.el.style, { left: `${Math.max(0, free.left)}px`, top: `${Math.max(0, free.top)}px`, right: "auto", bottom: "auto", transform: "none", visibility: "" });
  }

  /** Whether a control of the page shows anywhere in the box (sampled on a grid). */
  #coversControl(left: number, top: number, width: number, height: number): boolean {
    for (const fx of [0.02, 0.25, 0.5, 0.75, 0.98]) {
      for (const fy of [0.1, 0.5, 0.9]) {
        const under = document.elementsFromPoint(left + fx * width, top + fy * height).find((el) => el !== this.#host);
        if (under?.closest(CONTROLS)) return true;
      }
    }
    return false;
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
