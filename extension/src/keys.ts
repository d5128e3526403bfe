// Key names as the model writes them ("Enter", "ctrl+a", "ArrowDown", "a") to the fields of
// CDP's `Input.dispatchKeyEvent` and of DOM KeyboardEvents. Pure: tested under node:test.
import { ActionError } from "./results.ts";

export type KeySpec = {
  key: string;
  code: string;
  keyCode: number;
  /** Text the key types (printable keys and Enter), for CDP's keyDown. */
  text?: string;
  /** CDP modifier bits: Alt 1, Ctrl 2, Meta 4, Shift 8. */
  modifiers: number;
};

const NAMED: Record<string, [key: string, code: string, keyCode: number, text?: string]> = {
  enter: ["Enter", "Enter", 13, "\r"],
  return: ["Enter", "Enter", 13, "\r"],
  tab: ["Tab", "Tab", 9],
  escape: ["Escape", "Escape", 27],
  esc: ["Escape", "Escape", 27],
  backspace: ["Backspace", "Backspace", 8],
  delete: ["Delete", "Delete", 46],
  space: [" ", "Space", 32, " "],
  arrowup: ["ArrowUp", "ArrowUp", 38],
  arrowdown: ["ArrowDown", "ArrowDown", 40],
  arrowleft: ["ArrowLeft", "ArrowLeft", 37],
  arrowright: ["ArrowRight", "ArrowRight", 39],
  up: ["ArrowUp", "ArrowUp", 38],
  down: ["ArrowDown", "ArrowDown", 40],
  left: ["ArrowLeft", "ArrowLeft", 37],
  right: ["ArrowRight", "ArrowRight", 39],
  home: ["Home", "Home", 36],
  end: ["End", "End", 35],
  pageup: ["PageUp", "PageUp", 33],
  pagedown: ["PageDown", "PageDown", 34],
};

const MODIFIERS: Record<string, number> = { alt: 1, option: 1, ctrl: 2, control: 2, meta: 4, cmd: 4, command: 4, shift: 8 };

export function parseKey(input: string): KeySpec {
  const parts = input === "+" ? ["+"] : input.split("+").filter((p) => p !== "");
  if (parts.length === 0) throw new ActionError("SCHEMA_VALIDATION_FAILED", "name a key, e.g. Enter, Escape, ArrowDown, ctrl+a");
  let modifiers = 0;
  for (const m of parts.slice(0, -1)) {
    const bit = MODIFIERS[m.toLowerCase()];
    if (bit === undefined) throw new ActionError("SCHEMA_VALIDATION_FAILED", `unknown modifier ${JSON.stringify(m)} in ${JSON.stringify(input)}`);
    modifiers |= bit;
  }
  const last = parts[parts.length - 1]!;
  const named = NAMED[last.toLowerCase()];
  if (named !== undefined) {
    const [key, code, keyCode, text] = named;
    const spec: KeySpec = { key, code, keyCode, modifiers };
    if (text !== undefined && (modifiers & ~8) === 0) spec.text = text;
    return spec;
  }
  const fn = /^f([1-9]|1[0-2])$/i.exec(last);
  if (fn !== null) return { key: `F${fn[1]}`, code: `F${fn[1]}`, keyCode: 111 + Number(fn[1]), modifiers };
  if ([...last].length === 1) {
    const upper = last.toUpperCase();
    const letter = /[A-Z]/.test(upper);
    const digit = /[0-9]/.test(last);
    const code = letter ? `Key${upper}` : digit ? `Digit${last}` : "";
    const keyCode = letter || digit ? upper.charCodeAt(0) : 0;
    const shifted = (modifiers & 8) !== 0 && letter ? upper : last;
    const spec: KeySpec = { key: shifted, code, keyCode, modifiers };
    if ((modifiers & ~8) === 0) spec.text = shifted;
    return spec;
  }
  throw new ActionError("SCHEMA_VALIDATION_FAILED", `unknown key ${JSON.stringify(last)}`);
}
