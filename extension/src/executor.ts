// Runs each action of the catalog (seed 000 §4.2) with its handler (actions/index.ts), after
// the checks every action in the task's tab shares: the tab guard (the task's own tab, open, on
// a site the person allowed, unless the action leaves that page) and, for an action that changes
// the page, that the person has not taken over or stopped the task there. The overlay says what
// Mimo is doing while it runs. What kind of action each one is comes from `ACTION_TRAITS`.
//
// A JavaScript dialog holds the page's scripts: while one is open in the tab only
// `browser_dialog` runs there; an action during which the page opens one ends at once with it
// (its own work, held by the dialog, finishes when the dialog is answered).
import { ACTION_TRAITS } from "../../protocol/ts/protocol.ts";
import type { ActionName, BrowserAction, PageDialog } from "../../protocol/ts/protocol.ts";
import type { FrameRequest } from "./frame-protocol.ts";
import type { ExecutorDeps, TabContext, TaskContext } from "./actions/handler.ts";
import { ACTION_HANDLERS } from "./actions/index.ts";
import { describeDialog, heldByDialog } from "./dialogs.ts";
import { changedSince, EXPECTS_EFFECT, noEffect, stepJudged, tabState } from "./effects.ts";
import { everyFrame, frameCall, tabGone } from "./frames.ts";
import { sleep, tabComplete } from "./loading.ts";
import { addTab, bringForward, openedFrom } from "./task-tabs.ts";
import { leaveTab, tabsOf } from "./tasks.ts";
import { checkDomains, checkUrl, taskTabFor } from "./guard.ts";
import { actionLabel, overlayOf, overlayWhileActing } from "./overlay-state.ts";
import { ActionError } from "./results.ts";
import type { ActionSuccess } from "./results.ts";
import { requireSite } from "./site-access.ts";
import { timeline } from "./timeline.ts";

/** Actions that may make the page open a tab (a link, `window.open` on a click or a key). */
const OPENS_TABS: ReadonlySet<ActionName> = new Set<ActionName>(["browser_click", "browser_click_at", "browser_press_key"]);
/**
 * How long such an action waits for a tab when its effect is not verified (a dialog was open):
 * Chrome opens it within a few milliseconds. A verified action waits for its effect instead.
 */
const NEW_TAB_WAIT_MS = 150;
/** How long a page-changing action waits for a page that is loading before it is refused. */
const NAVIGATION_WAIT_MS = 3_000;
/**
 * How long the label of an action in a task that waits for what's next (the developer API's
 * actions) stays drawn after it: the next one, usually sent within this, keeps it up.
 */
const LABEL_LINGER_MS = 1_500;

/**
 * A point on a canvas (or in an embedded plugin): what it draws changes no DOM, so nothing tells
 * whether the click did anything but the next screenshot.
 */
function drawnOnly(success: ActionSuccess): boolean {
  return /<(canvas|embed|object)\b/i.test(JSON.stringify(success.result ?? ""));
}

/** The success of an action during which the page opened `dialog`. */
function openedBy(name: string, dialog: PageDialog): ActionSuccess {
  return {
    result: { dialogOpened: dialog.kind },
    warnings: [`${name} made the page open a ${describeDialog(dialog)}; answer it with browser_dialog before anything else`],
    dialog,
  };
}

/** A handler as the executor sees it: for any action, given the context its traits call for. */
type AnyHandler = { run(ctx: TaskContext, params: unknown): Promise<ActionSuccess>; leavesPage?: true };

export class Executor {
  readonly #deps: ExecutorDeps;
  /** Tabs with an action under way in them, and how many. */
  readonly #acting = new Map<number, number>();

  constructor(deps: ExecutorDeps) {
    this.#deps = deps;
  }

