// What the overlay in a task tab shows (seed 000 §2.2) for each task status the server reports
// (`task_state`): `ongoing` while the agent works (it controls the tab; the person's own input
// takes over), `hidden` while the task waits (for the person's next message or confirmation),
// `takeover` while the person has control, `idle` once the task ended. And the short label that
// says what Mimo is doing. Pure: tested under node:test.
import type { BrowserAction, TaskStatus } from "../../protocol/ts/protocol.ts";
import type { OverlayState } from "./frame-protocol.ts";

export function overlayFor(status: TaskStatus): OverlayState {
  switch (status) {
    case "running":
      return "ongoing";
    case "takeover":
      return "takeover";
    case "created":
    case "ongoing":
    case "waiting_confirmation":
      return "hidden";
    case "completed":
    case "error":
    case "canceled":
      return "idle";
  }
}

function target(p: { clickId?: number; xpath?: string }): string {
  return p.clickId !== undefined ? `[${p.clickId}]` : p.xpath !== undefined ? p.xpath : "the page";
}

function short(text: string, max = 40): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** "clicking [12]", "typing into [3]", "reading the page"… */
export function actionLabel(action: BrowserAction): string {
  switch (action.name) {
    case "task_start":
      return "starting";
    case "task_stop":
      return "stopping";
    case "browser_debugger_attach":
      return "getting ready";
    case "browser_wait_for_loaded":
      return "waiting for the page to load";
    case "browser_screenshot":
      return "taking a screenshot";
    case "browser_readability_extract":
    case "browser_dom_index":
    case "browser_xpath_scan":
    case "browser_get_html":
      return "reading the page";
    case "browser_click":
      return `clicking ${short(target(action.params))}`;
    case "browser_type":
      return `typing into ${short(target(action.params))}`;
    case "browser_scroll":
      return `scrolling ${action.params.direction}`;
    case "browser_navigate":
      return `opening ${short(action.params.url)}`;
    case "browser_back":
      return "going back";
    case "browser_select_option":
      return `choosing ${short(JSON.stringify(action.params.option))}`;
    case "browser_press_key":
      return `pressing ${short(action.params.key)}`;
    case "browser_hover":
      return `pointing at ${short(target(action.params))}`;
    case "browser_wait_for":
      return `waiting for ${short(action.params.text ?? action.params.selector ?? action.params.url ?? "the page")}`;
  }
}
