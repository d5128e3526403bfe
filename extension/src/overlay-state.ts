// What the overlay in a task tab shows (seed 000 §2.2) for each task status the server reports
// (`task_state`): `ongoing` while the agent works (it controls the tab; the person's own input
// takes over), `waiting` while a step waits for the person's confirmation and `paused` while
// they paused the task (a small note that says so; the page is theirs meanwhile), `hidden`
// while the task waits for their next message, `takeover` while the person has control, `idle`
// once the task ended. And the short label that
// says what Mimo is doing, from the action's label in `ACTION_TRAITS`. Pure: tested under
// node:test.
import { ACTION_TRAITS } from "../../protocol/ts/protocol.ts";
import type { BrowserAction, Target, TaskStatus } from "../../protocol/ts/protocol.ts";
import type { FrameRequest, OverlayState } from "./frame-protocol.ts";
import type { TaskRecord } from "./tasks.ts";

export function overlayFor(status: TaskStatus): OverlayState {
  switch (status) {
    case "running":
      return "ongoing";
    case "takeover":
      return "takeover";
    case "waiting_confirmation":
      return "waiting";
    case "paused":
      return "paused";
    case "created":
    case "ongoing":
    // The page it waits for is one the content script may not run on; the side panel asks.
    case "waiting_permission":
      return "hidden";
    case "completed":
    case "error":
    case "canceled":
      return "idle";
  }
}

/** What a task's overlay shows now. */
export function overlayOf(task: TaskRecord): Extract<FrameRequest, { op: "overlay" }> {
  return task.label === undefined ? { op: "overlay", state: task.overlay } : { op: "overlay", state: task.overlay, label: task.label };
}

/**
 * What the overlay shows while one of the task's actions runs: `ongoing` (Mimo controls the
 * tab; the person's own input takes over) in a task that is running, or that waits for what's
 * next (`hidden`) and has an action under way — one the developer API sent (seed 000 §2.2) —,
 * whatever else it shows otherwise.
 */
export function overlayWhileActing(overlay: OverlayState): OverlayState {
  return overlay === "hidden" ? "ongoing" : overlay;
}

/** The element as the person reads it: `[12]`, `//input[1]`, `#save`, `"Save"`, `button "Save"`. */
function target(p: Target): string {
  if (p.clickId !== undefined) return `[${p.clickId}]`;
  const label = p.label !== undefined ? JSON.stringify(p.label) : undefined;
  if (p.role !== undefined) return label !== undefined ? `${p.role} ${label}` : `a ${p.role}`;
  return p.xpath ?? p.selector ?? label ?? "the page";
}

function short(text: string, max = 40): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** One `{…}` of a label template (see `ActionTraits.label`) filled from the action's params. */
function slot(spec: string, params: Record<string, unknown>): string {
  const [names = "", format] = spec.split(":");
  if (names === "target") return target(params);
  const value = names.split("|").map((name) => params[name]).find((v) => v !== undefined && v !== null);
  if (value === undefined) return "the page";
  return format === "quoted" ? JSON.stringify(value) : String(value);
}

/** "clicking [12]", "typing into [3]", "reading the page"…: the action's label with its params. */
export function actionLabel(action: BrowserAction): string {
  const params = action.params as Record<string, unknown>;
  return ACTION_TRAITS[action.name].label.replace(/\{([^}]*)\}/g, (_, spec: string) => short(slot(spec, params)));
}