  async execute(action: BrowserAction): Promise<ActionSuccess> {
    // The table holds each action's own handler, so `action.params` is the one it takes; the
    // cast is there because TypeScript cannot follow one name through both.
    const handler = ACTION_HANDLERS[action.name] as AnyHandler;
    if (!ACTION_TRAITS[action.name].needsTaskTab) return handler.run({ action, deps: this.#deps }, action.params);
    return this.#run(action, handler, action.tabId);
  }

  /** Runs `action` in the task's tab `requested` (its current one when undefined). */
  async #run(action: BrowserAction, handler: AnyHandler, requested: number | undefined): Promise<ActionSuccess> {
    const ctx = await this.#tabContext(action, handler, requested);
    try {
      return await this.#inTab(action, handler, ctx);
    } catch (error) {
      // A look whose tab closed while it looked (a sign-in popup the person closes) is taken
      // again where the task goes on: #tabContext finds the tab gone and moves, saying so. An
      // action on the page is never run again: it may have taken effect.
      const again = !ACTION_TRAITS[action.name].mutating && error instanceof ActionError && error.code === "TASK_TAB_CLOSED" && (await tabGone(ctx.tabId));
      if (!again) throw error;
      return this.#run(action, handler, ctx.tabId);
    }
  }

  /** Whether an action is under way in the tab (its overlay shows so: `overlayWhileActing`). */
  actingIn(tabId: number): boolean {
    return this.#acting.has(tabId);
  }

  async #inTab(action: BrowserAction, handler: AnyHandler, ctx: TabContext & { moved?: string }): Promise<ActionSuccess> {
    this.#acting.set(ctx.tabId, (this.#acting.get(ctx.tabId) ?? 0) + 1);
    try {
      return await this.#actInTab(action, handler, ctx);
    } finally {
      const left = this.#acting.get(ctx.tabId)! - 1;
      if (left > 0) this.#acting.set(ctx.tabId, left);
      else this.#acting.delete(ctx.tabId);
    }
  }

