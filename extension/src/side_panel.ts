// The side panel: the connection, which sites Mimo may act on (with "Allow Mimo on <site>" for
// the current tab's site and for sites a task asked for), a task's conversation (started here
// on the current tab, or one of this browser's tasks opened here: panel-chat.ts), the steps of
// other tasks waiting for the person (the action, its risk and why, the page, the screenshot
// with the target outlined; Confirm and Decline with a reason, as in the web app), the tasks
// running in this browser with their state, and the last actions, all read from what the
// service worker keeps in storage (live).
import "../../web/style.css";
import { INDEX_KEY } from "./action-log.ts";
import type { FinishedEntry } from "./action-log.ts";
import { mountSiteAccess } from "./site-access-view.ts";
import { outlinedShot } from "../../web/src/evidence.ts";
import { describeAction, statusWords } from "../../web/src/steps.ts";
import { PanelChat, panelArtifactUrl } from "./panel-chat.ts";
import { CONFIRMATIONS_KEY } from "./confirmations.ts";
import type { Pending, PendingConfirmation } from "./confirmations.ts";
import type { PageMessage } from "./messages.ts";
import { STATUS_KEY } from "./storage.ts";
import type { ConnectionStatus } from "./storage.ts";
import { TASK_STATUS_KEY, TASKS_KEY } from "./tasks.ts";
import type { TaskRecord } from "./tasks.ts";

const LAST_ACTIONS = 12;

const chat = new PanelChat();

function $(id: string): HTMLElement {
  return document.getElementById(id)!;
}

function item(text: string, cls = ""): HTMLLIElement {
  const li = document.createElement("li");
  li.textContent = text;
  if (cls) li.className = cls;
  return li;
}

function time(ms: number): string {
  return new Date(ms).toLocaleTimeString();
}

function render(stored: Record<string, unknown>): void {
  const status = stored[STATUS_KEY] as ConnectionStatus | undefined;
  const connection = $("connection");
  connection.dataset.state = status?.state ?? "offline";
  connection.textContent = { online: "Online", connecting: "Connecting…", offline: "Offline" }[status?.state ?? "offline"] + (status?.lastError && status.state !== "online" ? ` — ${status.lastError}` : "");

  const tasks = Object.values((stored[TASKS_KEY] as Record<string, TaskRecord> | undefined) ?? {});
  const statuses = (stored[TASK_STATUS_KEY] as Record<string, { status: string }> | undefined) ?? {};
  const taskList = $("tasks");
  taskList.replaceChildren(
    ...(tasks.length === 0
      ? [item("No task", "muted")]
      : tasks.map((t) => {
          const status = statusWords(statuses[t.taskId]?.status ?? "running");
          const state = t.tabClosed ? `${status}, tab closed` : status;
          const doing = t.lastAction ? ` · last ${t.lastAction.name} at ${time(t.lastAction.at)}` : "";
          const row = item(`${t.taskId.slice(0, 8)} — ${state}${t.label ? ` · ${t.label}` : ""}${doing} `, t.takeover ? "partial" : "");
          if (t.taskId !== chat.taskId) {
            const open = el("button", { type: "button", className: "btn btn-sm", onclick: () => void chat.show(t.taskId) }, "Show here");
            open.dataset.testid = "panel-show-task";
            open.dataset.taskId = t.taskId;
            row.append(open);
          }
          return row;
        })),
  );

  const index = ((stored[INDEX_KEY] as FinishedEntry[] | undefined) ?? []).slice(-LAST_ACTIONS).reverse();
  $("actions").replaceChildren(
    ...(index.length === 0
      ? [item("None yet", "muted")]
      : index.map((e) => item(`${time(e.finishedAt)} ${e.name} — ${e.status}${e.code ? ` ${e.code}` : ""} (${e.finishedAt - e.startedAt} ms)`, e.status === "ok" ? "" : e.status))),
  );
}

