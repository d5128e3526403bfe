// Runs each action of the catalog (seed 000 §4.2) in the task's own tab: the tab guard first
// (the task's own tab, on a site the person allowed), then CDP input (clicks, typing, keys,
// hover) with DOM fallbacks, the DOM index across frames (stored whole as an artifact when too
// large for one message), page preparation (loaded, screenshot, readability) and the HTML
// snapshot.
import { DOM_INDEX_MAX_BYTES, HTML_MAX_BYTES, MAX_EXTENSION_FRAME_BYTES, READABILITY_INLINE_LIMIT_BYTES, READABILITY_MAX_BYTES, SCREENSHOT_MAX_BYTES } from "../../protocol/ts/protocol.ts";
import type { BrowserAction, DomElement, DomIndexResult, ReadabilityResult, ScreenshotResult, TaskStartResult } from "../../protocol/ts/protocol.ts";
import { uploadArtifact } from "./artifacts.ts";
import type { ServerAccess } from "./artifacts.ts";
import { CdpFailure, Debugger } from "./cdp.ts";
import { DEFAULT_CLICK_ATTR } from "./frame-protocol.ts";
import type { FrameIndex, FrameTarget, IndexLine, OverlayState, Point, Prepared } from "./frame-protocol.ts";
import { allFrames, everyFrame, frameCall } from "./frames.ts";
import type { FrameInfo } from "./frames.ts";
import { checkUrl, siteOf, taskTabFor } from "./guard.ts";
import { base64ToBytes, imageSize, utf8 } from "./image.ts";
import { fitIndex, indent, pageLine } from "./index-text.ts";
import { parseKey } from "./keys.ts";
import { actionLabel, overlayFor } from "./overlay-state.ts";
import type { KeySpec } from "./keys.ts";
import { ActionError } from "./results.ts";
import type { ActionSuccess } from "./results.ts";
import { requireSite, siteAllowed } from "./site-access.ts";
import type { TaskRecord, TaskRegistry } from "./tasks.ts";

type Params<N extends BrowserAction["name"]> = Extract<BrowserAction, { name: N }>["params"];

const DEFAULT_LOAD_TIMEOUT_MS = 15_000;
const DEFAULT_WAIT_TIMEOUT_MS = 10_000;
const POLL_MS = 50;
/** How long our CDP input is expected by the content scripts' takeover watch. */
const MARK_MS = 3_000;
/** Room for the `action_result` envelope around a result. */
const ENVELOPE_BYTES = 4_096;

