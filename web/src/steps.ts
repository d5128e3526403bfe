// How the agent's steps read in the conversation: one line per action, in words, for people.

import type { AgentAction } from "../../protocol/ts/protocol.ts";

function quoted(text: string, max = 60): string {
  const short = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  return `“${short}”`;
}

/**
 * `Click “Sign in”`, `Type “blue mug” into “Search” and submit`, `Go to https://…`. `name` is what
 * the step's element is called on the page (the server's `targetName`); without it the element
 * is named by its index, as the model saw it.
 */
export function describeAction(action: AgentAction, name?: string): string {
  const line = describe(action, (index) => (name !== undefined && name !== "" ? quoted(name, 40) : `element [${index}]`));
  return line.charAt(0).toUpperCase() + line.slice(1);
}

function describe(action: AgentAction, element: (index: number) => string): string {
  if ("navigate" in action) return `go to ${action.navigate.url}`;
  if ("click" in action) return `click ${element(action.click.index)}`;
  if ("type" in action) return `type ${quoted(action.type.text)} into ${element(action.type.index)}${action.type.submit ? " and submit" : ""}`;
  if ("select_option" in action) return `choose ${quoted(action.select_option.option)} in ${element(action.select_option.index)}`;
  if ("scroll" in action) return `scroll ${action.scroll.direction}${action.scroll.index !== undefined ? ` in ${element(action.scroll.index)}` : ""}`;
  if ("press_key" in action) return `press ${action.press_key.key}`;
  if ("hover" in action) return `point at ${element(action.hover.index)}`;
  if ("back" in action) return "go back";
  if ("wait_for" in action) {
    const w = action.wait_for;
    const what = w.text !== undefined ? `the text ${quoted(w.text)}` : w.url !== undefined ? `the address ${quoted(w.url)}` : `the element ${quoted(w.selector ?? "")}`;
    return `wait for ${what}`;
  }
  if ("dialog" in action) {
    const { accept, text } = action.dialog;
    return `answer the page's dialog: ${accept ? "OK" : "Cancel"}${text !== undefined ? ` with ${quoted(text)}` : ""}`;
  }
  if ("scroll_to" in action) return `scroll to ${quoted(action.scroll_to.text)}`;
  if ("click_at" in action) return `click at ${Math.round(action.click_at.x)},${Math.round(action.click_at.y)}`;
  if ("hover_at" in action) return `point at ${Math.round(action.hover_at.x)},${Math.round(action.hover_at.y)}`;
  if ("drag" in action) {
    const end = (p: { index?: number; x?: number; y?: number }) => (p.index !== undefined ? element(p.index) : `${Math.round(p.x ?? 0)},${Math.round(p.y ?? 0)}`);
    return `drag ${end(action.drag.from)} to ${end(action.drag.to)}`;
  }
  if ("upload_file" in action) return `attach ${quoted(action.upload_file.file)} to ${element(action.upload_file.index)}`;
  if ("list_tabs" in action) return "list your open tabs";
  if ("read_tab" in action) return `read your tab ${action.read_tab.tab_id}`;
  if ("switch_tab" in action) return `switch to tab ${action.switch_tab.tab_id}`;
  if ("open_tab" in action) return `open ${action.open_tab.url} in a new tab`;
  if ("close_tab" in action) return action.close_tab.tab_id !== undefined ? `close tab ${action.close_tab.tab_id}` : "close this tab";
  if ("read_page" in action) return action.read_page.from !== undefined ? `read the page on from character ${action.read_page.from}` : "read more of the page";
  if ("file_read" in action) return `read the file ${quoted(action.file_read.path)} on this computer`;
  if ("file_write" in action) return `write the file ${quoted(action.file_write.path)} on this computer`;
  if ("file_edit" in action) return `edit the file ${quoted(action.file_edit.path)} on this computer`;
  if ("run_command" in action) return `run ${quoted(action.run_command.command)} on this computer`;
  return action.done.success ? "finish" : "give up";
}

/** The task's status as the person reads it. */
export function statusWords(status: string): string {
  const words: Record<string, string> = {
    created: "New",
    running: "Working",
    ongoing: "Ready",
    waiting_confirmation: "Waiting for you",
    waiting_permission: "Waiting for site access",
    takeover: "You have the browser",
    paused: "Paused",
    completed: "Done",
    error: "Failed",
    canceled: "Stopped",
  };
  return words[status] ?? status.replace(/_/g, " ");
}

/** What a running task is doing between its events: the model choosing a step, a step in the browser, the page after it being read. */
export type Activity = { kind: "model"; step: number } | { kind: "action"; step: number; what: string } | { kind: "page"; step: number };

/** What a task waits for, in words, when nothing has happened for a while (seed: no silent stall). */
export function waitingFor(activity: Activity, seconds: number): string {
  const since = `nothing new for ${seconds} s`;
  switch (activity.kind) {
    case "model":
      return `Waiting for the model to answer or choose step ${activity.step} (${since}).`;
    case "action":
      return `Waiting for the browser: step ${activity.step}, ${activity.what} (${since}).`;
    case "page":
      return `Waiting for the browser to show the page after step ${activity.step} (${since}).`;
  }
}
