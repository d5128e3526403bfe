// The service worker. Chrome may stop it at any time and start it again for an event, so every
// listener is registered synchronously at the top level (MV3 delivers events only to listeners
// registered during the first run of the script), and every start connects to the server.
import { PING_FRAME } from "../../protocol/ts/protocol.ts";
import type { BrowserAction, ExtensionMessage, TaskControl, TaskStatus } from "../../protocol/ts/protocol.ts";
import { ActionLog } from "./action-log.ts";
import { BRIDGE_SETTING_KEYS, BRIDGE_STATUS_KEY, BridgeClient } from "./bridge.ts";
import { loadBridgeSettings } from "./bridge-settings.ts";
import { ActionDispatcher } from "./dispatcher.ts";
import { Debugger } from "./cdp.ts";
import { Connection } from "./connection.ts";
import { DEFAULT_DIALOG_TIMEOUT_MS, DIALOG_TIMEOUT_KEY, dialogFromCdp, PageDialogs } from "./dialogs.ts";
import { Executor } from "./executor.ts";
import { isContentMessage } from "./frame-protocol.ts";
import type { ContentMessage, OverlayState } from "./frame-protocol.ts";
import { forServer, policyOf, setPolicyLookup } from "./evidence.ts";
import { everyFrame, frameCall } from "./frames.ts";
import { confirmationRequested, confirmationSettled } from "./confirmations.ts";
import { fromExtensionPage, isPageMessage, refused } from "./messages.ts";
import { ensureContentScript, forgetAllowedRequests, siteAllowed } from "./site-access.ts";
import { loadServerAccess, SETTING_KEYS } from "./storage.ts";
import type { ServerAccess } from "./storage.ts";
import { BrowserSync } from "./sync.ts";
import type { BrowserReader } from "./sync.ts";
import type { ChromeState } from "./snapshot.ts";
import { addTab, NewTabs } from "./task-tabs.ts";
import { NetGuard } from "./net-guard.ts";
import { handBack, leaveTab, TAKEOVER_LOG_KEY, TaskRegistry, tabsOf } from "./tasks.ts";
import type { TaskRecord } from "./tasks.ts";
import { overlayFor, overlayOf, overlayWhileActing } from "./overlay-state.ts";
import { seeded } from "./random.ts";
import { ActionError } from "./results.ts";
import type { ActionSuccess } from "./results.ts";
import { secretVault } from "./secret-values.ts";

/** Wakes the worker to reconnect when Chrome stopped it; 30 s is the shortest period Chrome allows. */
const RECONNECT_ALARM = "mimo-reconnect";
const RECONNECT_ALARM_MINUTES = 0.5;

const reader: BrowserReader = {
  async state() {
    const [windows, groups, lastFocused] = await Promise.all([
      chrome.windows.getAll({ populate: true }),
      chrome.tabGroups.query({}),
      chrome.windows.getLastFocused().catch(() => undefined),
    ]);
    const state: ChromeState = { windows, groups, lastFocusedWindowId: lastFocused?.id };
    if (bridge.info !== undefined) state.bridge = bridge.info;
    return state;
  },
  tabsOf: (windowId) => chrome.tabs.query({ windowId }).catch(() => []),
  tab: (tabId) => chrome.tabs.get(tabId).catch(() => null),
};

