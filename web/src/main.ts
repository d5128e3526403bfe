// Mimo web app: wires the token, routing, the task socket and the views together.

import { MAX_USER_MESSAGE_BYTES } from "../../protocol/ts/protocol.ts";
import type { FrontendMessage } from "../../protocol/ts/protocol.ts";
import { ApiError, artifactUrl, attachFile, auditLog, createMcpToken, createTask, exportTask, exportZip, forkTask, forgetToken, getSetup, getTask, listMcpTokens, revokeMcpToken, storedToken, storeToken, verifyToken, listWebhooks, createWebhook, deleteWebhook, rotateWebhook, webhookDeliveries, resendDelivery } from "./api.ts";
import { ChatView, conversationEvents } from "./chat.ts";
import { consentQuery, showConsent } from "./consent.ts";
import { h } from "./dom.ts";
import { parseAuditLog, ReplayView } from "./replay.ts";
import { currentRoute, onRouteChange, openTask, replaceReplayStep } from "./router.ts";
import { TaskSocket } from "./socket.ts";
import { currentTab, TaskModel } from "./task.ts";
import { Banners, BrowserPanel, ExtensionsPanel, Header, TaskList, tokenForm } from "./view.ts";
import { Secrets } from "./secrets.ts";
import { SitesPanel } from "./sites.ts";
import { StepModePanel } from "./step-mode.ts";
import { BridgePanel } from "./bridge-panel.ts";
import { Skills } from "./skills.ts";
import { McpTokensPanel } from "./mcp-tokens.ts";
import { WebhooksPanel } from "./webhooks.ts";
import { GettingStarted } from "./onboarding.ts";
import { Extensions } from "./extensions.ts";
import { Sessions } from "./sessions.ts";

/** Banner code for a task whose socket keeps being refused. */
const UNREACHABLE = "NOT_FOUND";

type Session = { model: TaskModel; socket: TaskSocket };

class App {
  private readonly root: HTMLElement;
  private token: string | null = storedToken();
  private session: Session | null = null;
  /** The task whose replay is shown (instead of a live session). */
  private replaying: string | null = null;
  private checkingToken = false;
  private creatingTask = false;

  private readonly header: Header;
  private readonly banners = new Banners();
  private readonly tasks: TaskList;
  private readonly sessions: Sessions;
  private readonly chat: ChatView;
  private readonly replay: ReplayView;
  private readonly extensionsPanel: ExtensionsPanel;
  private readonly extensions: Extensions;
  private readonly guide: GettingStarted;
  private readonly browserPanel = new BrowserPanel();
  private readonly secrets = new Secrets({
    token: () => this.token,
    openTask: () => this.session?.model.taskId ?? null,
    newTask: () => this.newTask(),
  });
  private readonly sitesPanel = new SitesPanel((allowed, blocked) => this.sendFrame({ type: "set_domains", allowed, blocked }));
  private readonly stepModePanel = new StepModePanel((stepByStep) => this.sendFrame({ type: "set_step_mode", stepByStep }));
  private readonly bridgePanel = new BridgePanel((allow, confirm) => this.sendFrame({ type: "set_bridge", allow, confirm }));
  private readonly mcpPanel = new McpTokensPanel({
    list: () => listMcpTokens(this.token ?? ""),
    create: (name) => createMcpToken(this.token ?? "", name),
    revoke: (id) => revokeMcpToken(this.token ?? "", id),
  });
  private readonly webhooksPanel = new WebhooksPanel({
    list: () => listWebhooks(this.token ?? ""),
    create: (create) => createWebhook(this.token ?? "", create),
    remove: (id) => deleteWebhook(this.token ?? "", id),
    rotate: (id) => rotateWebhook(this.token ?? "", id),
    deliveries: (id) => webhookDeliveries(this.token ?? "", id),
    resend: (id) => resendDelivery(this.token ?? "", id),
  });
  private readonly skills = new Skills(() => this.token);
  private readonly shell: HTMLElement;