/** The pending confirmations, each kept on screen while it waits (a re-render keeps a typed reason). */
function renderConfirmations(pending: Pending): void {
  const list = $("confirmations");
  // The task shown in the conversation asks there.
  const waiting = Object.values(pending).filter((p) => p.taskId !== chat.taskId);
  const shown = new Set(waiting.map(cardKey));
  for (const card of [...list.querySelectorAll<HTMLElement>(".confirmation")]) if (!shown.has(card.dataset.key ?? "")) card.remove();
  list.querySelector(".nothing")?.remove();
  for (const p of waiting) if (list.querySelector(`[data-key="${cardKey(p)}"]`) === null) list.append(confirmationCard(p));
  if (waiting.length === 0) list.append(Object.assign(document.createElement("p"), { className: "muted nothing", textContent: "Nothing waits for you." }));
}

function cardKey(p: PendingConfirmation): string {
  return `${p.taskId}:${p.request.step}`;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

function confirmationCard({ taskId, request }: PendingConfirmation): HTMLElement {
  const card = el("div", { className: "confirmation" });
  card.dataset.key = cardKey({ taskId, request, at: 0 });
  card.dataset.testid = "panel-confirmation";
  const risk = el("span", { className: `risk risk-${request.risk}` }, `${request.risk} risk`);
  const why = el("input", { type: "text", placeholder: "Why not? (optional, Mimo is told)", ariaLabel: "Why not" });
  why.dataset.testid = "panel-decline-reason";
  const note = el("p", { className: "muted" });
  const answer = (approve: boolean) => {
    for (const b of card.querySelectorAll("button")) b.disabled = true;
    const reason = why.value.trim();
    const message: PageMessage = { type: "mimo:confirm", taskId, step: request.step, approve, ...(!approve && reason !== "" ? { reason } : {}) };
    chrome.runtime.sendMessage(message).then(
      (answer: { sent: boolean } | undefined) => {
        note.textContent = answer?.sent === true ? "Sent…" : "Not connected: answer in the web app, or try again when online.";
        if (answer?.sent !== true) for (const b of card.querySelectorAll("button")) b.disabled = false;
      },
      () => (note.textContent = "Could not reach Mimo's service worker."),
    );
  };
  const [yes, no] = request.stepByStep ? ["Next step", "Skip"] : ["Confirm", "Decline"];
  const confirm = el("button", { type: "button", onclick: () => answer(true) }, yes);
  confirm.dataset.testid = "panel-confirm";
  const decline = el("button", { type: "button", onclick: () => answer(false) }, no);
  decline.dataset.testid = "panel-decline";
  card.append(
    // In the web app's words: "Step 3: Click “Continue”".
    // Step 0 is none of the agent's: an MCP client's, waiting for the person here.
    el("strong", {}, `${request.step === 0 ? "Your MCP client's step" : `Step ${request.step}`}: ${describeAction(request.action, request.targetName)}`),
    el("div", {}, risk, " ", request.stepByStep ? "Step by step: it runs when you press Next step." : `Mimo asks because ${request.reason}.`),
    ...(request.facts.length > 1 ? [el("ul", {}, ...request.facts.map((f) => el("li", {}, f)))] : []),
    el("div", { className: "muted" }, `${request.title || "(untitled)"} — ${request.url}`),
  );
  if (request.screenshotArtifactId !== undefined) {
    // The page as the model saw it, the target outlined: the web app's own evidence view.
    const shot = outlinedShot({
      url: panelArtifactUrl(request.screenshotArtifactId),
      alt: "The page the step acts on",
      ...(request.target !== undefined ? { target: request.target } : {}),
      testIds: { shot: "panel-screenshot", target: "panel-target" },
      onMissing: (frame) => frame.remove(),
    });
    card.append(shot);
  }
  card.append(el("div", { className: "confirm-actions" }, confirm, decline, why), note);
  return card;
}

async function refresh(): Promise<void> {
  const stored = await chrome.storage.local.get([STATUS_KEY, TASKS_KEY, TASK_STATUS_KEY, INDEX_KEY, CONFIRMATIONS_KEY]);
  render(stored);
  renderConfirmations((stored[CONFIRMATIONS_KEY] as Pending | undefined) ?? {});
}

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && [STATUS_KEY, TASKS_KEY, TASK_STATUS_KEY, INDEX_KEY, CONFIRMATIONS_KEY].some((k) => k in changes)) void refresh();
});
$("chat").append(chat.el);
chat.onChange = () => void refresh();
void chat.restore();
void refresh();
mountSiteAccess($("site-access"), { currentTab: true });
