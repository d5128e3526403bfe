// How many times a page changed: counted by its content script, read by the readable-text
// reader (readability-page.ts), another bundle in the same isolated world, through a global. Its
// text read at one count is still the page's text at the same count (and window): the reader
// gives it again instead of taking the page apart once more (hundreds of milliseconds on a huge
// page), as after a scroll, typing, or a step that changed nothing.
//
// What counts: any change of the document that is not ours (content/changes.ts), and what a
// person or a step does that can show or hide something without one — the pointer over an
// element (a menu that `:hover` opens), the focus, keys, input, and the end of a transition or
// an animation.

declare global {
  // eslint-disable-next-line no-var
  var __mimoPageChanges: number | undefined;
}

/** Events after which the page may look different without a change of its document. */
export const CHANGING_EVENTS = ["pointerover", "pointerdown", "focusin", "keydown", "input", "change", "toggle", "transitionend", "animationend"] as const;

/** Counting starts (a frame's content script, once). */
export function countPageChanges(): void {
  globalThis.__mimoPageChanges ??= 0;
}

export function pageChanged(): void {
  globalThis.__mimoPageChanges = (globalThis.__mimoPageChanges ?? 0) + 1;
}

/** The count, or undefined where no content script counts (nothing read may be given again). */
export function pageChanges(): number | undefined {
  return globalThis.__mimoPageChanges;
}