  constructor(root: HTMLElement) {
    this.root = root;
    this.header = new Header({
      onChangeToken: () => this.showTokenForm(true),
      onReconnect: () => this.session?.socket.reconnectNow(),
      onToggleSidebar: () => this.shell.classList.toggle("sidebar-open"),
      onTogglePanels: () => this.shell.classList.toggle("panels-open"),
      onExport: () => void this.download(exportTask, (taskId) => `mimo-task-${taskId}.json`),
      onExportZip: () => void this.download(exportZip, (taskId) => `mimo-task-${taskId}.zip`),
    });
    this.tasks = new TaskList({
      onNewTask: () => {
        // The open task is still blank: it is the new task (no empty sessions pile up).
        if (this.session !== null && this.chat.isBlank()) {
          this.chat.focusComposer();
          return;
        }
        void this.newTask();
      },
      onSearch: () => void this.sessions.load(false),
      onMore: () => void this.sessions.load(true),
    });
    this.chat = new ChatView({
      onSend: (text, onCurrentTab, answerSchema) => this.send(text, onCurrentTab, answerSchema),
      onStop: () => this.sendFrame({ type: "stop" }),
      onPause: () => this.sendFrame({ type: "pause" }),
      onRegenerate: () => this.sendFrame({ type: "regenerate" }),
      onSelectAnswer: (messageId) => this.sendFrame({ type: "select_answer", messageId }),
      onFork: (messageId) => void this.fork(messageId),
      onResume: () => this.sendFrame({ type: "resume" }),
      onTakeOver: () => this.sendFrame({ type: "take_over" }),
      onConfirm: (step, approve, reason) => this.sendFrame({ type: "confirm", step, approve, ...(reason !== undefined ? { reason } : {}) }),
      artifactUrl: (artifactId) => artifactUrl(this.token ?? "", artifactId),
      onAttach: (files) => void this.attach(files),
    });
    this.replay = new ReplayView({
      artifactUrl: (artifactId) => artifactUrl(this.token ?? "", artifactId),
      onStep: (at) => {
        if (this.replaying) replaceReplayStep(this.replaying, at);
      },
    });
    this.guide = new GettingStarted({
      onPair: () => void this.extensions.pair(),
      onTry: (goal) => void this.tryTask(goal),
    });
    this.chat.setGuide(this.guide.el);
    this.sessions = new Sessions({
      token: () => this.token,
      list: this.tasks,
      guide: this.guide,
      tokenRejected: (err) => this.tokenRejected(err),
    });
    this.extensionsPanel = new ExtensionsPanel({
      onRefresh: () => void this.extensions.refresh(),
      onSelect: (clientId) => this.sendFrame({ type: "select_client", clientId }),
      onPair: () => void this.extensions.pair(),
      onRevoke: (clientId) => void this.extensions.revoke(clientId),
    });
    this.extensions = new Extensions({
      token: () => this.token,
      panel: this.extensionsPanel,
      guide: this.guide,
      tokenRejected: (err) => this.tokenRejected(err),
      changed: () => this.renderSnapshot(),
    });
    this.shell = h(
      "div",
      { class: "app" },
      this.header.el,
      h(
        "div",
        { class: "layout" },
        this.tasks.el,
        this.chat.el,
        this.replay.el,
        h(
          "aside",
          { class: "sidepanel", "aria-label": "Browser and settings" },
          panelGroup("Browser", "group-browser", this.extensionsPanel.el, this.browserPanel.el),
          panelGroup("Settings", "group-settings", this.stepModePanel.el, this.bridgePanel.el, this.sitesPanel.el, this.secrets.panel.el, this.skills.panel.el, this.mcpPanel.el, this.webhooksPanel.el),
        ),
      ),
    );
    // Errors show above the conversation (or the replay) they concern.
    this.chat.el.prepend(this.banners.el);
    onRouteChange(() => {
      this.shell.classList.remove("sidebar-open", "panels-open");
      if (this.token) this.openRoute();
    });
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState !== "visible" || !this.token) return;
      void this.extensions.refresh();
      // Tasks may have been created or have moved on from another device meanwhile.
      void this.sessions.load(false);
    });
  }

  start(): void {
    if (this.token) this.showMain();
    else this.showTokenForm(false);
  }

  // ------------------------------------------------------------ token

  private showTokenForm(changing: boolean, error?: string): void {
    this.extensions.stopPolling();
    // With a (new) token, the route is opened afresh.
    this.setReplaying(null);
    const form = tokenForm({
      changing,
      onSubmit: async (token) => {
        form.setBusy(true);
        try {
          const list = await verifyToken(token);
          const changed = token !== this.token;
          storeToken(token);
          this.token = token;
          this.extensions.set(list.extensions);
          if (changed) this.closeSession();
          this.showMain();
        } catch (err) {
          form.setBusy(false);
          form.showError(err instanceof ApiError ? err.message : String(err));
        }
      },
      onCancel: changing && this.token ? () => this.showMain() : undefined,
    });
    this.root.replaceChildren(form.el);
    if (error) form.showError(error);
    form.focus();
    document.title = "Mimo — connect";
  }

  /** Saves a file of the open task: its export (history and actions, JSON) or its evidence zip. */
  private async download(fetchFile: (token: string, taskId: string) => Promise<Blob>, filename: (taskId: string) => string): Promise<void> {
    const taskId = this.session?.model.taskId ?? this.replaying;
    if (!taskId || !this.token) return;
    try {
      const file = await fetchFile(this.token, taskId);
      const link = h("a", { href: URL.createObjectURL(file), download: filename(taskId) });
      link.click();
      // The download has taken the file by the next turn of the event loop.
      setTimeout(() => URL.revokeObjectURL(link.href), 1_000);
    } catch (err) {
      if (err instanceof ApiError) this.banners.show({ code: err.code === "NETWORK" ? "INTERNAL_ERROR" : err.code, message: `Export failed: ${err.message}` }, "error");
    }
  }

  /** The token stopped working (revoked or changed on the server): ask for a new one. */
  private tokenRejected(err: ApiError): void {
    this.closeSession();
    forgetToken();
    this.token = null;
    this.showTokenForm(false, `The saved token was rejected: ${err.message}`);
  }

  /**
   * The task socket closed without opening. A browser cannot read why a WebSocket upgrade was
   * refused, so ask the API about the task: a rejected token goes back to the token screen, an
   * unknown task is said plainly, anything else is a passing failure the socket retries.
   */
  private async openFailed(taskId: string): Promise<void> {
    if (!this.token || this.checkingToken) return;
    this.checkingToken = true;
    try {
      await getTask(this.token, taskId);
    } catch (err) {
      if (err instanceof ApiError && err.unauthorized) this.tokenRejected(err);
      else if (err instanceof ApiError && err.status === 404 && this.session?.model.taskId === taskId) {
        this.closeSession();
        this.banners.show({ code: UNREACHABLE, message: "This task does not exist on this server. Start a new task." }, "warn");
      }
    } finally {
      this.checkingToken = false;
    }
  }

  // ------------------------------------------------------------ main screen

  private showMain(): void {
    // An MCP client's OAuth request waits for the person's answer before anything else.
    const consent = consentQuery(location.hash);
    if (consent !== null && this.token) {
      void showConsent(this.root, this.token, consent);
      return;
    }
    if (!this.shell.isConnected) this.root.replaceChildren(this.shell);
    this.openRoute();
    void this.sessions.load(false);
    void this.extensions.refresh();
    void this.skills.load();
    void this.mcpPanel.load();
    void this.webhooksPanel.load();
    void this.loadSetup();
    this.extensions.startPolling();
  }

  /** What the guide tells of this deployment (its model, its demo task); it does without. */
  private async loadSetup(): Promise<void> {
    if (!this.token) return;
    try {
      this.guide.setSetup(await getSetup(this.token));
    } catch (err) {
      if (err instanceof ApiError && err.unauthorized) this.tokenRejected(err);
    }
  }

  /** A new task with `goal` (the open one when it is still blank). */
  private async tryTask(goal: string): Promise<void> {
    if (this.session !== null && !this.chat.isBlank() && (await this.newTask()) === null) return;
    await this.send(goal, false, undefined);
  }

  /** Opens the task named by the URL hash (or none), live or as its replay. */
  private openRoute(): void {
    const route = currentRoute();
    if (route === null) {
      this.closeSession();
      this.renderNoTask();
      this.banners.show({ code: "NOT_FOUND", message: "The address does not name a valid task. Start a new task instead." });
      return;
    }
    if (route === undefined) {
      this.closeSession();
      this.renderNoTask();
      return;
    }
    if (route.replay) {
      this.openReplay(route.taskId, route.replay.at);
      return;
    }
    if (this.session?.model.taskId === route.taskId) return;
    this.openSession(route.taskId);
  }

  /** Shows the task's replay, or the live view (`null`). */
  private setReplaying(taskId: string | null): void {
    this.replaying = taskId;
    this.shell.classList.toggle("replaying", taskId !== null);
    (taskId === null ? this.chat.el : this.replay.el).prepend(this.banners.el);
    this.header.setReplaying(taskId !== null);
  }

  /** The task's replay at step `at`; no socket is open meanwhile (the log is all it shows). */
  private openReplay(taskId: string, at: number): void {
    if (this.replaying === taskId) {
      // The address named another step of the replay shown.
      this.replay.show(at);
      return;
    }
    this.closeSession();
    this.banners.clear();
    this.setReplaying(taskId);
    this.header.setTask(taskId);
    this.header.setConnection(null);
    this.tasks.setCurrent(taskId);
    document.title = "Mimo — replay";
    this.replay.clear("Loading the task's steps…");
    void this.loadReplay(taskId, at);
  }

  private async loadReplay(taskId: string, at: number): Promise<void> {
    if (!this.token) return;
    try {
      const [summary, log] = await Promise.all([getTask(this.token, taskId), auditLog(this.token, taskId)]);
      if (this.replaying !== taskId) return;
      const title = summary.title;
      this.header.setTask(taskId, title);
      this.header.setStatus(summary.status);
      document.title = `Mimo — replay of ${title || "a task"}`;
      this.replay.load(parseAuditLog(log), at);
      this.replay.focus();
    } catch (err) {
      if (this.replaying !== taskId) return;
      if (err instanceof ApiError && err.unauthorized) return this.tokenRejected(err);
      const gone = err instanceof ApiError && err.status === 404;
      this.replay.clear(gone ? "This task does not exist on this server." : `The task's steps could not be loaded: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private renderNoTask(): void {
    this.setReplaying(null);
    this.banners.clear();
    this.chat.reset();
    this.header.setTask(null);
    this.header.setConnection(null);
    this.browserPanel.render(null);
    this.extensionsPanel.setSelected(undefined, false);
    this.tasks.setCurrent(null);
    document.title = "Mimo";
  }

  private openSession(taskId: string): void {
    this.closeSession();
    this.setReplaying(null);
    this.banners.clear();
    this.chat.reset();
    this.chat.setNote(null);
    this.browserPanel.render(null);
    this.secrets.panel.render([]);
    this.sitesPanel.render([], []);
    this.stepModePanel.render(false);
    this.bridgePanel.render({ allow: false, confirm: true });
    void this.secrets.load(taskId);
    this.header.setTask(taskId);
    this.extensionsPanel.setSelected(undefined, true);
    this.tasks.setCurrent(taskId);
    document.title = "Mimo — task";

    const model = new TaskModel(taskId, {
      ...conversationEvents(this.chat),
      status: (status, title, selectedClientId) => {
        this.header.setStatus(status);
        this.chat.setStatus(status);
        this.extensionsPanel.setSelected(selectedClientId, true);
        // A browser is attached now: an earlier "no extension" warning is moot.
        if (selectedClientId) {
          this.banners.clear("PLUGIN_OFFLINE");
          this.chat.setNoBrowser(null);
        }
        if (title) {
          this.header.setTask(taskId, title);
          document.title = `Mimo — ${title}`;
        }
        this.sessions.changed(taskId, status, title);
      },
      snapshot: () => this.renderSnapshot(),
      stepMode: (stepByStep) => this.stepModePanel.render(stepByStep),
      bridgeMode: (allow, confirm) => this.bridgePanel.render({ allow, confirm }),
      domains: (allowed, blocked) => this.sitesPanel.render(allowed, blocked),
      error: (error) => {
        // Before anything was asked, no browser is a setup step, not an error.
        if (error.code === "PLUGIN_OFFLINE" && this.chat.isBlank()) this.chat.setNoBrowser(error.message);
        else this.banners.show(error, error.code === "PLUGIN_OFFLINE" ? "warn" : "error");
      },
      ready: (behind) => {
        if (behind) {
          // The server's history is shorter than what is on screen: start over from it.
          queueMicrotask(() => {
            if (this.session?.model !== model) return;
            this.openSession(taskId);
            this.banners.show({ code: "INTERNAL_ERROR", message: "The server's history of this task was reset; showing what it has now." }, "warn");
          });
          return;
        }
        if (!model.statusKnown) {
          this.header.setStatus(model.status);
          this.chat.setStatus(model.status);
        }
        this.chat.scrollToEnd();
      },
    });
    const socket = new TaskSocket({
      taskId,
      token: this.token ?? "",
      lastSeq: () => model.lastSeq,
      onEvent: (event) => {
        if (this.session?.model === model) model.apply(event);
      },
      onConnection: (info) => {
        if (this.session?.socket !== socket) return;
        this.header.setConnection(info);
        if (info.state === "live") {
          this.banners.clear(UNREACHABLE);
          if (socket.queued === 0) this.chat.setNote(null);
        }
      },
      onOpenFailed: () => void this.openFailed(taskId),
    });
    this.session = { model, socket };
    socket.start();
    this.chat.focusComposer();
  }

  private closeSession(): void {
    const s = this.session;
    this.session = null;
    s?.socket.close();
  }

  private renderSnapshot(): void {
    const snap = this.session?.model.snapshot;
    this.bridgePanel.renderBridge(snap?.snapshot.bridge);
    if (!snap) {
      this.browserPanel.render(null);
      return;
    }
    const name = this.extensions.list.find((x) => x.clientId === snap.clientId)?.name;
    this.browserPanel.render({ clientId: snap.clientId, name, snapshot: snap.snapshot });
  }

  // ------------------------------------------------------------ actions

  private async newTask(): Promise<string | null> {
    if (!this.token || this.creatingTask) return null;
    this.creatingTask = true;
    try {
      const taskId = await createTask(this.token);
      openTask(taskId);
      this.openRoute();
      void this.sessions.load(false);
      return taskId;
    } catch (err) {
      this.apiFailed(err, "Could not create a task");
      return null;
    } finally {
      this.creatingTask = false;
    }
  }

  /** A new task with this one's history up to `messageId`, opened at once. */
  private async fork(messageId: string): Promise<void> {
    if (!this.session || !this.token) return;
    try {
      const made = await forkTask(this.token, this.session.model.taskId, messageId);
      openTask(made.taskId);
      this.openRoute();
      void this.sessions.load(false);
    } catch (err) {
      this.apiFailed(err, "Could not fork the task");
    }
  }

  /** Attaches files to the task (starting one when none is open); the task shows each once stored. */
  private async attach(files: File[]): Promise<void> {
    if (!this.session && !(await this.newTask())) return;
    const taskId = this.session!.model.taskId;
    for (const file of files) {
      try {
        await attachFile(this.token ?? "", taskId, file);
      } catch (err) {
        this.banners.show(err instanceof ApiError ? { code: err.code === "NETWORK" ? "INTERNAL_ERROR" : err.code, message: err.message } : { code: "INTERNAL_ERROR", message: String(err) });
      }
    }
  }

  private async send(text: string, onCurrentTab: boolean, answerSchema: unknown): Promise<boolean> {
    const bytes = new TextEncoder().encode(text).length;
    if (bytes > MAX_USER_MESSAGE_BYTES) {
      this.banners.show({ code: "SCHEMA_VALIDATION_FAILED", message: `The message is ${bytes} bytes; the limit is ${MAX_USER_MESSAGE_BYTES}.` });
      return false;
    }
    // Typing into the empty screen starts a task.
    if (!this.session && !(await this.newTask())) return false;
    if (onCurrentTab) {
      const snapshot = this.session?.model.snapshot?.snapshot;
      const tabId = snapshot === undefined ? undefined : currentTab(snapshot, location.origin);
      if (tabId === undefined) {
        this.banners.show({ code: "INVALID_TASK_TAB", message: "No tab of yours is known yet: is the extension connected? Send without \"On my current tab\" to use a window of Mimo's own." });
        return false;
      }
      this.sendFrame({ type: "start_on_tab", tabId });
    }
    // The id makes a resend after a reconnect safe: the server stores the message once.
    this.sendFrame({ type: "user_message", content: text, clientMessageId: crypto.randomUUID(), ...(answerSchema === undefined ? {} : { answerSchema }) });
    return true;
  }

  private sendFrame(message: FrontendMessage): void {
    const socket = this.session?.socket;
    if (!socket) return;
    if (socket.send(message) === "queued") {
      this.chat.setNote(socket.connection.state === "live" ? null : "Not connected — this will be sent as soon as the connection is back.");
    }
  }

  private apiFailed(err: unknown, what: string): void {
    if (err instanceof ApiError && err.unauthorized) {
      this.tokenRejected(err);
      return;
    }
    const message = err instanceof Error ? err.message : String(err);
    const code = err instanceof ApiError && err.code !== "NETWORK" ? err.code : "INTERNAL_ERROR";
    this.banners.show({ code, message: `${what}: ${message}` });
  }
}

const root = document.getElementById("app");
if (root) new App(root).start();

/** A group of the right-hand panels, collapsible by its heading (open at first). */
function panelGroup(title: string, testId: string, ...panels: HTMLElement[]): HTMLElement {
  return h("details", { class: "panel-group", open: true, "data-testid": testId }, h("summary", { class: "panel-group-title" }, title), ...panels);
}