const storage = chrome.storage.local;
// The local bridge: its state goes to the options page, and to the server with the snapshot.
const bridge = new BridgeClient({
  settings: loadBridgeSettings,
  changed(status) {
    void storage.set({ [BRIDGE_STATUS_KEY]: status });
    sync.resync();
  },
  now: () => Date.now(),
  random: () => Math.random(),
});
// Chrome's network rules follow the tasks: a task's blocked sites are kept from its tabs.
const netGuard = new NetGuard();
const tasks = new TaskRegistry(storage, (registry) => netGuard.follow(registry));
const cdp = new Debugger();
const dialogs = new PageDialogs({
  answer: async (tabId, accept, text) => {
    await cdp.send(tabId, "Page.handleJavaScriptDialog", text === undefined ? { accept } : { accept, promptText: text });
  },
  async timeoutMs() {
    const value = (await storage.get(DIALOG_TIMEOUT_KEY))[DIALOG_TIMEOUT_KEY];
    return typeof value === "number" && value > 0 ? value : DEFAULT_DIALOG_TIMEOUT_MS;
  },
  async heldForPerson(tabId) {
    const task = await tasks.byTab(tabId);
    if (task === undefined) return false;
    const status = await tasks.status(task.taskId);
    return task.takeover !== undefined || status === "waiting_confirmation" || status === "takeover" || status === "paused";
  },
  setTimer: (run, ms) => setTimeout(run, ms),
  clearTimer: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
});
chrome.debugger.onEvent.addListener((source, method, params) => {
  if (source.tabId === undefined) return;
  if (method === "Page.javascriptDialogOpening") {
    const dialog = dialogFromCdp(params);
    if (dialog !== null) dialogs.opened(source.tabId, dialog);
  } else if (method === "Page.javascriptDialogClosed") {
    dialogs.closed(source.tabId);
  }
});
chrome.debugger.onDetach.addListener((source) => {
  if (source.tabId !== undefined) dialogs.closed(source.tabId);
});
const newTabs = new NewTabs();

/**
 * Where the server is and this browser's credential, read once and kept until a setting or the
 * credential changes (SETTING_KEYS, below): every action and every upload asks for it, and
 * reading the vault took a few ms of each. A read that failed is not kept.
 */
let serverAccess: Promise<ServerAccess> | undefined;
function server(): Promise<ServerAccess> {
  if (serverAccess === undefined) {
    const reading = loadServerAccess();
    serverAccess = reading;
    reading.catch(() => {
      if (serverAccess === reading) serverAccess = undefined;
    });
  }
  return serverAccess;
}

const executor = new Executor({
  tasks,
  cdp,
  dialogs,
  newTabs,
  bridge,
  server,
  now: () => Date.now(),
});

function send(message: ExtensionMessage): boolean {
  return connection.send(JSON.stringify(message));
}

setPolicyLookup(async (taskId) => (await tasks.get(taskId))?.redaction);
void secretVault.load();

const dispatcher = new ActionDispatcher({
  log: new ActionLog(storage),
  // Secrets, and personal data when the task says so, never reach the log or the server.
  execute: async (action) => {
    let success: ActionSuccess;
    try {
      success = await executor.execute(action);
    } catch (error) {
      // A page's refusal may quote what was typed: never a secret's value.
      await secretVault.load();
      if (error instanceof ActionError) throw error.withMessage(secretVault.redact(error.message));
      throw error;
    }
    await secretVault.load();
    return forServer(success, await policyOf(action.taskId));
  },
  send: (message) => send(message),
  now: () => Date.now(),
});

const connection = new Connection({
  onOnline: () => {
    sync.start();
    void dispatcher.online();
    void flushControls();
  },
  onOffline: () => sync.stop(),
  onAction: (action: BrowserAction) => void dispatcher.receive(action),
  onTaskState: (taskId: string, status: TaskStatus, bridge: boolean) => void taskState(taskId, status, bridge),
  onResultAck: (ack) => void dispatcher.acknowledged(ack),
  onActionQuery: (query) => void dispatcher.query(query),
  onConfirmationRequested: (taskId, request) => void confirmationRequested(taskId, request),
  onConfirmationSettled: (taskId, step) => void confirmationSettled(taskId, step),
});
// The last line of defence: no frame carries a secret's value, whatever produced it.
connection.filter = (frame) => secretVault.redactFrame(frame);
const sync = new BrowserSync(reader, {
  send: (frame) => connection.send(frame),
  failed: (message) => connection.fail(message),
});

/** Statuses of a task that has ended. */
const ENDED: ReadonlySet<string> = new Set(["completed", "error", "canceled"]);

