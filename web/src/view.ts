// Everything around the chat: header, token screen, error banners, the session list, the
// extensions panel and the live view of the person's browser.

import type { BrowserSnapshot, ErrorObject, ExtensionInfo, TabGroupInfo, TabInfo, TaskListEntry, TaskStatus } from "../../protocol/ts/protocol.ts";
import { h, relativeTime, replaceChildren } from "./dom.ts";
import { replayHash, taskHash } from "./router.ts";
import type { ConnectionInfo } from "./socket.ts";
import { statusWords } from "./steps.ts";

// ---------------------------------------------------------------- token screen

export type TokenForm = {
  el: HTMLElement;
  showError(message: string): void;
  setBusy(busy: boolean): void;
  focus(): void;
};

export function tokenForm(opts: { changing: boolean; onSubmit: (token: string) => void; onCancel?: () => void }): TokenForm {
  const input = h("input", {
    id: "token",
    class: "input",
    type: "password",
    autocomplete: "current-password",
    spellcheck: "false",
    placeholder: "MIMO_API_TOKEN",
    "data-testid": "token-input",
    required: true,
  });
  const submit = h("button", { class: "btn btn-primary btn-block", type: "submit", "data-testid": "token-submit" }, "Connect");
  const error = h("div", { class: "form-error", role: "alert", "data-testid": "token-error", hidden: true });
  const form = h(
    "form",
    {
      class: "token-card",
      onsubmit: ((e: Event) => {
        e.preventDefault();
        const token = input.value.trim();
        if (!token) {
          show("Enter the token.");
          return;
        }
        opts.onSubmit(token);
      }) as EventListener,
    },
    h("div", { class: "brand brand-lg" }, h("span", { class: "logo" }, "M"), "Mimo"),
    h("h1", {}, opts.changing ? "Change access token" : "Connect to Mimo"),
    h("p", { class: "muted" }, "Enter this deployment's access token (", h("code", {}, "MIMO_API_TOKEN"), "). It is kept in this browser only."),
    h("label", { class: "label", for: "token" }, "Access token"),
    input,
    error,
    submit,
    opts.onCancel ? h("button", { class: "btn btn-ghost btn-block", type: "button", onclick: () => opts.onCancel?.() }, "Cancel") : null,
  );
  function show(message: string): void {
    error.textContent = message;
    error.hidden = false;
    input.classList.add("invalid");
    input.select();
  }
  input.addEventListener("input", () => {
    error.hidden = true;
    input.classList.remove("invalid");
  });
  return {
    el: h("main", { class: "token-screen" }, form),
    showError: show,
    setBusy(busy) {
      submit.disabled = busy;
      submit.textContent = busy ? "Checking…" : "Connect";
    },
    focus: () => input.focus(),
  };
}

// ---------------------------------------------------------------- header

export class Header {
  readonly el: HTMLElement;
  private readonly title: HTMLElement;
  private readonly status: HTMLElement;
  private readonly connection: HTMLElement;
  private readonly connectionText: HTMLElement;
  private readonly exportButton: HTMLButtonElement;
  private readonly exportZipButton: HTMLButtonElement;
  /** To the task's replay, or back from it to the live task. */
  private readonly viewLink: HTMLAnchorElement;
  private taskId: string | null = null;
  private replaying = false;
  private retryTimer: ReturnType<typeof setInterval> | null = null;