/** Actions that change the page, refused while the person has taken over. */
const MUTATING = new Set<BrowserAction["name"]>([
  "browser_click",
  "browser_type",
  "browser_scroll",
  "browser_navigate",
  "browser_back",
  "browser_select_option",
  "browser_press_key",
  "browser_hover",
]);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function text(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export type ExecutorDeps = {
  tasks: TaskRegistry;
  cdp: Debugger;
  server(): Promise<ServerAccess>;
  now(): number;
};

type Ctx = { action: BrowserAction; task: TaskRecord; tabId: number; tab: chrome.tabs.Tab };

export class Executor {
  readonly #deps: ExecutorDeps;

  constructor(deps: ExecutorDeps) {
    this.#deps = deps;
  }

  async execute(action: BrowserAction): Promise<ActionSuccess> {
    switch (action.name) {
      case "task_start":
        return this.#taskStart(action, action.params);
      case "task_stop":
        return this.#taskStop(action, action.params);
      default:
        break;
    }
    const ctx = await this.#context(action);
    await this.#deps.tasks.update(action.taskId, (t) => (t.lastAction = { name: action.name, at: this.#deps.now() }));
    await this.#label(ctx, actionLabel(action));
    switch (action.name) {
      case "browser_debugger_attach":
        await this.#deps.cdp.attach(ctx.tabId);
        return { result: { attached: true } };
      case "browser_wait_for_loaded":
        return this.#waitForLoaded(ctx, action.params.timeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS);
      case "browser_screenshot":
        return this.#screenshot(ctx, action.params.fullPage === true);
      case "browser_readability_extract":
        return this.#readability(ctx);
      case "browser_dom_index":
        return this.#domIndex(ctx, action.params.scope ?? "viewport", action.params.assignAttr ?? DEFAULT_CLICK_ATTR, false);
      case "browser_xpath_scan":
        return this.#domIndex(ctx, action.params.scope ?? "viewport", ctx.task.attr ?? DEFAULT_CLICK_ATTR, true);
      case "browser_click":
        return this.#click(ctx, action.params);
      case "browser_type":
        return this.#type(ctx, action.params);
      case "browser_get_html":
        return this.#getHtml(ctx, action.params.xpath);
      case "browser_scroll":
        return this.#scroll(ctx, action.params);
      case "browser_navigate":
        return this.#navigate(ctx, action.params.url);
      case "browser_back":
        return this.#back(ctx);
      case "browser_select_option":
        return this.#select(ctx, action.params);
      case "browser_press_key":
        return this.#pressKey(ctx, action.params.key);
      case "browser_hover":
        return this.#hover(ctx, action.params);
      case "browser_wait_for":
        return this.#waitFor(ctx, action.params);
    }
  }

  // ---- the task tab ----

  async #context(action: BrowserAction): Promise<Ctx> {
    const task = await this.#deps.tasks.get(action.taskId);
    const tabId = taskTabFor(task, action.tabId, action.taskId);
    const tab = await chrome.tabs.get(tabId).catch(() => null);
    if (tab === null || task!.tabClosed === true) {
      await this.#deps.tasks.update(action.taskId, (t) => (t.tabClosed = true));
      throw new ActionError("TASK_TAB_CLOSED", `the task's tab ${tabId} was closed; start the task again (task_start)`, false);
    }
    if (action.name !== "browser_navigate" && action.name !== "browser_back") {
      const url = tab.url || tab.pendingUrl || "";
      checkUrl(url, (await this.#deps.server()).serverUrl);
      await requireSite(url);
    }
    if (MUTATING.has(action.name)) {
      if (task!.stopRequested !== undefined) throw new ActionError("PERMISSION_DENIED", "the person stopped this task in its tab", false);
      if (task!.takeover !== undefined) {
        throw new ActionError("PERMISSION_DENIED", `the person has taken over this task's tab (${task!.takeover.reason}); waiting for them to resume`, false);
      }
    }
    return { action, task: task!, tabId, tab };
  }

  async #taskStart(action: BrowserAction, params: Params<"task_start">): Promise<ActionSuccess> {
    const server = await this.#deps.server();
    const url = params.url ?? "about:blank";
    checkUrl(url, server.serverUrl);
    // Before a tab is opened: the refusal lists the site in the side panel for the person.
    await requireSite(url);
    const warnings: string[] = [];
    const existing = await this.#deps.tasks.get(action.taskId);
    const alive = existing !== undefined && existing.tabClosed !== true && (await chrome.tabs.get(existing.tabId).catch(() => null)) !== null;
    let record: TaskRecord;
    if (alive && params.reuseExistingTab !== false) {
      record = existing!;
      if (params.url !== undefined) await this.#navigateTab(record.tabId, url, DEFAULT_LOAD_TIMEOUT_MS, warnings);
    } else {
      // Its own window, not focused: the person's windows keep their focus, and a tab in a
      // window of its own is not throttled like a background tab is.
      const win = await chrome.windows.create({ focused: false, url, type: "normal" });
      const tab = win?.tabs?.[0];
      if (win?.id === undefined || tab?.id === undefined) throw new ActionError("INTERNAL_ERROR", "Chrome did not open the task's window", true);
      record = { taskId: action.taskId, tabId: tab.id, windowId: win.id, startedAt: this.#deps.now(), overlay: "hidden" };
      try {
        const groupId = await chrome.tabs.group({ tabIds: tab.id, createProperties: { windowId: win.id } });
        await chrome.tabGroups.update(groupId, { title: params.groupTitle ?? "Mimo", color: "purple" });
        record.groupId = groupId;
      } catch (error) {
        warnings.push(`the task's tab is not in a tab group: ${text(error)}`);
      }
      await this.#deps.tasks.put(record);
      await this.#tabComplete(tab.id, DEFAULT_LOAD_TIMEOUT_MS).catch(() => warnings.push("the page was still loading when the task started"));
    }
    await this.#deps.cdp.attach(record.tabId).catch((error: unknown) => warnings.push(`no CDP: ${text(error)}; clicks and typing will use DOM events`));
    // The task runs (it sent this action); the server's task_state says what comes next.
    const overlay = overlayFor((await this.#deps.tasks.status(action.taskId)) ?? "running");
    await this.#deps.tasks.update(action.taskId, (t) => {
      t.overlay = overlay;
      t.label = "starting";
      delete t.takeover;
      delete t.stopRequested;
    });
    await this.#setOverlay(record.tabId, overlay, "starting");
    const tab = await chrome.tabs.get(record.tabId);
    const result: TaskStartResult = { tabId: record.tabId, windowId: tab.windowId, url: tab.url || tab.pendingUrl || url };
    if (record.groupId !== undefined) result.groupId = record.groupId;
    if (tab.title) result.title = tab.title;
    return { result, warnings };
  }

  async #taskStop(action: BrowserAction, params: Params<"task_stop">): Promise<ActionSuccess> {
    const task = await this.#deps.tasks.get(action.taskId);
    if (task === undefined) return { result: { stopped: true } };
    await this.#deps.cdp.detach(task.tabId);
    await this.#setOverlay(task.tabId, "idle");
    if (params.closeTab === true) {
      const tabs = await chrome.tabs.query({ windowId: task.windowId }).catch(() => []);
      if (tabs.length === 1 && tabs[0]!.id === task.tabId) await chrome.windows.remove(task.windowId).catch(() => undefined);
      else await chrome.tabs.remove(task.tabId).catch(() => undefined);
    }
    await this.#deps.tasks.remove(action.taskId);
    return { result: { stopped: true } };
  }

  /** Tells the tab's frames the task state (the top frame draws it). */
  async #setOverlay(tabId: number, state: OverlayState, label?: string): Promise<void> {
    await everyFrame(tabId, label === undefined ? { op: "overlay", state } : { op: "overlay", state, label });
  }

  /** Says in the overlay what Mimo does now (drawn only while the overlay is `ongoing`). */
  async #label(ctx: Ctx, label: string): Promise<void> {
    await this.#deps.tasks.update(ctx.task.taskId, (t) => (t.label = label));
    await frameCall(ctx.tabId, 0, { op: "overlay", state: ctx.task.overlay, label }).catch(() => undefined);
  }

  // ---- loading ----

  /** Resolves when the tab's status is `complete` (now, or at the next update). */
  #tabComplete(tabId: number, timeoutMs: number, afterNavigation = false): Promise<chrome.tabs.Tab> {
    return new Promise((resolve, reject) => {
      let done = false;
      const finish = (error: ActionError | null, tab?: chrome.tabs.Tab) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        chrome.tabs.onUpdated.removeListener(listener);
        chrome.tabs.onRemoved.removeListener(removed);
        if (error !== null) reject(error);
        else resolve(tab!);
      };
      const listener = (id: number, change: { status?: string }, tab: chrome.tabs.Tab) => {
        if (id === tabId && change.status === "complete") finish(null, tab);
      };
      const removed = (id: number) => {
        if (id === tabId) finish(new ActionError("TASK_TAB_CLOSED", "the task's tab was closed", false));
      };
      const timer = setTimeout(() => finish(new ActionError("TIMEOUT", `the page did not finish loading within ${timeoutMs} ms`, true)), timeoutMs);
      chrome.tabs.onUpdated.addListener(listener);
      chrome.tabs.onRemoved.addListener(removed);
      if (!afterNavigation) {
        void chrome.tabs.get(tabId).then(
          (tab) => {
            if (tab.status === "complete") finish(null, tab);
          },
          () => finish(new ActionError("TASK_TAB_CLOSED", "the task's tab was closed", false)),
        );
      }
    });
  }

  async #waitForLoaded(ctx: Ctx, timeoutMs: number): Promise<ActionSuccess> {
    const deadline = this.#deps.now() + timeoutMs;
    for (;;) {
      const tab = await chrome.tabs.get(ctx.tabId).catch(() => null);
      if (tab === null) throw new ActionError("TASK_TAB_CLOSED", "the task's tab was closed", false);
      if (tab.status === "complete") {
        const state = await frameCall<string>(ctx.tabId, 0, { op: "readyState" }).catch(() => "unknown");
        if (state === "complete") return { result: { status: "complete", url: tab.url ?? "", title: tab.title ?? "" } };
      }
      if (this.#deps.now() >= deadline) throw new ActionError("TIMEOUT", `the page did not finish loading within ${timeoutMs} ms`, true);
      await sleep(POLL_MS);
    }
  }

  async #navigateTab(tabId: number, url: string, timeoutMs: number, warnings: string[]): Promise<chrome.tabs.Tab | undefined> {
    const now = await chrome.tabs.get(tabId);
    const loaded = this.#tabComplete(tabId, timeoutMs, true);
    // Already on its way there (a retry of a navigation cut short): wait for it instead.
    const underway = now.status === "loading" && (now.pendingUrl === url || now.url === url);
    if (!underway) {
      try {
        await chrome.tabs.update(tabId, { url });
      } catch (error) {
        loaded.catch(() => undefined);
        throw new ActionError("TIMEOUT", `Chrome did not start the navigation: ${text(error)}`, true);
      }
    }
    try {
      return await loaded;
    } catch (error) {
      if (error instanceof ActionError && error.code === "TIMEOUT") {
        warnings.push(error.message);
        return undefined;
      }
      throw error;
    }
  }

  async #navigate(ctx: Ctx, url: string): Promise<ActionSuccess> {
    if (typeof url !== "string" || url === "") throw new ActionError("SCHEMA_VALIDATION_FAILED", "browser_navigate needs a url");
    checkUrl(url, (await this.#deps.server()).serverUrl);
    await requireSite(url);
    const warnings: string[] = [];
    const tab = (await this.#navigateTab(ctx.tabId, url, DEFAULT_LOAD_TIMEOUT_MS, warnings)) ?? (await chrome.tabs.get(ctx.tabId));
    return { result: { url: tab.url ?? url, title: tab.title ?? "", status: tab.status ?? "loading" }, warnings };
  }

  async #back(ctx: Ctx): Promise<ActionSuccess> {
    let loaded: Promise<chrome.tabs.Tab> | undefined;
    try {
      // Through CDP: chrome.tabs.goBack skips entries the page added without a user gesture.
      const history = await this.#deps.cdp.send<{ currentIndex: number; entries: Array<{ id: number }> }>(ctx.tabId, "Page.getNavigationHistory");
      if (history.currentIndex <= 0) throw new ActionError("INVALID_TARGET", "there is no page to go back to");
      loaded = this.#tabComplete(ctx.tabId, DEFAULT_LOAD_TIMEOUT_MS, true);
      await this.#deps.cdp.send(ctx.tabId, "Page.navigateToHistoryEntry", { entryId: history.entries[history.currentIndex - 1]!.id });
    } catch (error) {
      if (!(error instanceof CdpFailure)) throw error;
      loaded = this.#tabComplete(ctx.tabId, DEFAULT_LOAD_TIMEOUT_MS, true);
      try {
        await chrome.tabs.goBack(ctx.tabId);
      } catch (again) {
        loaded.catch(() => undefined);
        throw new ActionError("INVALID_TARGET", `cannot go back: ${text(again)}`);
      }
    }
    const warnings: string[] = [];
    const tab = await loaded.catch((error: unknown) => {
      warnings.push(text(error));
      return chrome.tabs.get(ctx.tabId);
    });
    return { result: { url: tab.url ?? "", title: tab.title ?? "" }, warnings };
  }

  async #waitFor(ctx: Ctx, p: Params<"browser_wait_for">): Promise<ActionSuccess> {
    if (p.text === undefined && p.url === undefined && p.selector === undefined) {
      throw new ActionError("SCHEMA_VALIDATION_FAILED", "browser_wait_for needs text, url or selector");
    }
    const timeoutMs = p.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
    const started = this.#deps.now();
    for (;;) {
      const tab = await chrome.tabs.get(ctx.tabId).catch(() => null);
      if (tab === null) throw new ActionError("TASK_TAB_CLOSED", "the task's tab was closed", false);
      let matched: string | undefined;
      if (p.url !== undefined && (tab.url ?? "").includes(p.url)) matched = "url";
      if (matched === undefined && (p.text !== undefined || p.selector !== undefined)) {
        const probe = await frameCall<{ text?: boolean; selector?: boolean }>(ctx.tabId, 0, {
          op: "probe",
          ...(p.text !== undefined ? { text: p.text } : {}),
          ...(p.selector !== undefined ? { selector: p.selector } : {}),
        }).catch((error: unknown) => {
          if (error instanceof ActionError && (error.code === "INVALID_TARGET" || error.code === "TASK_TAB_CLOSED")) throw error;
          return {} as { text?: boolean; selector?: boolean };
        });
        if (probe.text === true) matched = "text";
        else if (probe.selector === true) matched = "selector";
      }
      const elapsedMs = this.#deps.now() - started;
      if (matched !== undefined) return { result: { matched, elapsedMs, url: tab.url ?? "" } };
      if (elapsedMs >= timeoutMs) {
        const what = [p.text !== undefined ? `text ${JSON.stringify(p.text)}` : "", p.url !== undefined ? `url containing ${JSON.stringify(p.url)}` : "", p.selector !== undefined ? `selector ${JSON.stringify(p.selector)}` : ""].filter((s) => s !== "").join(" or ");
        throw new ActionError("TIMEOUT", `no ${what} within ${timeoutMs} ms`, false);
      }
      await sleep(POLL_MS * 2);
    }
  }

  // ---- targets and input ----

  /** The frame a target lives in: click ids by the last index, xpaths by asking the frames. */
  async #route(ctx: Ctx, p: { clickId?: number; xpath?: string }): Promise<{ frameId: number; target: FrameTarget }> {
    const attr = ctx.task.attr ?? DEFAULT_CLICK_ATTR;
    if (p.clickId !== undefined) {
      if (!Number.isInteger(p.clickId)) throw new ActionError("SCHEMA_VALIDATION_FAILED", "clickId must be an integer");
      const range = ctx.task.clicks?.find(([first, last]) => p.clickId! >= first && p.clickId! <= last);
      if (range === undefined) throw new ActionError("TARGET_NOT_FOUND", `no element has click id ${p.clickId} in the last DOM index (index the page first)`);
      return { frameId: range[2], target: { clickId: p.clickId, attr } };
    }
    if (p.xpath !== undefined) {
      if (typeof p.xpath !== "string" || p.xpath === "") throw new ActionError("INVALID_TARGET", "the xpath is empty");
      const frames = await allFrames(ctx.tabId);
      const allowed = await Promise.all(frames.map((f) => siteAllowed(f.url)));
      for (const f of [{ frameId: 0 }, ...frames.filter((f, i) => f.frameId !== 0 && allowed[i])]) {
        const found = await frameCall<boolean>(ctx.tabId, f.frameId, { op: "exists", xpath: p.xpath }).catch((error: unknown) => {
          if (f.frameId === 0) throw error;
          return false;
        });
        if (found) return { frameId: f.frameId, target: { xpath: p.xpath, attr } };
      }
      throw new ActionError("TARGET_NOT_FOUND", `no element matches the xpath ${p.xpath}`);
    }
    throw new ActionError("INVALID_TARGET", "name the element by clickId or xpath");
  }

  /** The frame ids of a frame's children, by the tokens their iframes gave them. */
  async #childTokens(tabId: number, parentFrameId: number, frames: FrameInfo[]): Promise<Map<string, number>> {
    const children = frames.filter((f) => f.parentFrameId === parentFrameId);
    const whoami = (f: FrameInfo) => frameCall<string | null>(tabId, f.frameId, { op: "whoami", waitMs: 150 }).catch(() => null);
    const tokens = await Promise.all(children.map(whoami));
    // A frame whose content script came after its parent's tokens (injected now, because its
    // site was allowed after the page loaded) missed them: the parent sends them again.
    if (tokens.includes(null) && (await frameCall(tabId, parentFrameId, { op: "tagFrames" }).then(() => true, () => false))) {
      await Promise.all(children.map(async (f, i) => (tokens[i] ??= await whoami(f))));
    }
    const map = new Map<string, number>();
    tokens.forEach((t, i) => {
      if (t !== null) map.set(t, children[i]!.frameId);
    });
    return map;
  }

  /** A point in a frame's viewport, in the top frame's viewport (scrolling the iframes into view). */
  async #toTop(tabId: number, frameId: number, point: Point): Promise<Point> {
    if (frameId === 0) return point;
    const frames = await allFrames(tabId);
    let p = point;
    let f = frameId;
    while (f !== 0) {
      const info: FrameInfo | undefined = frames.find((x) => x.frameId === f);
      if (info === undefined) throw new ActionError("TARGET_NOT_FOUND", `the element's frame ${f} is gone`);
      let token = await frameCall<string | null>(tabId, f, { op: "whoami", waitMs: 0 });
      if (token === null) {
        await frameCall(tabId, info.parentFrameId, { op: "tagFrames" });
        token = await frameCall<string | null>(tabId, f, { op: "whoami", waitMs: 500 });
      }
      if (token === null) throw new ActionError("TARGET_NOT_FOUND", `the element's frame ${f} cannot be found in its parent`);
      const box = await frameCall<{ x: number; y: number }>(tabId, info.parentFrameId, { op: "frameBox", token, point: p });
      p = { x: p.x + box.x, y: p.y + box.y };
      f = info.parentFrameId;
    }
    return p;
  }

  /** Runs CDP input with every frame told to expect it (so it is not taken for the person's). */
  async #ourInput<T>(tabId: number, work: () => Promise<T>): Promise<T> {
    await this.#deps.cdp.attach(tabId);
    await everyFrame(tabId, { op: "mark", untilMs: MARK_MS });
    try {
      return await work();
    } finally {
      void everyFrame(tabId, { op: "mark", untilMs: 0 });
    }
  }

  async #mouse(tabId: number, type: string, p: Point, extra: Record<string, unknown> = {}): Promise<void> {
    await this.#deps.cdp.send(tabId, "Input.dispatchMouseEvent", { type, x: p.x, y: p.y, ...extra });
  }

  async #key(tabId: number, k: KeySpec): Promise<void> {
    const base = { key: k.key, code: k.code, windowsVirtualKeyCode: k.keyCode, nativeVirtualKeyCode: k.keyCode, modifiers: k.modifiers };
    await this.#deps.cdp.send(tabId, "Input.dispatchKeyEvent", k.text !== undefined ? { ...base, type: "keyDown", text: k.text, unmodifiedText: k.text } : { ...base, type: "rawKeyDown" });
    await this.#deps.cdp.send(tabId, "Input.dispatchKeyEvent", { ...base, type: "keyUp" });
  }

  async #click(ctx: Ctx, p: Params<"browser_click">): Promise<ActionSuccess> {
    const { frameId, target } = await this.#route(ctx, p);
    if (p.strategy === "dom_click") {
      await frameCall(ctx.tabId, frameId, { op: "domClick", target });
      return { result: { clicked: true, strategy: "dom_click" } };
    }
    const prepared = await frameCall<Prepared>(ctx.tabId, frameId, { op: "prepare", target, purpose: "click" });
    try {
      const point = await this.#toTop(ctx.tabId, frameId, prepared.point);
      await this.#ourInput(ctx.tabId, async () => {
        await this.#mouse(ctx.tabId, "mouseMoved", point);
        await this.#mouse(ctx.tabId, "mousePressed", point, { button: "left", buttons: 1, clickCount: 1 });
        await this.#mouse(ctx.tabId, "mouseReleased", point, { button: "left", buttons: 0, clickCount: 1 });
      });
      return { result: { clicked: true, strategy: "cdp_mouse" } };
    } catch (error) {
      if (!(error instanceof CdpFailure)) throw error;
      if (p.strategy === "cdp_mouse") throw error;
      await frameCall(ctx.tabId, frameId, { op: "domClick", target });
      return {
        result: { clicked: true, strategy: "dom_click" },
        partial: true,
        warnings: [`CDP input failed (${error.message}); clicked with DOM events instead, which the page sees as untrusted`],
      };
    }
  }

  async #hover(ctx: Ctx, p: Params<"browser_hover">): Promise<ActionSuccess> {
    const { frameId, target } = await this.#route(ctx, p);
    const prepared = await frameCall<Prepared>(ctx.tabId, frameId, { op: "prepare", target, purpose: "hover" });
    try {
      const point = await this.#toTop(ctx.tabId, frameId, prepared.point);
      await this.#ourInput(ctx.tabId, () => this.#mouse(ctx.tabId, "mouseMoved", point));
      return { result: { hovered: true, strategy: "cdp_mouse" } };
    } catch (error) {
      if (!(error instanceof CdpFailure)) throw error;
      await frameCall(ctx.tabId, frameId, { op: "domHover", target });
      return { result: { hovered: true, strategy: "dom" }, partial: true, warnings: [`CDP input failed (${error.message}); hovered with DOM events instead`] };
    }
  }

  async #type(ctx: Ctx, p: Params<"browser_type">): Promise<ActionSuccess> {
    if (typeof p.text !== "string") throw new ActionError("SCHEMA_VALIDATION_FAILED", "browser_type needs text");
    const { frameId, target } = await this.#route(ctx, p);
    const submit = p.submit === true;
    const warnings: string[] = [];
    let strategy: "cdp_key" | "dom_input" = "cdp_key";
    let partial = false;
    if (p.strategy === "dom_input") {
      await frameCall(ctx.tabId, frameId, { op: "domType", target, text: p.text, submit });
      strategy = "dom_input";
    } else {
      await frameCall<Prepared>(ctx.tabId, frameId, { op: "prepare", target, purpose: "type" });
      try {
        await this.#deps.cdp.attach(ctx.tabId);
        await this.#ourInput(ctx.tabId, async () => {
          await frameCall(ctx.tabId, frameId, { op: "focusForTyping", target });
          if (p.text === "") await this.#key(ctx.tabId, parseKey("Backspace"));
          else await this.#deps.cdp.send(ctx.tabId, "Input.insertText", { text: p.text });
          if (submit) await this.#key(ctx.tabId, parseKey("Enter"));
        });
      } catch (error) {
        if (!(error instanceof CdpFailure)) throw error;
        if (p.strategy === "cdp_key") throw error;
        await frameCall(ctx.tabId, frameId, { op: "domType", target, text: p.text, submit });
        strategy = "dom_input";
        partial = true;
        warnings.push(`CDP input failed (${error.message}); typed with DOM events instead, which the page sees as untrusted`);
      }
    }
    const result: { typed: true; strategy: string; value?: string } = { typed: true, strategy };
    if (!submit) {
      const read = await frameCall<{ value: string }>(ctx.tabId, frameId, { op: "readValue", target }).catch(() => undefined);
      if (read !== undefined) {
        result.value = read.value;
        if (read.value !== p.text && read.value !== "••••") warnings.push(`the field holds ${JSON.stringify(read.value.slice(0, 200))} after typing (the page changed what was typed)`);
      }
    }
    return { result, warnings, partial };
  }

  async #pressKey(ctx: Ctx, key: string): Promise<ActionSuccess> {
    if (typeof key !== "string") throw new ActionError("SCHEMA_VALIDATION_FAILED", "browser_press_key needs a key");
    const spec = parseKey(key);
    try {
      await this.#ourInput(ctx.tabId, () => this.#key(ctx.tabId, spec));
      return { result: { pressed: spec.key, strategy: "cdp_key" } };
    } catch (error) {
      if (!(error instanceof CdpFailure)) throw error;
      await frameCall(ctx.tabId, 0, { op: "domKey", key: spec.key, code: spec.code, keyCode: spec.keyCode, modifiers: spec.modifiers });
      return { result: { pressed: spec.key, strategy: "dom" }, partial: true, warnings: [`CDP input failed (${error.message}); sent DOM key events instead`] };
    }
  }

  async #scroll(ctx: Ctx, p: Params<"browser_scroll">): Promise<ActionSuccess> {
    if (!["up", "down", "left", "right"].includes(p.direction)) throw new ActionError("SCHEMA_VALIDATION_FAILED", "direction must be up, down, left or right");
    let frameId = 0;
    let target: FrameTarget | undefined;
    if (p.clickId !== undefined || p.xpath !== undefined) ({ frameId, target } = await this.#route(ctx, p));
    const result = await frameCall<{ scrolledX: number; scrolledY: number }>(ctx.tabId, frameId, {
      op: "scroll",
      direction: p.direction,
      ...(target !== undefined ? { target } : {}),
      ...(p.amount !== undefined ? { amount: p.amount } : {}),
    });
    const warnings = result.scrolledX === 0 && result.scrolledY === 0 ? [`nothing scrolled: already at the ${p.direction === "up" ? "top" : p.direction === "down" ? "bottom" : "edge"}`] : [];
    return { result, warnings };
  }

  async #select(ctx: Ctx, p: Params<"browser_select_option">): Promise<ActionSuccess> {
    if (typeof p.option !== "string") throw new ActionError("SCHEMA_VALIDATION_FAILED", "browser_select_option needs an option");
    const { frameId, target } = await this.#route(ctx, p);
    const chosen = await frameCall<{ value: string; label: string }>(ctx.tabId, frameId, { op: "select", target, option: p.option });
    return { result: { selected: true, ...chosen } };
  }

  // ---- reading the page ----

  async #domIndex(ctx: Ctx, scope: "viewport" | "document", attr: string, xpathScan: boolean): Promise<ActionSuccess> {
    if (!/^[a-zA-Z_][\w.:-]*$/.test(attr)) throw new ActionError("SCHEMA_VALIDATION_FAILED", `${JSON.stringify(attr)} is not an attribute name`);
    const warnings: string[] = [];
    const top = await frameCall<FrameIndex>(ctx.tabId, 0, { op: "index", scope, attr, startId: 1, xpath: true });
    const elements: DomElement[] = top.elements.map((e) => ({ ...e, frameId: 0 }));
    const clicks: Array<[number, number, number]> = top.nextId > 1 ? [[1, top.nextId - 1, 0]] : [];
    let next = top.nextId;
    // Frames of sites the person has not allowed are left out (one may still hold a content
    // script from before a revoke): the index never reads them.
    const frames: FrameInfo[] = [];
    for (const f of await allFrames(ctx.tabId)) {
      if (await siteAllowed(f.url)) frames.push(f);
      else warnings.push(`frame ${f.frameId} was not indexed: Mimo is not allowed on ${siteOf(f.url)}`);
    }

    // Child frames, depth first, each answering with its own viewport's coordinates.
    const expand = async (index: FrameIndex, frameId: number, offset: Point, clip: { x: number; y: number; w: number; h: number }, depth: number): Promise<string[]> => {
      const out: string[] = [];
      const children = index.frames.length > 0 ? await this.#childTokens(ctx.tabId, frameId, frames) : new Map<string, number>();
      for (const line of index.lines as IndexLine[]) {
        if ("text" in line) {
          out.push(indent(depth + line.depth, line.text));
          continue;
        }
        const child = index.frames.find((f) => f.token === line.frame);
        const childId = children.get(line.frame);
        if (child === undefined || childId === undefined) continue;
        const info = frames.find((f) => f.frameId === childId);
        out.push(indent(depth + line.depth, `<iframe frame=${childId}${info ? ` src=${JSON.stringify(info.url.slice(0, 80))}` : ""}>`));
        const childClip = { x: clip.x - child.box.x, y: clip.y - child.box.y, w: clip.w, h: clip.h };
        let sub: FrameIndex;
        try {
          sub = await frameCall<FrameIndex>(ctx.tabId, childId, { op: "index", scope, attr, startId: next, clip: childClip, xpath: true });
        } catch (error) {
          warnings.push(`frame ${childId} was not indexed: ${text(error)}`);
          continue;
        }
        const origin = { x: offset.x + child.box.x, y: offset.y + child.box.y };
        for (const e of sub.elements) elements.push({ ...e, frameId: childId, bbox: { ...e.bbox, x: Math.round(e.bbox.x + origin.x), y: Math.round(e.bbox.y + origin.y) } });
        if (sub.nextId > next) clicks.push([next, sub.nextId - 1, childId]);
        next = sub.nextId;
        out.push(...(await expand(sub, childId, origin, childClip, depth + line.depth + 1)));
      }
      return out;
    };
    const lines = await expand(top, 0, { x: 0, y: 0 }, { x: 0, y: 0, w: top.viewport.w, h: top.viewport.h }, 0);
    const header = pageLine({ url: top.url, title: top.title, scrollX: top.scrollX, scrollY: top.scrollY, width: top.size.w, height: top.size.h, vw: top.viewport.w, vh: top.viewport.h });
    await this.#deps.tasks.update(ctx.task.taskId, (t) => {
      t.clicks = clicks;
      t.attr = attr;
    });
    const full: DomIndexResult = { elements, text: [header, ...lines].join("\n"), url: top.url, title: top.title, scrollX: top.scrollX, scrollY: top.scrollY };
    const budget = MAX_EXTENSION_FRAME_BYTES - ENVELOPE_BYTES;
    const json = utf8(JSON.stringify(full));
    if (json.byteLength <= budget) return { result: full, warnings };
    // Too large for one message: the whole index goes to R2 and the message carries what fits,
    // so nothing is lost for whoever needs all of it.
    let stored: DomIndexResult = full;
    let partial = false;
    if (json.byteLength > DOM_INDEX_MAX_BYTES) {
      warnings.push(`the whole index is ${json.byteLength} bytes, over the artifact limit of ${DOM_INDEX_MAX_BYTES}; only the part below was kept`);
      partial = true;
    } else {
      try {
        const uploaded = await uploadArtifact(await this.#deps.server(), { taskId: ctx.task.taskId, kind: "dom_index", contentType: "application/json", actionId: ctx.action.actionId }, json);
        stored = { ...full, artifactId: uploaded.artifactId, truncated: true };
      } catch (error) {
        warnings.push(`the whole index could not be stored (${text(error)}); only the part below was kept`);
        partial = true;
      }
    }
    const fitted = fitIndex(stored, budget, xpathScan);
    if (fitted.warning !== undefined) warnings.push(stored.artifactId === undefined ? fitted.warning : `${fitted.warning}; the whole index is in artifact ${stored.artifactId}`);
    return { result: { ...fitted.result, truncated: true }, warnings, partial };
  }

  async #screenshot(ctx: Ctx, fullPage: boolean): Promise<ActionSuccess> {
    const warnings: string[] = [];
    let bytes: Uint8Array;
    let partial = false;
    let contentType = "image/png";
    await frameCall(ctx.tabId, 0, { op: "mark", untilMs: MARK_MS }).catch(() => undefined);
    try {
      const params: Record<string, unknown> = { format: "png" };
      if (fullPage) {
        const metrics = await this.#deps.cdp.send<{ cssContentSize: { width: number; height: number } }>(ctx.tabId, "Page.getLayoutMetrics");
        params.captureBeyondViewport = true;
        params.clip = { x: 0, y: 0, width: metrics.cssContentSize.width, height: metrics.cssContentSize.height, scale: 1 };
      }
      const shot = await this.#deps.cdp.send<{ data: string }>(ctx.tabId, "Page.captureScreenshot", params);
      bytes = base64ToBytes(shot.data);
      if (bytes.byteLength > SCREENSHOT_MAX_BYTES) {
        const jpeg = await this.#deps.cdp.send<{ data: string }>(ctx.tabId, "Page.captureScreenshot", { ...params, format: "jpeg", quality: 70 });
        bytes = base64ToBytes(jpeg.data);
        contentType = "image/jpeg";
        warnings.push("the PNG was too large; sent a JPEG");
      }
    } catch (error) {
      if (!(error instanceof CdpFailure)) throw error;
      // captureVisibleTab sees only the active tab of a window: the task's tab is, in its own.
      try {
        const url = await chrome.tabs.captureVisibleTab(ctx.tab.windowId, { format: "png" });
        bytes = base64ToBytes(url.slice(url.indexOf(",") + 1));
      } catch (again) {
        throw new ActionError("PAGE_PREP_FAILED", `no screenshot: ${error.message}; captureVisibleTab: ${text(again)}`, true);
      }
      partial = true;
      warnings.push(`CDP screenshot failed (${error.message}); captured the visible tab instead${fullPage ? " (the viewport only)" : ""}`);
    } finally {
      void frameCall(ctx.tabId, 0, { op: "mark", untilMs: 0 }).catch(() => undefined);
    }
    if (bytes.byteLength > SCREENSHOT_MAX_BYTES) throw new ActionError("PAGE_PREP_FAILED", `the screenshot is ${bytes.byteLength} bytes, over the limit`, false);
    const size = imageSize(bytes) ?? { width: 0, height: 0 };
    const uploaded = await uploadArtifact(await this.#deps.server(), { taskId: ctx.task.taskId, kind: "screenshot", contentType, actionId: ctx.action.actionId }, bytes);
    const result: ScreenshotResult = { artifactId: uploaded.artifactId, url: uploaded.url, width: size.width, height: size.height };
    return { result, warnings, partial };
  }

  async #readability(ctx: Ctx): Promise<ActionSuccess> {
    type Page = { title: string; text: string; markdown: string; article: boolean };
    let page: Page | undefined;
    try {
      await chrome.scripting.executeScript({ target: { tabId: ctx.tabId, frameIds: [0] }, files: ["readability.js"] });
      const [run] = await chrome.scripting.executeScript({
        target: { tabId: ctx.tabId, frameIds: [0] },
        func: () => (globalThis as unknown as { __mimoReadability(): unknown }).__mimoReadability(),
      });
      page = run?.result as Page | undefined;
    } catch (error) {
      throw new ActionError("PAGE_PREP_FAILED", `readability failed: ${text(error)}`, true);
    }
    if (page === undefined) throw new ActionError("PAGE_PREP_FAILED", "readability returned nothing", true);
    const warnings: string[] = page.article ? [] : ["no article found: the text is the whole page's"];
    const textBytes = utf8(page.text).byteLength;
    if (textBytes > READABILITY_MAX_BYTES) {
      throw new ActionError("READABILITY_TOO_LARGE", `the page's text is ${textBytes} bytes, over the limit of ${READABILITY_MAX_BYTES}`, false);
    }
    const markdown = utf8(page.markdown);
    const stored = markdown.byteLength <= READABILITY_MAX_BYTES ? { body: markdown, contentType: "text/markdown; charset=utf-8" } : { body: utf8(page.text), contentType: "text/plain; charset=utf-8" };
    const uploaded = await uploadArtifact(await this.#deps.server(), { taskId: ctx.task.taskId, kind: "readability", contentType: stored.contentType, actionId: ctx.action.actionId }, stored.body);
    const result: ReadabilityResult = { artifactId: uploaded.artifactId, title: page.title, contentLengthBytes: textBytes, truncated: false };
    if (textBytes >= READABILITY_INLINE_LIMIT_BYTES) {
      result.truncated = true;
      return { result, warnings };
    }
    result.text = page.text;
    result.markdown = page.markdown;
    if (utf8(JSON.stringify(result)).byteLength > MAX_EXTENSION_FRAME_BYTES - ENVELOPE_BYTES) {
      delete result.markdown;
      warnings.push("the markdown is only in the artifact: with the text it would not fit in one message");
    }
    return { result, warnings };
  }

  async #getHtml(ctx: Ctx, xpath: string | undefined): Promise<ActionSuccess> {
    const { html } = await frameCall<{ html: string }>(ctx.tabId, 0, xpath === undefined ? { op: "html" } : { op: "html", xpath });
    const bytes = utf8(html);
    if (bytes.byteLength > HTML_MAX_BYTES) throw new ActionError("PAYLOAD_TOO_LARGE", `the HTML is ${bytes.byteLength} bytes, over the limit of ${HTML_MAX_BYTES}`, false);
    const uploaded = await uploadArtifact(await this.#deps.server(), { taskId: ctx.task.taskId, kind: "html", contentType: "text/html; charset=utf-8", actionId: ctx.action.actionId }, bytes);
    return { result: { artifactId: uploaded.artifactId, url: uploaded.url, bytes: bytes.byteLength } };
  }
}