/** The server told us a task's status: the overlay of its tab follows, and its network rules. */
async function taskState(taskId: string, status: TaskStatus, bridge: boolean): Promise<void> {
  await tasks.setStatus(taskId, status, Date.now(), bridge);
  // Stopped or answered elsewhere: nothing waits in the side panel any more.
  if (status !== "waiting_confirmation") await confirmationSettled(taskId);
  if (ENDED.has(status)) {
    // The person's own tabs go back to them: no debugger, no overlay, out of the task.
    let returned: number[] = [];
    await tasks.update(taskId, (t) => (returned = handBack(t)));
    for (const tabId of returned) {
      await cdp.detach(tabId);
      await everyFrame(tabId, { op: "overlay", state: "idle" }).catch(() => undefined);
    }
  }
  const task = await tasks.update(taskId, (t) => {
    t.overlay = overlayFor(status);
    if (status === "takeover") t.takeover ??= { at: Date.now(), reason: "the task was taken over" };
    else delete t.takeover;
    // An ended task's tabs are the person's again: its network rules go (net-guard.ts).
    if (ENDED.has(status)) t.ended ??= { at: Date.now() };
    else delete t.ended;
  });
  if (task !== undefined && task.tabClosed !== true) {
    for (const tabId of tabsOf(task)) await everyFrame(tabId, overlayOf(task));
  }
}

/** Tells the server of a takeover, resume or stop; kept for the next connection when offline. */
function sendControl(taskId: string, control: TaskControl): boolean {
  return send({ type: "task_control", taskId, control });
}

async function flushControls(): Promise<void> {
  for (const task of await tasks.all()) {
    const control = task.pendingControl;
    if (control !== undefined && sendControl(task.taskId, control)) await tasks.update(task.taskId, (t) => delete t.pendingControl);
  }
}

/** What a task tab's overlay shows now: the task's, or that of an action under way in it. */
function overlayIn(task: TaskRecord, tabId: number): OverlayState {
  return executor.actingIn(tabId) ? overlayWhileActing(task.overlay) : task.overlay;
}

/** The person acted in a task tab's overlay (or on the page while Mimo worked). */
async function personAction(message: ContentMessage, tabId: number): Promise<unknown> {
  const task = await tasks.byTab(tabId);
  if (message.type === "mimo:overlay-state") {
    return task === undefined ? { state: "idle" } : { state: overlayIn(task, tabId), label: task.label };
  }
  if (task === undefined) return null;
  const at = Date.now();
  let control: TaskControl | undefined;
  const updated = await tasks.update(task.taskId, (t) => {
    if (message.type === "mimo:takeover") {
      if (overlayIn(t, tabId) !== "ongoing") return;
      t.takeover = { at, reason: message.reason };
      t.overlay = "takeover";
      control = "takeover";
    } else if (message.type === "mimo:resume") {
      if (t.overlay !== "takeover") return;
      delete t.takeover;
      // Until the server says whether the task has work to do.
      t.overlay = "hidden";
      control = "resume";
    } else if (message.type === "mimo:stop") {
      delete t.takeover;
      t.stopRequested = { at };
      t.overlay = "idle";
      control = "stop";
    }
  });
  if (control === undefined || updated === undefined) return { state: updated?.overlay ?? "idle" };
  if (!sendControl(task.taskId, control)) await tasks.update(task.taskId, (t) => (t.pendingControl = control));
  const stored = await storage.get(TAKEOVER_LOG_KEY);
  const log = Array.isArray(stored[TAKEOVER_LOG_KEY]) ? (stored[TAKEOVER_LOG_KEY] as unknown[]) : [];
  log.push({ taskId: task.taskId, tabId, type: control, at, ...(message.type === "mimo:takeover" ? { reason: message.reason } : {}) });
  await storage.set({ [TAKEOVER_LOG_KEY]: log.slice(-50) });
  if (control === "stop") await cdp.detach(tabId);
  await everyFrame(tabId, { op: "overlay", state: updated.overlay });
  return { state: updated.overlay };
}

/** Statuses of a task that still acts: a tab its page opens then joins it. */
const ACTING: ReadonlySet<string> = new Set(["created", "running", "ongoing", "waiting_confirmation", "waiting_permission", "takeover", "paused"]);