  constructor(opts: { onChangeToken: () => void; onReconnect: () => void; onToggleSidebar: () => void; onTogglePanels: () => void; onExport: () => void; onExportZip: () => void }) {
    this.title = h("div", { class: "task-title", "data-testid": "task-title" });
    this.exportButton = h("button", { class: "btn btn-ghost btn-sm", type: "button", "data-testid": "export", hidden: true, title: "Download the task's whole history and actions as JSON", onclick: () => opts.onExport() }, "Export");
    this.exportZipButton = h(
      "button",
      { class: "btn btn-ghost btn-sm", type: "button", "data-testid": "export-zip", hidden: true, title: "Download the evidence: the audit log, the whole run and every screenshot, as a zip", onclick: () => opts.onExportZip() },
      "Export zip",
    );
    this.viewLink = h("a", { class: "btn btn-ghost btn-sm", "data-testid": "replay-link", hidden: true }, "Replay");
    this.status = h("span", { class: "badge", "data-testid": "task-status", hidden: true });
    this.connectionText = h("span", {}, "offline");
    this.connection = h(
      "button",
      { class: "conn", type: "button", "data-testid": "connection-state", "data-state": "closed", title: "Connection to the task", onclick: () => opts.onReconnect() },
      h("span", { class: "conn-dot" }),
      this.connectionText,
    );
    this.el = h(
      "header",
      { class: "topbar" },
      h("button", { class: "icon-btn sidebar-toggle", type: "button", "aria-label": "Tasks", onclick: () => opts.onToggleSidebar() }, "☰"),
      h("a", { class: "brand", href: "#/" }, h("span", { class: "logo" }, "M"), "Mimo"),
      h("div", { class: "topbar-task" }, this.title, this.status),
      h(
        "div",
        { class: "topbar-right" },
        this.connection,
        this.viewLink,
        this.exportButton,
        this.exportZipButton,
        h("button", { class: "btn btn-ghost btn-sm", type: "button", "data-testid": "change-token", onclick: () => opts.onChangeToken() }, "Token"),
        // On a narrow screen the browser and settings panels are a drawer.
        h("button", { class: "btn btn-ghost btn-sm panels-toggle", type: "button", "data-testid": "panels-toggle", title: "Browser and settings", onclick: () => opts.onTogglePanels() }, "Panels"),
      ),
    );
  }

  setTask(taskId: string | null, title?: string): void {
    this.taskId = taskId;
    this.title.textContent = taskId ? title || "New task" : "No task open";
    this.title.title = taskId ? `Task ${taskId}` : "";
    this.exportButton.hidden = !taskId;
    this.exportZipButton.hidden = !taskId;
    this.viewLink.hidden = !taskId;
    if (!taskId) this.status.hidden = true;
    this.setReplaying(this.replaying);
  }

  /** The task is shown as its replay (the link leads back to it) or live (the link to its replay). */
  setReplaying(replaying: boolean): void {
    this.replaying = replaying;
    if (this.taskId === null) return;
    this.viewLink.href = replaying ? taskHash(this.taskId) : replayHash(this.taskId);
    this.viewLink.textContent = replaying ? "Back to the task" : "Replay";
    this.viewLink.title = replaying ? "The task's conversation, live" : "Go through the task's steps one by one: pages before and after, reflection, risk, confirmation";
  }

  setStatus(status: TaskStatus): void {
    this.status.hidden = false;
    this.status.textContent = statusWords(status);
    this.status.dataset.status = status;
  }

  setConnection(info: ConnectionInfo | null): void {
    if (this.retryTimer) clearInterval(this.retryTimer);
    this.retryTimer = null;
    const state = info?.state ?? "closed";
    this.connection.dataset.state = state;
    const label = (): string => {
      switch (state) {
        case "connecting":
          return info && info.attempt > 0 ? "reconnecting…" : "connecting…";
        case "syncing":
          return "syncing…";
        case "live":
          return "live";
        case "reconnecting": {
          const s = Math.max(0, Math.ceil(((info?.retryAt ?? Date.now()) - Date.now()) / 1000));
          return `offline · retry in ${s}s`;
        }
        case "closed":
          return "not connected";
      }
    };
    this.connectionText.textContent = label();
    this.connection.title = state === "reconnecting" ? "Connection lost. Click to retry now." : "Connection to the task";
    if (state === "reconnecting") this.retryTimer = setInterval(() => (this.connectionText.textContent = label()), 500);
  }
}

// ---------------------------------------------------------------- error banners

export class Banners {
  readonly el = h("div", { class: "banners", "aria-live": "assertive" });
  private readonly shown = new Map<string, HTMLElement>();

