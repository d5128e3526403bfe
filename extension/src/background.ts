// The service worker. Chrome may stop it at any time and start it again for an event, so every
// listener is registered synchronously at the top level (MV3 delivers events only to listeners
// registered during the first run of the script), and every start connects to the server.
import { Connection } from "./connection.ts";
import { isPageMessage } from "./messages.ts";
import { SETTING_KEYS } from "./storage.ts";
import { BrowserSync } from "./sync.ts";
import type { BrowserReader } from "./sync.ts";

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
    return { windows, groups, lastFocusedWindowId: lastFocused?.id };
  },
  tabsOf: (windowId) => chrome.tabs.query({ windowId }).catch(() => []),
  tab: (tabId) => chrome.tabs.get(tabId).catch(() => null),
};

const connection = new Connection({
  onOnline: () => sync.start(),
  onOffline: () => sync.stop(),
});
const sync = new BrowserSync(reader, {
  send: (frame) => connection.send(frame),
  failed: (message) => connection.fail(message),
});

chrome.tabs.onCreated.addListener((tab) => sync.tabCreated(tab));
chrome.tabs.onUpdated.addListener((_tabId, _change, tab) => sync.tabUpdated(tab));
chrome.tabs.onMoved.addListener((_tabId, move) => sync.tabMoved(move.windowId));
chrome.tabs.onDetached.addListener((_tabId, detach) => sync.tabMoved(detach.oldWindowId));
chrome.tabs.onAttached.addListener((_tabId, attach) => sync.tabMoved(attach.newWindowId));
chrome.tabs.onRemoved.addListener((tabId, remove) => sync.tabRemoved(tabId, remove.windowId, remove.isWindowClosing));
chrome.tabs.onActivated.addListener((active) => sync.tabActivated(active.tabId, active.windowId));
chrome.tabs.onReplaced.addListener((addedTabId, removedTabId) => sync.tabReplaced(addedTabId, removedTabId));
chrome.windows.onCreated.addListener((window) => sync.windowCreated(window));
chrome.windows.onRemoved.addListener((windowId) => sync.windowRemoved(windowId));
chrome.windows.onFocusChanged.addListener((windowId) => sync.windowFocused(windowId));
chrome.tabGroups.onCreated.addListener((group) => sync.groupChanged(group));
chrome.tabGroups.onUpdated.addListener((group) => sync.groupChanged(group));
chrome.tabGroups.onRemoved.addListener((group) => sync.groupRemoved(group.id));

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && SETTING_KEYS.some((key) => key in changes)) connection.restart();
});
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === RECONNECT_ALARM) connection.ensure();
});
chrome.runtime.onMessage.addListener((message) => {
  if (!isPageMessage(message)) return;
  if (message.type === "mimo:wake") connection.ensure();
  else connection.restart();
});
// Without a listener here Chrome would not start the worker when the browser starts.
chrome.runtime.onStartup.addListener(() => connection.ensure());

// Alarms usually survive a stopped worker but not always a browser restart.
void chrome.alarms.get(RECONNECT_ALARM).then(async (alarm) => {
  if (alarm === undefined) await chrome.alarms.create(RECONNECT_ALARM, { periodInMinutes: RECONNECT_ALARM_MINUTES });
});

connection.ensure();