/** A tab a step of a running task made its page open (a link, `window.open`) joins the task. */
async function tabOpened(tab: chrome.tabs.Tab, openerTabId: number): Promise<void> {
  if (tab.id === undefined) return;
  const task = await tasks.byTab(openerTabId);
  if (task === undefined || tabsOf(task).includes(tab.id) || !ACTING.has((await tasks.status(task.taskId)) ?? "running")) return;
  await addTab({ tasks, cdp }, task.taskId, tab.id, tab.windowId);
  newTabs.joined(task.taskId, tab.id);
}

chrome.tabs.onCreated.addListener((tab) => {
  sync.tabCreated(tab);
  // Whether a step acted in its opener is decided as Chrome tells of the tab, before any wait.
  const opener = tab.openerTabId;
  if (opener === undefined || !newTabs.openedByStep(opener, Date.now())) return;
  void tabOpened(tab, opener).catch((error: unknown) => console.error("mimo: a task's new tab", error));
});
chrome.tabs.onUpdated.addListener((_tabId, _change, tab) => sync.tabUpdated(tab));
chrome.tabs.onMoved.addListener((_tabId, move) => sync.tabMoved(move.windowId));
chrome.tabs.onDetached.addListener((_tabId, detach) => sync.tabMoved(detach.oldWindowId));
chrome.tabs.onAttached.addListener((_tabId, attach) => sync.tabMoved(attach.newWindowId));
chrome.tabs.onRemoved.addListener((tabId, remove) => {
  sync.tabRemoved(tabId, remove.windowId, remove.isWindowClosing);
  void tasks.byTab(tabId).then((task) => task && tasks.update(task.taskId, (t) => leaveTab(t, tabId)));
});
chrome.tabs.onActivated.addListener((active) => sync.tabActivated(active.tabId, active.windowId));
chrome.tabs.onReplaced.addListener((addedTabId, removedTabId) => sync.tabReplaced(addedTabId, removedTabId));
chrome.windows.onCreated.addListener((window) => sync.windowCreated(window));
chrome.windows.onRemoved.addListener((windowId) => sync.windowRemoved(windowId));
chrome.windows.onFocusChanged.addListener((windowId) => sync.windowFocused(windowId));
chrome.tabGroups.onCreated.addListener((group) => sync.groupChanged(group));
chrome.tabGroups.onUpdated.addListener((group) => sync.groupChanged(group));
chrome.tabGroups.onRemoved.addListener((group) => sync.groupRemoved(group.id));

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && SETTING_KEYS.some((key) => key in changes)) {
    serverAccess = undefined;
    connection.restart();
  }
  if (area === "local" && BRIDGE_SETTING_KEYS.some((key) => key in changes)) void bridge.restart();
});

/**
 * The person allowed a site (or all): the side panel stops offering it, a task waiting for a site
 * goes on (its step is tried again; should it need another site, it waits again), and a task tab
 * already showing it gets the content script (Chrome injects registered scripts only at the next
 * load) with its overlay.
 */