  /** Shows an error; the same code and message again replaces the old banner. */
  show(error: Pick<ErrorObject, "code" | "message">, kind: "error" | "warn" = "error"): void {
    const key = `${error.code}\n${error.message}`;
    this.shown.get(key)?.remove();
    const banner = h(
      "div",
      { class: `banner banner-${kind}`, role: "alert", "data-testid": "error-banner", "data-code": error.code },
      h("span", { class: "banner-code" }, error.code),
      h("span", { class: "banner-message" }, error.message),
      h("button", { class: "banner-close", type: "button", "aria-label": "Dismiss", title: "Dismiss", onclick: () => this.dismiss(key) }, "×"),
    );
    this.shown.set(key, banner);
    this.el.append(banner);
  }

  dismiss(key: string): void {
    this.shown.get(key)?.remove();
    this.shown.delete(key);
  }

  clear(code?: string): void {
    for (const [key, el] of this.shown) {
      if (code === undefined || el.dataset.code === code) {
        el.remove();
        this.shown.delete(key);
      }
    }
  }
}

// ---------------------------------------------------------------- sessions

export type TaskListHandlers = {
  onNewTask: () => void;
  /** The words searched for changed (empty: every task). */
  onSearch: (words: string) => void;
  /** The next page, after the tasks shown. */
  onMore: () => void;
};

/**
 * The deployment's sessions, as the server lists them (`GET /api/tasks`): the most recently
 * active first, each with its status and last activity, where it was forked from and its forks.
 */
export class TaskList {
  readonly el: HTMLElement;
  private readonly list = h("nav", { class: "recent", "aria-label": "Sessions", "data-testid": "task-list" });
  private readonly search = h("input", { type: "search", class: "task-search", placeholder: "Search sessions", "aria-label": "Search sessions", "data-testid": "task-search", autocomplete: "off" });
  private readonly more: HTMLButtonElement;
  private readonly error = h("p", { class: "small error-text", "data-testid": "task-list-error" });
  private current: string | null = null;

  constructor(handlers: TaskListHandlers) {
    this.search.addEventListener("input", () => handlers.onSearch(this.words));
    this.more = h("button", { class: "btn btn-sm btn-outline btn-block task-more", type: "button", "data-testid": "task-more", hidden: true, onclick: () => handlers.onMore() }, "Show older");
    this.el = h(
      "aside",
      { class: "sidebar" },
      h("button", { class: "btn btn-primary btn-block", type: "button", "data-testid": "new-task", onclick: () => handlers.onNewTask() }, "+ New task"),
      h("div", { class: "panel-title" }, "Sessions"),
      this.search,
      this.list,
      this.more,
      this.error,
    );
  }

  /** The words searched for. */
  get words(): string {
    return this.search.value.trim();
  }

  /** Shows `tasks` (every page loaded so far); `more` when an older page follows. */
  render(tasks: TaskListEntry[], more: boolean): void {
    this.error.textContent = "";
    this.more.hidden = !more;
    if (tasks.length === 0) {
      replaceChildren(this.list, h("p", { class: "muted small" }, this.words ? "No session's title has these words." : "Your tasks will appear here."));
      return;
    }
    const titles = new Map(tasks.map((t) => [t.taskId, t.title]));
    const name = (taskId: string): string => titles.get(taskId) || `task ${taskId.slice(0, 8)}`;
    replaceChildren(
      this.list,
      tasks.map((t) =>
        h(
          "div",
          { class: `recent-item${t.taskId === this.current ? " current" : ""}`, "data-testid": "task-item", "data-task-id": t.taskId },
          h(
            "a",
            { class: "recent-link", href: taskHash(t.taskId), "data-testid": "task-open", title: t.title ?? t.taskId },
            h("span", { class: "recent-title" }, t.title || "Untitled task"),
            h(
              "span",
              { class: "recent-meta" },
              h("span", { class: "badge badge-sm", "data-status": t.status, "data-testid": "task-item-status" }, statusWords(t.status)),
              h("span", { "data-testid": "task-activity" }, relativeTime(t.lastActivityAt)),
            ),
          ),
          t.forkedFrom && h("a", { class: "recent-fork", href: taskHash(t.forkedFrom.taskId), "data-testid": "task-forked-from" }, `forked from ${name(t.forkedFrom.taskId)}`),
          t.forks.length > 0 &&
            h(
              "span",
              { class: "recent-fork", "data-testid": "task-forks" },
              `${t.forks.length} ${t.forks.length === 1 ? "fork" : "forks"}: `,
              t.forks.map((id, i) => [i > 0 && ", ", h("a", { href: taskHash(id) }, id.slice(0, 8))]),
            ),
        ),
      ),
    );
  }