  async #actInTab(action: BrowserAction, handler: AnyHandler, ctx: TabContext & { moved?: string }): Promise<ActionSuccess> {
    const stages = timeline(action);
    const dialogs = this.#deps.dialogs;
    const notes = [...(ctx.moved !== undefined ? [ctx.moved] : []), ...dialogs.takeNotes(ctx.tabId)];
    const open = dialogs.current(ctx.tabId);
    if (open !== undefined && action.name !== "browser_dialog") throw heldByDialog(open);
    // A tab hidden behind another of its window (one the person opened there) takes input
    // slowly and opens no tab: it is shown first, as a person would look at it. Not a tab the
    // task adopted from the person ("continue on this page"): that would take their view.
    const mutating = ACTION_TRAITS[action.name].mutating;
    if (mutating && !ctx.tab.active && !(ctx.task.adopted ?? []).includes(ctx.tabId)) {
      await bringForward(ctx.tabId);
    }
    // The overlay says what Mimo does now (drawn only while it is `ongoing`; not over a dialog).
    const label = open === undefined ? actionLabel(action) : undefined;
    // Stored before the overlay is drawn: whatever draws it again (a status change, a reload)
    // reads the label from the task's record, and must not find the previous one.
    await this.#deps.tasks.update(action.taskId, (t) => {
      t.lastAction = { name: action.name, at: this.#deps.now() };
      if (label !== undefined) t.label = label;
    });
    stages.mark("checks");
    const watch = dialogs.watch(ctx.tabId);
    const newTab = this.#deps.newTabs.watch(action.taskId);
    // A copy: the task's record is the live one, which a joining tab changes.
    const tabsBefore = [...tabsOf(ctx.task)];
    const verified = EXPECTS_EFFECT.has(action.name) && open === undefined;
    const opensTabs = OPENS_TABS.has(action.name);
    // The step's baseline, the overlay's label and the tabs already opened from this one, at
    // once: what the overlay draws is never counted as the page's change (content/changes.ts),
    // and a tab the person opened from here before is never taken for the step's.
    // A task waiting for what's next (its overlay hidden) shows the action while it runs, in
    // every frame (the person's input in any of them takes over), and goes back to what its
    // record says once it ended (see `finally`).
    const shown = overlayWhileActing(ctx.task.overlay);
    const acting = shown !== ctx.task.overlay;
    const drawn: FrameRequest = { op: "overlay", state: shown, ...(label !== undefined ? { label } : {}) };
    // An action on the page is labelled once it acted: a label drawn before it changes what the
    // page draws, and the browser then draws a frame before it hands the page our click (the
    // click of an agent's step waited ~7 ms for it). The label says what Mimo did last meanwhile.
    const labelAfter = mutating && label !== undefined;
    const [before, , openedBefore] = await Promise.all([
      verified ? tabState(ctx.tabId, true) : ("closed" as const),
      label === undefined ? undefined : acting ? everyFrame(ctx.tabId, labelAfter ? { op: "overlay", state: shown } : drawn) : labelAfter ? undefined : frameCall(ctx.tabId, 0, drawn).catch(() => undefined),
      opensTabs ? openedFrom(ctx.tabId).then((tabs) => new Set(tabs.map((t) => t.id))) : new Set<number | undefined>(),
    ]);
    stages.mark("baseline");
    // A tab the page opens while a step acts in it is the step's doing, and joins the task.
    const stepEnded = mutating ? this.#deps.newTabs.acting(ctx.tabId, this.#deps.now) : undefined;
    const running = handler.run(ctx, action.params);
    try {
      const success = await Promise.race([running, watch.opened.then((dialog) => openedBy(action.name, dialog))]);
      stages.mark("act");
      if (labelAfter) void frameCall(ctx.tabId, 0, drawn).catch(() => undefined);
      success.dialog ??= dialogs.current(ctx.tabId);
      if (notes.length > 0) success.warnings = [...notes, ...(success.warnings ?? [])];
      // Chrome opens the tab a click asked for just after the click, and the step's effect is
      // either that tab or a change of its own page: it waits for whichever comes first (no
      // fixed delay), so that what follows looks at the page the person would now see.
      let joined = false;
      void newTab.opened.then(() => (joined = true));
      const judged = verified && success.dialog === undefined && !drawnOnly(success) && success.nothingToDo !== true;
      const effect = judged ? await changedSince(ctx.tabId, before, opensTabs ? newTab.opened : undefined) : undefined;
      const changed = effect?.changed;
      if (!judged && opensTabs && success.nothingToDo !== true) await Promise.race([newTab.opened, sleep(NEW_TAB_WAIT_MS)]);
      stages.mark("verify");
      // Nothing seen: a tab Chrome opened may not have been announced to the worker yet.
      if (opensTabs && !joined && changed !== true) await this.#strayTab(ctx, openedBefore);
      const task = await this.#deps.tasks.get(action.taskId);
      // Whichever way it joined (the worker's event, or found just now), a tab that joined
      // during this click or key and is where the task goes on is the page's doing.
      if (opensTabs && task !== undefined && !tabsBefore.includes(task.tabId)) {
        const tab = await chrome.tabs.get(task.tabId).catch(() => null);
        // Shown, as a person would look at it (Chrome opens a popup's tab in the background of
        // a headless or app window): a hidden tab is not drawn, so neither captured.
        if (tab !== null && !tab.active) await chrome.tabs.update(task.tabId, { active: true }).catch(() => undefined);
        (success.warnings ??= []).push(`the page opened a new tab (tab_id ${task.tabId}: ${tab?.pendingUrl || tab?.url || "loading"}); the task goes on in it, switch_tab ${ctx.tabId} goes back`);
      }
      // The page closed its own tab (a sign-in popup, once done): the task goes on in another.
      if (task !== undefined && task.tabClosed !== true && !tabsOf(task).includes(ctx.tabId)) {
        (success.warnings ??= []).push(`tab ${ctx.tabId} closed itself after ${action.name}; the task goes on in tab ${task.tabId}`);
      }
      success.tabId ??= task?.tabId;
      const sameTab = success.tabId === undefined || success.tabId === ctx.tabId;
      if (effect?.changed === false && sameTab) {
        success.partial = true;
        (success.warnings ??= []).push(noEffect(action.name, effect.kind));
      }
      stages.mark("tabs");
      return success;
    } finally {
      // Not waited for: the result need not wait for the page to draw it (the overlay's
      // messages reach the frame in order, before any of the next action's).
      if (label !== undefined && acting) void this.#overlayAsRecorded(action.taskId, ctx.tabId);
      stepEnded?.();
      if (verified) stepJudged(ctx.tabId);
      watch.cancel();
      newTab.cancel();
      // Ended by a dialog, the handler's own work goes on until the dialog is answered.
      running.catch(() => undefined);
    }
  }

  /**
   * The tab's overlay as the task's record says now (the action's own state ended): the person's
   * input is theirs again at once, and the label stays drawn a moment for the next action.
   */
  async #overlayAsRecorded(taskId: string, tabId: number): Promise<void> {
    const task = await this.#deps.tasks.get(taskId);
    if (task !== undefined) await everyFrame(tabId, { ...overlayOf(task), lingerMs: LABEL_LINGER_MS });
  }

  /**
   * A tab the page opened during this step that has not joined the task yet: Chrome has created
   * it, but the worker is still to hear of it (a busy machine delays the event). It joins now.
   * `openedBefore`: the tabs opened from this one before the step, which are not its doing.
   */
  async #strayTab(ctx: TabContext, openedBefore: ReadonlySet<number | undefined>): Promise<void> {
    const task = await this.#deps.tasks.get(ctx.task.taskId);
    if (task === undefined) return;
    const stray = (await openedFrom(ctx.tabId)).find((t) => !openedBefore.has(t.id) && !tabsOf(task).includes(t.id!));
    if (stray?.id !== undefined) await addTab(this.#deps, task.taskId, stray.id, stray.windowId);
  }

  /**
   * The task's tab, checked for this action to run in it. A tab of the task closed since the
   * server chose it (by the person, or by its own page, as a sign-in popup does) leaves the task,
   * which goes on in another of its tabs: a look at the page runs there, saying so (`moved`); an
   * action on the page fails (`TASK_TAB_CLOSED`, naming the tab the task is in now), never
   * acting on a page nobody chose it for.
   */
  async #tabContext(action: BrowserAction, handler: AnyHandler, requested: number | undefined): Promise<TabContext & { moved?: string }> {
    let task = await this.#deps.tasks.get(action.taskId);
    let moved: string | undefined;
    // The tab asked for, looked up once: it is the tab acted in unless it is gone.
    const asked = requested !== undefined && task?.tabClosed !== true ? await chrome.tabs.get(requested).catch(() => null) : undefined;
    const gone = asked === null;
    if (gone) {
      const closed = requested!;
      task = await this.#deps.tasks.update(action.taskId, (t) => {
        if (tabsOf(t).includes(closed)) leaveTab(t, closed);
      });
      if (task !== undefined && task.tabClosed !== true) {
        moved = `tab ${closed} was closed; the task goes on in tab ${task.tabId}`;
        if (ACTION_TRAITS[action.name].mutating) {
          const error = new ActionError("TASK_TAB_CLOSED", `${moved}: look at it before acting`, false);
          error.currentTab = task.tabId;
          throw error;
        }
        requested = task.tabId;
      }
    }
    const tabId = taskTabFor(task, requested, action.taskId);
    const tab = asked?.id === tabId ? asked : await chrome.tabs.get(tabId).catch(() => null);
    // The tab the task went on in is gone too (or none was named and the current one is): it
    // leaves the task like the one asked for, which goes on in another if it has one left.
    if (tab === null && task!.tabClosed !== true) return this.#tabContext(action, handler, tabId);
    if (tab === null || task!.tabClosed === true) {
      await this.#deps.tasks.update(action.taskId, (t) => (t.tabClosed = true));
      throw new ActionError("TASK_TAB_CLOSED", `the task's tab ${tabId} was closed; start the task again (task_start)`, false);
    }
    if (handler.leavesPage !== true) {
      const url = tab.url || tab.pendingUrl || "";
      checkUrl(url, (await this.#deps.server()).serverUrl);
      // The page as it is now: a redirect to a domain the task may not visit is caught here.
      checkDomains(task!, url);
      await requireSite(url);
    }
    // A page is on its way: acting on the one still shown would act on what is going away. Not
    // while a dialog is open: a "leave this page?" dialog holds the load until it is answered.
    const loading = tab.status === "loading" && this.#deps.dialogs.current(tabId) === undefined;
    if (ACTION_TRAITS[action.name].mutating && handler.leavesPage !== true && loading) {
      await tabComplete(tabId, NAVIGATION_WAIT_MS).catch((error: unknown) => {
        if (error instanceof ActionError && error.code === "TIMEOUT") {
          throw new ActionError("NAVIGATION_IN_PROGRESS", `the tab is still loading ${tab.pendingUrl || tab.url || "a page"}: ${action.name} waits for it to finish`, true);
        }
        throw error;
      });
    }
    if (ACTION_TRAITS[action.name].mutating) {
      if (task!.stopRequested !== undefined) throw new ActionError("PERMISSION_DENIED", "the person stopped this task in its tab", false);
      if (task!.takeover !== undefined) {
        throw new ActionError("PERMISSION_DENIED", `the person has taken over this task's tab (${task!.takeover.reason}); waiting for them to resume`, false);
      }
    }
    return { action, deps: this.#deps, task: task!, tabId, tab, ...(moved !== undefined ? { moved } : {}) };
  }
}
