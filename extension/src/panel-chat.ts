// The side panel as a place to work: the person starts a task on the tab they are looking at,
// and watches its conversation stream, its steps (with the page as the model saw it), its
// confirmations, and pauses, stops or takes over, as in the web app. It is the web app's own
// conversation (ChatView, TaskModel, TaskSocket) on the server the extension is paired with,
// under the extension's credential: the server opens it only on tasks bound to this browser,
// and refuses it the task's settings (sites, step by step, the bridge).
import type { FrontendMessage, TaskStatus } from "../../protocol/ts/protocol.ts";
import { ApiError, artifactUrl, taskHere, useServer } from "../../web/src/api.ts";
import { ChatView, conversationEvents } from "../../web/src/chat.ts";
import { h } from "../../web/src/dom.ts";
import { TaskSocket } from "../../web/src/socket.ts";
import { statusWords } from "../../web/src/steps.ts";
import { TaskModel } from "../../web/src/task.ts";
import { loadServerAccess } from "./storage.ts";

/** The paired server and this browser's credential, with the web app's API pointed at it. */
async function serverAccess(): Promise<{ serverUrl: string; token: string }> {
  const access = await loadServerAccess();
  useServer(access.serverUrl);
  return access;
}

/** A download URL for an artifact of a task bound to this browser (a step's screenshot). */
export async function panelArtifactUrl(artifactId: string): Promise<string> {
  return artifactUrl((await serverAccess()).token, artifactId);
}

/** Where the panel keeps the task it shows, so that it shows it again when reopened. */
const SHOWN_KEY = "sidePanelTask";

type Session = { taskId: string; model: TaskModel; socket: TaskSocket };

export class PanelChat {
  readonly el: HTMLElement;
  private readonly chat: ChatView;
  private readonly title = h("span", { class: "panel-chat-title", "data-testid": "panel-task-title" }, "New task");
  private readonly status = h("span", { class: "badge badge-sm", "data-testid": "panel-task-status", hidden: true });
  private readonly problem = h("p", { class: "form-error", role: "alert", "data-testid": "panel-chat-error", hidden: true });
  private session: Session | null = null;

  constructor() {
    this.chat = new ChatView(
      {
        onSend: (text) => this.send(text),
        onStop: () => this.frame({ type: "stop" }),
        onPause: () => this.frame({ type: "pause" }),
        onResume: () => this.frame({ type: "resume" }),
        onTakeOver: () => this.frame({ type: "take_over" }),
        onRegenerate: () => this.frame({ type: "regenerate" }),
        onSelectAnswer: (messageId) => this.frame({ type: "select_answer", messageId }),
        onConfirm: (step, approve, reason) => this.frame({ type: "confirm", step, approve, ...(reason !== undefined ? { reason } : {}) }),
        artifactUrl: panelArtifactUrl,
      },
      "panel",
    );
    const fresh = h("button", { class: "btn btn-sm", type: "button", "data-testid": "panel-new-task", onclick: () => void this.show(null) }, "New task");
    this.el = h("section", { class: "panel-chat", "aria-label": "Task" }, h("div", { class: "panel-chat-head" }, this.title, this.status, fresh), this.problem, this.chat.el);
  }

  /** The task shown, if any (its confirmations are answered here, not in a second card). */
  get taskId(): string | null {
    return this.session?.taskId ?? null;
  }

  /** Shows the task the panel showed last, if it is still there. */
  async restore(): Promise<void> {
    const stored = await chrome.storage.session.get(SHOWN_KEY);
    const taskId = stored[SHOWN_KEY];
    if (typeof taskId === "string") await this.show(taskId);
  }

  /** Shows a task of this browser's (`null`: a new one, started by the next message). */
  async show(taskId: string | null): Promise<void> {
    this.session?.socket.close();
    this.session = null;
    this.chat.reset();
    this.chat.setNote(null);
    this.problem.hidden = true;
    this.title.textContent = "New task";
    this.status.hidden = true;
    await chrome.storage.session.set({ [SHOWN_KEY]: taskId });
    if (taskId !== null) await this.open(taskId);
    this.onChange?.();
  }

  /** Called when the task shown changes. */
  onChange: (() => void) | null = null;


  private async open(taskId: string): Promise<void> {
    const { token } = await serverAccess();
    const model: TaskModel = new TaskModel(taskId, {
      ...conversationEvents(this.chat),
      status: (status, title) => this.setStatus(status, title),
      snapshot: () => {},
      stepMode: () => {},
      bridgeMode: () => {},
      domains: () => {},
      error: (error) => this.fail(`${error.code}: ${error.message}`),
      ready: () => {
        if (!model.statusKnown) this.setStatus(model.status, undefined);
        this.chat.scrollToEnd();
      },
    });
    const socket = new TaskSocket({
      taskId,
      token,
      lastSeq: () => model.lastSeq,
      onEvent: (event) => {
        if (this.session?.model === model) model.apply(event);
      },
      onConnection: (info) => {
        if (this.session?.socket !== socket) return;
        if (info.state === "live" && socket.queued === 0) this.chat.setNote(null);
        if (info.state === "reconnecting") this.chat.setNote("Not connected to Mimo's server: trying again…");
      },
      onOpenFailed: () => {
        if (this.session?.socket === socket && socket.connection.attempt >= 3) this.fail("Mimo's server does not open this task for this browser (it may be another browser's, or deleted).");
      },
    });
    this.session = { taskId, model, socket };
    socket.start();
  }

  private setStatus(status: TaskStatus, title: string | undefined): void {
    this.chat.setStatus(status);
    this.status.hidden = false;
    this.status.dataset.status = status;
    this.status.textContent = statusWords(status);
    if (title) this.title.textContent = title;
  }

  private fail(message: string): void {
    this.problem.hidden = false;
    this.problem.textContent = message;
  }

  private frame(message: FrontendMessage): void {
    const socket = this.session?.socket;
    if (!socket) return;
    if (socket.send(message) === "queued") this.chat.setNote("Not connected — this will be sent as soon as the connection is back.");
  }

  /** The person's message: the goal of a new task on the current tab, or the next one to the task shown. */
  private async send(text: string): Promise<boolean> {
    if (this.session === null) {
      const tab = await pageTab();
      if (tab?.id === undefined) {
        this.fail("Open the page Mimo should work on in this window first: Mimo works on web pages (http or https).");
        return false;
      }
      try {
        const { token } = await serverAccess();
        await this.show(await taskHere(token, tab.id));
      } catch (err) {
        this.fail(err instanceof ApiError ? `${err.code}: ${err.message}` : `Could not start the task: ${String(err)}`);
        return false;
      }
    }
    this.problem.hidden = true;
    this.frame({ type: "user_message", content: text, clientMessageId: crypto.randomUUID() });
    return true;
  }
}

/**
 * The page the person is looking at: the active tab of the panel's window, or, when the panel is
 * open as a page of its own (in a tab or a window), the active tab of the window they last used.
 */
async function pageTab(): Promise<chrome.tabs.Tab | undefined> {
  const web = (tab: chrome.tabs.Tab | undefined) => tab !== undefined && /^https?:/.test(tab.url ?? "");
  const [here] = await chrome.tabs.query({ active: true, currentWindow: true });
  if (web(here)) return here;
  const last = await chrome.windows.getLastFocused({ populate: true, windowTypes: ["normal"] });
  return last.tabs?.find((tab) => tab.active && web(tab));
}