  /** Marks the open task (`null`: none). */
  setCurrent(taskId: string | null): void {
    this.current = taskId;
    for (const item of this.list.querySelectorAll<HTMLElement>('[data-testid="task-item"]')) {
      item.classList.toggle("current", item.dataset.taskId === taskId);
    }
  }

  showError(message: string): void {
    this.error.textContent = `The sessions could not be loaded: ${message}`;
  }
}

// ---------------------------------------------------------------- extensions


/** How to load the unpacked extension into Chrome. */
export function loadExtensionSteps(): Node[] {
  return [h("span", {}, "Load the extension: "), h("code", {}, "chrome://extensions"), h("span", {}, " → Developer mode → Load unpacked → the folder "), h("code", {}, "extension/dist"), h("span", {}, " of Mimo's checkout.")];
}

/**
 * A pairing code with this server's address beside it: what the extension's options ask for
 * (test ids `{testId}-server` and `{testId}-code`).
 */
export function pairingFields(code: string, expiresAt: number, testId = "pairing"): Node[] {
  return [
    h("dl", { class: "pairing-fields" }, h("dt", {}, "Server"), h("dd", { "data-testid": `${testId}-server` }, location.origin), h("dt", {}, "Code"), h("dd", { class: "pairing-code", "data-testid": `${testId}-code` }, code)),
    h("p", { class: "muted" }, `Valid once, until ${new Date(expiresAt).toLocaleTimeString()}.`),
  ];
}
export class ExtensionsPanel {
  readonly el: HTMLElement;
  private readonly list = h("div", { class: "ext-list", "data-testid": "extension-list" });
  private readonly status = h("div", { class: "panel-status muted small" });
  private readonly refreshButton: HTMLButtonElement;
  private extensions: ExtensionInfo[] = [];
  private selected: string | undefined;
  private hasTask = false;
  private loaded = false;
  private readonly onSelect: (clientId: string) => void;
  private readonly onRevoke: (clientId: string) => void;
  private readonly pairing = h("div", { class: "pairing small", "data-testid": "pairing" });
  /** While a pairing code is shown: the browsers listed before it. */
  private pairingFrom: Set<string> | null = null;

  constructor(opts: { onRefresh: () => void; onSelect: (clientId: string) => void; onPair: () => void; onRevoke: (clientId: string) => void }) {
    this.onSelect = opts.onSelect;
    this.onRevoke = opts.onRevoke;
    this.refreshButton = h("button", { class: "icon-btn", type: "button", title: "Refresh", "aria-label": "Refresh extensions", "data-testid": "extensions-refresh", onclick: () => opts.onRefresh() }, "↻");
    const pair = h("button", { class: "btn btn-sm btn-outline", type: "button", "data-testid": "pair-browser", onclick: () => opts.onPair() }, "Pair a browser");
    this.el = h("section", { class: "panel" }, h("div", { class: "panel-head" }, h("div", { class: "panel-title" }, "Extensions"), this.refreshButton), this.list, pair, this.pairing, this.status);
    this.render();
  }

  /**
   * Shows a one-time pairing code with everything the extension's options ask for (this
   * server's address beside it) and how to load the extension first. The card gives way to
   * "Paired" once a browser that was not listed when the code was shown appears.
   */
  showPairingCode(code: string, expiresAt: number): void {
    this.pairingFrom = new Set(this.extensions.map((x) => x.clientId));
    replaceChildren(this.pairing, h("p", {}, "1. ", ...loadExtensionSteps()), h("p", {}, "2. In its options (it opens them), enter this server's address and the code:"), ...pairingFields(code, expiresAt));
  }

