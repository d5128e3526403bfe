// What an action's handler is and what it is given. Each action of the catalog has one handler,
// in a file of its own in this folder (back and forward share history.ts), registered in index.ts; the executor runs it after the
// checks every action shares.
import type { ACTION_TRAITS, ActionName, BrowserAction } from "../../../protocol/ts/protocol.ts";
import type { ServerAccess } from "../storage.ts";
import type { BridgeClient } from "../bridge.ts";
import type { Debugger } from "../cdp.ts";
import type { PageDialogs } from "../dialogs.ts";
import type { NewTabs } from "../task-tabs.ts";
import type { ActionSuccess } from "../results.ts";
import type { TaskRecord, TaskRegistry } from "../tasks.ts";

/** The extension's means, shared by every action. */
export type ExecutorDeps = {
  tasks: TaskRegistry;
  cdp: Debugger;
  dialogs: PageDialogs;
  newTabs: NewTabs;
  /** The connection to the local bridge, for `bridge_invoke`. */
  bridge: Pick<BridgeClient, "invoke">;
  server(): Promise<ServerAccess>;
  now(): number;
};

/** What every handler gets: the action and the extension's means. */
export type TaskContext = { action: BrowserAction; deps: ExecutorDeps };

/**
 * What a handler of an action in the task's tab gets besides: the task and its tab, already
 * checked (open, on a site Mimo may act on, not taken over for a page-changing action).
 */
export type TabContext = TaskContext & { task: TaskRecord; tabId: number; tab: chrome.tabs.Tab };

export type Params<K extends ActionName> = Extract<BrowserAction, { name: K }>["params"];

/** The context an action's handler gets, by its `needsTaskTab` trait. */
type ContextOf<K extends ActionName> = (typeof ACTION_TRAITS)[K]["needsTaskTab"] extends true ? TabContext : TaskContext;

export type Handler<K extends ActionName> = {
  run: (ctx: ContextOf<K>, params: Params<K>) => Promise<ActionSuccess>;
  /**
   * It takes the tab away from the page it shows, so the executor does not check that page's
   * site: leaving a page needs no access to it. Where the tab goes is checked by the handler
   * (navigate), or by the next action there (back, forward).
   */
  leavesPage?: true;
};

/** One handler per action: an action without one does not compile. */
export type ActionHandlers = { [K in ActionName]: Handler<K> };