async function sitesAllowed(): Promise<void> {
  await forgetAllowedRequests();
  for (const taskId of await tasks.withStatus("waiting_permission")) {
    if (!sendControl(taskId, "resume")) await tasks.update(taskId, (t) => (t.pendingControl = "resume"));
  }
  for (const task of await tasks.all()) {
    if (task.tabClosed === true) continue;
    const tab = await chrome.tabs.get(task.tabId).catch(() => null);
    if (tab === null || !(await siteAllowed(tab.url ?? ""))) continue;
    await frameCall(task.tabId, 0, overlayOf(task)).catch(() => undefined);
  }
}
chrome.permissions.onAdded.addListener(() => void sitesAllowed().catch((error: unknown) => console.error("mimo: after a site was allowed", error)));
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === RECONNECT_ALARM) {
    connection.ensure();
    bridge.ensure();
  }
});
chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  if (isContentMessage(message)) {
    const tabId = sender.tab?.id;
    if (tabId === undefined) return false;
    // Resume and Stop are the overlay's buttons, drawn in the top frame only.
    if ((message.type === "mimo:resume" || message.type === "mimo:stop") && sender.frameId !== 0) {
      sendResponse(refused(`${message.type} comes from the overlay, in the tab's top frame`));
      return false;
    }
    personAction(message, tabId).then(sendResponse, (error: unknown) => {
      console.error("mimo: handling the overlay", error);
      sendResponse(null);
    });
    return true;
  }
  if (!isPageMessage(message)) return false;
  if (!fromExtensionPage(sender, chrome.runtime.id)) {
    sendResponse(refused(`${message.type} is taken from the extension's own pages only`));
    return false;
  }
  if (message.type === "mimo:confirm") {
    const { taskId, step, approve, reason } = message;
    const frame: ExtensionMessage = { type: "confirm", taskId, step, approve, ...(reason !== undefined ? { reason } : {}) };
    sendResponse({ sent: connection.send(JSON.stringify(frame)) });
    return false;
  }
  if (message.type === "mimo:wake") connection.ensure();
  else connection.restart();
  return false;
});
// Without a listener here Chrome would not start the worker when the browser starts.
chrome.runtime.onStartup.addListener(() => connection.ensure());
chrome.sidePanel?.setPanelBehavior({ openPanelOnActionClick: true }).catch(() => undefined);

// Alarms usually survive a stopped worker but not always a browser restart.
void chrome.alarms.get(RECONNECT_ALARM).then(async (alarm) => {
  if (alarm === undefined) await chrome.alarms.create(RECONNECT_ALARM, { periodInMinutes: RECONNECT_ALARM_MINUTES });
});

connection.ensure();
bridge.ensure();
// The rules of tasks forgotten while the worker was stopped go; those of the others stay.
void netGuard.follow(tasks).catch((error: unknown) => console.error("mimo: cannot set the tasks' network rules", error));
void ensureContentScript().catch((error: unknown) => console.error("mimo: cannot register the content script", error));

// Test hooks, only where the tests turned them on: feed a raw server frame into the connection
// (as if the server had sent it) and see the frames the extension sent: the last 200 of them,
// and how many were sent in all (so a reader can tell which are new). For the chaos tests:
// drop the socket, and send frames late (so they overtake each other) and twice.
type Chaos = { seed: number; duplicate: number; maxDelayMs: number };
type TestHooks = {
  deliver(frame: string): void;
  sent: string[];
  total: number;
  /** Every frame sent while a test records (set to `[]` to start). */
  record: string[] | null;
  execute(action: BrowserAction): Promise<unknown>;
  dropSocket(): void;
  chaos(settings: Chaos | null): void;
};
const TEST_HOOKS_KEY = "testHooks";

function installTestHooks(on: boolean): void {
  const g = globalThis as unknown as { __mimoTest?: TestHooks };
  if (!on) {
    delete g.__mimoTest;
    connection.wire = undefined;
    return;
  }
  const hooks: TestHooks = {
    deliver: (frame) => connection.receiveForTest(frame),
    sent: [],
    total: 0,
    record: null,
    execute: (action) => executor.execute(action),
    dropSocket: () => connection.fail("the chaos test dropped the socket"),
    chaos(settings) {
      if (settings === null) {
        connection.wire = undefined;
        return;
      }
      const random = seeded(settings.seed);
      connection.wire = (frame, put) => {
        // Keep-alives go as they are: the runtime answers them byte for byte.
        if (frame === PING_FRAME) return put(frame);
        setTimeout(() => put(frame), random() * settings.maxDelayMs);
        if (random() < settings.duplicate) setTimeout(() => put(frame), random() * settings.maxDelayMs * 2);
      };
    },
  };
  g.__mimoTest = hooks;
  connection.onSent = (frame) => {
    hooks.sent.push(frame);
    hooks.record?.push(frame);
    hooks.total++;
    if (hooks.sent.length > 200) hooks.sent.shift();
  };
}
void chrome.storage.local.get(TEST_HOOKS_KEY).then((s) => installTestHooks(s[TEST_HOOKS_KEY] === true));
chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && TEST_HOOKS_KEY in changes) installTestHooks(changes[TEST_HOOKS_KEY]!.newValue === true);
});