  /** The browser list changed: a browser new since the code was shown means the code was used. */
  private pairingDone(): void {
    if (this.pairingFrom === null) return;
    const added = this.extensions.find((x) => x.paired && !this.pairingFrom!.has(x.clientId));
    if (added === undefined) return;
    this.pairingFrom = null;
    replaceChildren(this.pairing, h("p", { class: "pairing-done", "data-testid": "pairing-done" }, `Paired: ${added.name || added.clientId}.`));
  }

  setLoading(loading: boolean): void {
    this.refreshButton.classList.toggle("spinning", loading);
  }

  setExtensions(list: ExtensionInfo[]): void {
    this.loaded = true;
    this.extensions = [...list].sort((a, b) => Number(b.online) - Number(a.online) || b.lastSeenAt - a.lastSeenAt);
    this.status.textContent = "";
    this.pairingDone();
    this.render();
  }

  setError(message: string): void {
    this.status.textContent = `Could not refresh: ${message}`;
  }

  setSelected(clientId: string | undefined, hasTask: boolean): void {
    this.selected = clientId;
    this.hasTask = hasTask;
    this.render();
  }

  /** Re-renders relative times. */
  tick(): void {
    this.render();
  }

  private render(): void {
    if (!this.loaded) {
      replaceChildren(this.list, h("p", { class: "muted small" }, "Loading…"));
      return;
    }
    if (this.extensions.length === 0) {
      replaceChildren(this.list, h("p", { class: "muted small empty-note" }, "No extension has connected yet. Install the Mimo extension in your browser, then “Pair a browser” and enter the code in its options."));
      return;
    }
    replaceChildren(
      this.list,
      this.extensions.map((x) => {
        const selected = x.clientId === this.selected;
        return h(
          "div",
          { class: `ext-item${selected ? " selected" : ""}`, "data-testid": "extension-item", "data-client-id": x.clientId, "data-online": String(x.online) },
          h("span", { class: `dot ${x.online ? "dot-on" : "dot-off"}`, title: x.online ? "online" : "offline" }),
          h(
            "div",
            { class: "ext-main" },
            h("div", { class: "ext-name" }, x.name || x.clientId),
            h("div", { class: "ext-meta" }, `${x.browser.name} ${x.browser.version}`.trim(), " · ", x.online ? "online" : `last seen ${relativeTime(x.lastSeenAt)}`),
          ),
          x.paired
            ? h("button", { class: "btn btn-sm btn-outline", type: "button", "data-testid": "extension-revoke", title: "Revoke this browser's pairing: it is disconnected at once", onclick: () => this.onRevoke(x.clientId) }, "Revoke")
            : h("span", { class: "pill", title: "Pair it again to connect" }, "Revoked"),
          selected
            ? h("span", { class: "pill pill-on" }, "In use")
            : h(
                "button",
                {
                  class: "btn btn-sm btn-outline",
                  type: "button",
                  "data-testid": "extension-select",
                  disabled: !this.hasTask || !x.online,
                  title: !this.hasTask ? "Open a task first" : x.online ? "Use this browser for the task" : "This browser is offline: open it with the Mimo extension to use it",
                  onclick: () => this.onSelect(x.clientId),
                },
                "Use",
              ),
        );
      }),
    );
  }
}

// ---------------------------------------------------------------- browser snapshot

const GROUP_COLORS: Record<string, string> = {
  grey: "#5f6368",
  blue: "#1a73e8",
  red: "#d93025",
  yellow: "#e37400",
  green: "#188038",
  pink: "#d01884",
  purple: "#9334e6",
  cyan: "#007b83",
  orange: "#fa7b17",
};

export function groupColor(name: string): string {
  return GROUP_COLORS[name] ?? "#5f6368";
}

export class BrowserPanel {
  readonly el: HTMLElement;
  private readonly body = h("div", { class: "snapshot", "data-testid": "snapshot" });
  private readonly caption = h("div", { class: "panel-caption muted small" });

