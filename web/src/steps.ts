// How the agent's steps read in the conversation: one line per action, for people.

import type { AgentAction } from "../../protocol/ts/protocol.ts";

function quoted(text: string, max = 60): string {
  const short = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  return `“${short}”`;
}

/** `click [12]`, `type “blue mug” into [3] and submit`, `navigate https://…`. */
export function describeAction(action: AgentAction): string {
  if ("navigate" in action) return `navigate to ${action.navigate.url}`;
  if ("click" in action) return `click [${action.click.index}]`;
  if ("type" in action) return `type ${quoted(action.type.text)} into [${action.type.index}]${action.type.submit ? " and submit" : ""}`;
  if ("select_option" in action) return `select ${quoted(action.select_option.option)} in [${action.select_option.index}]`;
  if ("scroll" in action) return `scroll ${action.scroll.direction}${action.scroll.index !== undefined ? ` in [${action.scroll.index}]` : ""}`;
  if ("press_key" in action) return `press ${action.press_key.key}`;
  if ("hover" in action) return `hover over [${action.hover.index}]`;
  if ("back" in action) return "go back";
  if ("wait_for" in action) {
    const w = action.wait_for;
    const what = w.text !== undefined ? `text ${quoted(w.text)}` : w.url !== undefined ? `URL ${quoted(w.url)}` : `element ${quoted(w.selector ?? "")}`;
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
    const end = (p: { index?: number; x?: number; y?: number }) => (p.index !== undefined ? `[${p.index}]` : `${Math.round(p.x ?? 0)},${Math.round(p.y ?? 0)}`);
    return `drag ${end(action.drag.from)} to ${end(action.drag.to)}`;
  }
  if ("upload_file" in action) return `attach ${quoted(action.upload_file.file)} to [${action.upload_file.index}]`;
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