  constructor() {
    this.el = h("section", { class: "panel" }, h("div", { class: "panel-head" }, h("div", { class: "panel-title" }, "Browser"), this.caption), this.body);
    this.render(null);
  }

  render(view: { clientId: string; name?: string; snapshot: BrowserSnapshot } | null): void {
    if (!view) {
      this.caption.textContent = "";
      replaceChildren(this.body, h("p", { class: "muted small empty-note" }, "No browser is attached to this task yet. When an extension is picked, its windows and tabs show up here live."));
      return;
    }
    const { snapshot } = view;
    this.caption.textContent = view.name ?? view.clientId.slice(0, 12);
    const groups = new Map<number, TabGroupInfo>(snapshot.groups.map((g) => [g.groupId, g]));
    const windows = [...snapshot.windows];
    // Tabs of windows the snapshot does not list still deserve a place.
    for (const t of snapshot.tabs) if (!windows.some((w) => w.windowId === t.windowId)) windows.push({ windowId: t.windowId, focused: false });
    windows.sort((a, b) => Number(b.focused) - Number(a.focused) || a.windowId - b.windowId);
    if (windows.length === 0) {
      replaceChildren(this.body, h("p", { class: "muted small empty-note" }, "The browser has no open windows."));
      return;
    }
    replaceChildren(
      this.body,
      windows.map((w, i) => {
        const tabs = snapshot.tabs.filter((t) => t.windowId === w.windowId).sort((a, b) => a.index - b.index);
        return h(
          "div",
          { class: `window${w.focused ? " focused" : ""}`, "data-window-id": w.windowId },
          h("div", { class: "window-head" }, h("span", {}, `Window ${i + 1}`), w.kind && w.kind !== "normal" ? h("span", { class: "pill" }, w.kind) : null, w.focused ? h("span", { class: "pill pill-on" }, "focused") : null, h("span", { class: "window-count" }, `${tabs.length} tab${tabs.length === 1 ? "" : "s"}`)),
          h("ul", { class: "tabs" }, renderTabs(tabs, groups, snapshot.activeTabId)),
        );
      }),
    );
  }
}

function renderTabs(tabs: TabInfo[], groups: Map<number, TabGroupInfo>, activeTabId: number | undefined): HTMLElement[] {
  const out: HTMLElement[] = [];
  let lastGroup: number | undefined;
  for (const tab of tabs) {
    const group = tab.groupId !== undefined && tab.groupId >= 0 ? groups.get(tab.groupId) : undefined;
    if (group && group.groupId !== lastGroup) {
      out.push(
        h(
          "li",
          { class: "group-head", style: `--group:${groupColor(group.color)}` },
          h("span", { class: "group-chip" }, group.title || "Group"),
          group.collapsed ? h("span", { class: "muted small" }, "collapsed") : null,
        ),
      );
    }
    lastGroup = group?.groupId;
    const focusedActive = tab.tabId === activeTabId;
    out.push(
      h(
        "li",
        {
          class: `tab${tab.active ? " active" : ""}${focusedActive ? " focused-tab" : ""}${group ? " grouped" : ""}`,
          style: group ? `--group:${groupColor(group.color)}` : null,
          "data-testid": "snapshot-tab",
          "data-tab-id": tab.tabId,
          "data-active": String(tab.active),
          "data-group": group ? group.title || String(group.groupId) : null,
          title: `${tab.title}\n${tab.url}`,
        },
        h("span", { class: `tab-icon${tab.status === "loading" ? " loading" : ""}`, "aria-hidden": "true" }, initial(tab)),
        h("span", { class: "tab-text" }, h("span", { class: "tab-title" }, tab.title || tab.url || "New tab"), h("span", { class: "tab-url" }, shortUrl(tab.url))),
      ),
    );
  }
  return out;
}

function initial(tab: TabInfo): string {
  const host = hostOf(tab.url);
  const c = (host || tab.title || "?").replace(/^www\./, "").charAt(0);
  return c.toUpperCase();
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
}

function shortUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.protocol === "http:" || u.protocol === "https:") return (u.host + u.pathname).replace(/\/$/, "");
    return url;
  } catch {
    return url;
  }
}
