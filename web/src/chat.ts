// The conversation: messages as the server stores them, assistant text streamed delta by delta,
// structured outputs, steps and confirmations, with the composer (composer.ts) under them.

import type { Attachment, ChatMessage, EventEnvelope, TaskStatus, TokenUsage } from "../../protocol/ts/protocol.ts";
import { answerView } from "./answer.ts";
import { Composer, isActive } from "./composer.ts";
import type { ChatPlace, ComposerHandlers } from "./composer.ts";
import { clockTime, h } from "./dom.ts";
import { outlinedShot, riskBadge } from "./evidence.ts";
import { retryRemainingMs, retryText } from "./retry.ts";
import type { ModelRetry } from "./retry.ts";
import { describeAction, statusWords, waitingFor } from "./steps.ts";
import type { Activity } from "./steps.ts";

/** How long a running task may go without an event before the chat says what it waits for. */
const STALL_NOTE_MS = 10_000;
import type { ChatCompacted, ConfirmationAnswered, ConfirmationRequested, ForkEvent, PageObserved, SiteAccessNeeded, SubtaskEvent, TaskSink, ToolUsed } from "./task.ts";

type StructuredOutput = Extract<EventEnvelope, { type: "structuredOutput" }>;

type Rendered = {
  row: HTMLElement;
  meta: HTMLElement;
  bubble: HTMLElement;
  role: "user" | "assistant";
  text: string;
  finished: boolean;
  /** Which answer to its request (regenerated ones are 2, 3, …). */
  version: number;
  /** An alternative the person regenerated or switched away from: kept, not shown. */
  superseded: boolean;
};

export type ChatHandlers = ComposerHandlers & {
  /** Answer the latest request again (the answer there is kept as an alternative). */
  onRegenerate: () => void;
  /** Make this alternative answer to the latest request the current one. */
  onSelectAnswer: (messageId: string) => void;
  /** A new task with the history up to this message, to go another way from there (none: no Fork). */
  onFork?: (messageId: string) => void;
  /** The person's answer to a step waiting for confirmation (and why not, when declined). */
  onConfirm: (step: number, approve: boolean, reason?: string) => void;
  /** Where to load a stored artifact from (a step's screenshot). */
  artifactUrl: (artifactId: string) => Promise<string>;
};

/** What of a task's events the conversation shows itself, wherever it is shown. */
export type ConversationEvents = Pick<TaskSink, "message" | "delta" | "output" | "step" | "subtask" | "fork" | "compacted" | "confirmation" | "answered" | "siteAccess" | "warning" | "retry" | "page" | "attachment">;

export function conversationEvents(chat: ChatView): ConversationEvents {
  return {
    message: (m) => chat.showMessage(m),
    delta: (id, delta, finished, at) => chat.applyDelta(id, delta, finished, at),
    output: (event) => chat.showOutput(event),
    step: (event) => chat.showStep(event),
    subtask: (event) => chat.showSubtask(event),
    fork: (event) => chat.showFork(event),
    compacted: (event) => chat.showCompaction(event),
    confirmation: (event) => chat.showConfirmation(event),
    answered: (event) => chat.showConfirmationAnswered(event),
    siteAccess: (event) => chat.showSiteAccess(event),
    warning: (message) => chat.showWarning(message),
    retry: (event) => chat.showRetry(event),
    page: (event) => chat.showPage(event),
    attachment: (attachment) => chat.showAttachment(attachment),
  };
}

export class ChatView {
  readonly el: HTMLElement;
  private readonly scroller: HTMLElement;
  private readonly list: HTMLElement;
  private readonly empty: HTMLElement;
  /** In the empty conversation: no browser is connected yet, and how to connect one. */
  private readonly noBrowser: HTMLElement;
  private readonly thinking: HTMLElement;
  private readonly composer: Composer;
  private readonly answerControls = h("span", { class: "answer-controls", "data-testid": "answer-controls" });
  private readonly handlers: ChatHandlers;
  private messages = new Map<string, Rendered>();
  /** The agent's step cards by step number (of the latest run). */
  private steps = new Map<number, { card: HTMLElement; body: HTMLElement }>();
  /** Where the running sub-agent's steps go (its card), while one runs. */
  private subtaskSteps: HTMLElement | null = null;
  /** The answer buttons of the confirmation asked last, until the task moves on. */
  private confirmButtons: HTMLButtonElement[] = [];
  private status: TaskStatus = "created";
  /** The assistant message that finished last, until anything else happens (to mark it stopped). */
  private justFinished: Rendered | null = null;
  /**
   * The view follows the run (the newest step, a confirmation, the answer stay in view) until
   * the person scrolls up; then new content shows "New steps ↓" instead of moving the view.
   */
  private following = true;
  private readonly jump: HTMLButtonElement;
  /** Says what a running task waits for once nothing has happened for a while. */
  private readonly stall: HTMLElement;
  private activity: Activity = { kind: "model", step: 1 };
  private lastProgress = Date.now();

  constructor(handlers: ChatHandlers, place: ChatPlace = "app") {
    this.handlers = handlers;
    this.list = h("div", { class: "messages", role: "log", "aria-live": "polite" });
    this.thinking = h("div", { class: "thinking", hidden: true, role: "status", "aria-label": "Mimo is thinking" }, h("span"), h("span"), h("span"));
    this.stall = h("div", { class: "stall-note", "data-testid": "stall-note", hidden: true, role: "status" });
    setInterval(() => this.syncStall(), 1000);
    this.noBrowser = h("p", { class: "chat-empty-note", "data-testid": "no-browser", hidden: true });
    this.empty = h(
      "div",
      { class: "chat-empty" },
      h("div", { class: "chat-empty-mark" }, "M"),
      h("h2", {}, place === "panel" ? "What should Mimo do on this tab?" : "What should Mimo do?"),
      h("p", {}, place === "panel" ? "Mimo works on the tab you are looking at. You can watch, pause, stop, or take over at any time." : "Describe a goal — Mimo plans the steps and carries them out in your browser through the extension. You can watch, stop, or take over at any time."),
      this.noBrowser,
    );
    const inner = h("div", { class: "chat-inner" }, this.empty, this.list, this.thinking, this.stall);
    // Focusable, so that the keyboard can scroll it when nothing in it takes focus.
    this.scroller = h("div", { class: "chat-scroll", tabindex: 0, role: "region", "aria-label": "Conversation" }, inner);
    this.jump = h("button", { class: "btn btn-sm jump-latest", type: "button", "data-testid": "jump-to-latest", hidden: true, onclick: () => this.scrollToEnd() }, "New steps ↓");
    // Only the person's own scrolling (wheel, touch, keys, the scroll bar) stops the view
    // following; a scroll that layout causes (a resize, content reflowing) never does. Back
    // near the bottom, it follows again.
    let touched = 0;
    const byPerson = () => (touched = Date.now());
    for (const type of ["wheel", "touchmove", "keydown", "pointerdown"]) this.scroller.addEventListener(type, byPerson, { passive: true });
    this.scroller.addEventListener("scroll", () => {
      const s = this.scroller;
      const atBottom = s.scrollHeight - s.scrollTop - s.clientHeight < 80;
      if (atBottom) {
        this.following = true;
        this.jump.hidden = true;
      } else if (Date.now() - touched < 1_000) {
        this.following = false;
      }
    });
    // Content that grows later (a screenshot loading, a card opening) keeps a following view at
    // the bottom too, not only what is added through `keepAtBottom`.
    new ResizeObserver(() => {
      if (this.following) this.scroller.scrollTop = this.scroller.scrollHeight;
    }).observe(inner);

    this.composer = new Composer(handlers, place);
    this.el = h("section", { class: "chat", "aria-label": "Conversation" }, this.scroller, h("div", { class: "jump-anchor" }, this.jump), this.composer.el);
  }

  /** Empties the conversation (another task was opened). */
  reset(): void {
    this.progressed({ kind: "model", step: 1 });
    this.messages.clear();
    this.steps.clear();
    this.subtaskSteps = null;
    this.justFinished = null;
    this.list.replaceChildren();
    this.following = true;
    this.jump.hidden = true;
    this.status = "created";
    this.syncChrome();
  }

  /** Whether nothing has been said or shown in the conversation yet. */
  isBlank(): boolean {
    return this.list.childElementCount === 0;
  }

  /** The getting-started guide, shown in the empty conversation. */
  setGuide(guide: HTMLElement): void {
    this.empty.append(guide);
  }

  /** No browser connected (why, from the server), or one is now (`null`). */
  setNoBrowser(message: string | null): void {
    this.noBrowser.hidden = message === null;
    this.noBrowser.textContent = message === null ? "" : `No browser is connected yet: ${message} Pair one under Browser → “Pair a browser”.`;
  }

  focusComposer(): void {
    this.composer.focus();
  }

  setNote(text: string | null): void {
    this.composer.setNote(text);
  }

  setStatus(status: TaskStatus): void {
    this.progressed(this.activity);
    // Stop ends the streaming message and then cancels the task: say so on the message.
    if (status === "canceled" && this.justFinished) {
      this.justFinished.meta.append(h("span", { class: "msg-stopped" }, "· stopped"));
    }
    this.justFinished = null;
    this.status = status;
    // Answered, stopped or moved on: the question is closed.
    if (status !== "waiting_confirmation") {
      for (const button of this.confirmButtons) button.disabled = true;
      this.confirmButtons = [];
    }
    if (status !== "waiting_permission") this.settleSiteAccess(status);
    this.syncChrome();
  }

  /** A stored message (the person's own included). Replaces the text of one already shown. */
  showMessage(message: ChatMessage): void {
    this.justFinished = null;
    this.keepAtBottom(() => {
      const r = this.messages.get(message.messageId) ?? this.createRow(message.messageId, message.role, message.createdAt);
      r.text = message.content;
      r.bubble.textContent = message.content;
      r.version = message.version ?? 1;
      r.superseded = message.superseded === true;
      r.row.hidden = r.superseded;
      if (message.role === "assistant") this.finish(r);
      this.syncAnswers();
    });
  }

  applyDelta(messageId: string, delta: string, finished: boolean, at: number): void {
    this.progressed(this.activity);
    this.keepAtBottom(() => {
      let r = this.messages.get(messageId);
      if (!r) {
        // An empty closing delta for a message never started (a turn stopped or cut off before
        // any text): nothing to show.
        if (delta === "" && finished) return;
        r = this.createRow(messageId, "assistant", at);
      }
      if (delta) {
        r.text += delta;
        r.bubble.textContent = r.text;
      }
      if (finished) this.finish(r);
    });
  }

  showOutput(event: StructuredOutput): void {
    this.justFinished = null;
    const warnings = event.warnings ?? [];
    const run = runTotals(event.output);
    const answer = answerOf(event.output);
    const extra = otherOutput(event.output);
    // The answer's text is the chat bubble's: a card only for what it does not already say.
    if (event.status === "ok" && warnings.length === 0 && run === undefined && answer === undefined && extra === undefined) return;
    this.keepAtBottom(() => {
      const card = h("div", { class: `output-card output-${event.status}`, "data-testid": "structured-output", "data-status": event.status });
      if (event.status === "error") {
        card.append(h("div", { class: "output-title" }, h("span", { class: "output-icon" }, "!"), "The task failed"));
        if (event.error) {
          card.append(h("div", { class: "output-error", "data-testid": "output-error" }, h("code", {}, event.error.code), " ", event.error.message));
          if (event.error.retryable) card.append(h("div", { class: "output-hint" }, "This can be retried: send the message again."));
        }
      } else if (event.status === "partial") {
        card.append(h("div", { class: "output-title" }, h("span", { class: "output-icon" }, "~"), "Partly done"));
      }
      if (warnings.length > 0) card.append(h("ul", { class: "output-warnings" }, warnings.map((w) => h("li", {}, w))));
      if (run !== undefined) card.append(h("div", { class: "output-usage", "data-testid": "run-usage" }, `Done in ${run.steps} step${run.steps === 1 ? "" : "s"} · ${usageLine(run.usage, run.costUsd)}`));
      if (answer !== undefined) card.append(answerView(answer.data, answer.valid));
      if (extra !== undefined) {
        card.append(h("details", { class: "output-json", "data-testid": "output-data" }, h("summary", {}, "Show data"), h("pre", {}, JSON.stringify(extra, null, 2))));
      }
      this.list.append(card);
    });
    this.syncChrome();
  }

  /** A step of the agent: its action and reflection when chosen, its result when done. */
  showStep(event: ToolUsed): void {
    this.justFinished = null;
    this.progressed(event.phase === "start" ? { kind: "action", step: event.step, what: describeAction(event.action, event.targetName) } : { kind: "page", step: event.step });
    this.keepAtBottom(() => {
      let step = this.steps.get(event.step);
      if (event.phase === "start" || step === undefined) {
        // A new run numbers its steps from 1 again: a start always opens a new card.
        const body = h("div", { class: "step-body" });
        const card = h(
          "div",
          { class: "step-card", "data-testid": "step", "data-step": String(event.step), "data-state": "running" },
          h("div", { class: "step-title" }, h("span", { class: "step-number" }, `Step ${event.step}`), " ", describeAction(event.action, event.targetName)),
          body,
        );
        step = { card, body };
        this.steps.set(event.step, step);
        (this.subtaskSteps ?? this.list).append(card);
      }
      if (event.phase === "start" && event.skill !== undefined) {
        step.body.append(h("div", { class: "step-skill", "data-testid": "step-skill" }, `Following the skill ${event.skill}`));
      }
      if (event.phase === "start" && event.usage !== undefined) {
        step.body.append(h("div", { class: "step-usage", "data-testid": "step-usage" }, usageLine(event.usage, event.costUsd)));
      }
      if (event.phase === "start" && event.reflection) {
        const r = event.reflection;
        step.body.append(
          h("div", { class: "step-goal" }, r.next_goal),
          h("details", { class: "step-reflection" }, h("summary", {}, "Reflection"), h("p", {}, `Previous step: ${r.evaluation_previous_goal}`), h("p", {}, `Memory: ${r.memory}`)),
        );
      }
      if (event.phase === "end" && event.result) {
        const ok = event.result.ok;
        // Partial: it ran, but not wholly as asked (a value the field did not keep, no visible effect).
        const state = !ok ? "failed" : event.result.partial === true ? "partial" : "ok";
        step.card.setAttribute("data-state", state);
        // The last step's summary is the answer, which the conversation shows once, below.
        const summary = "done" in event.action && ok ? (event.action.done.success ? "Finished" : "Not done") : (event.summary ?? "");
        step.body.append(h("div", { class: `step-result step-${state}`, "data-testid": "step-result" }, { ok: "✓ ", partial: "~ ", failed: "✗ " }[state], summary));
      }
    });
    this.syncChrome();
  }

  /**
   * A step waits: what it would do and why it asks, with Confirm and Decline (and why not, for
   * the model) — or, step by step, "Next step" and "Skip".
   */
  showConfirmation(event: ConfirmationRequested): void {
    this.justFinished = null;
    const why = h("input", { type: "text", class: "confirm-reason", placeholder: "Why not? (optional, Mimo is told)", "aria-label": "Why not", "data-testid": "decline-reason", autocomplete: "off" });
    const answer = (approve: boolean) => {
      for (const button of this.confirmButtons) button.disabled = true;
      const reason = why.value.trim();
      this.handlers.onConfirm(event.step, approve, approve || reason === "" ? undefined : reason);
    };
    const [yes, no] = event.stepByStep ? ["Next step", "Skip"] : ["Confirm", "Decline"];
    const confirm = h("button", { class: "btn btn-primary btn-sm", type: "button", "data-testid": "confirm-step", onclick: () => answer(true) }, yes);
    const decline = h("button", { class: "btn btn-sm", type: "button", "data-testid": "decline-step", onclick: () => answer(false) }, no);
    this.confirmButtons = [confirm, decline];
    const what = describeAction(event.action, event.targetName);
    // Step 0 is none of the agent's: an MCP client's, waiting for the person here.
    const whose = event.step === 0 ? "A step your MCP client asked for" : `Step ${event.step}`;
    const title = event.stepByStep ? `${whose}: ${what}` : `${whose} needs your confirmation: ${what}`;
    const hint = event.stepByStep ? ` Step by step: it runs when you press Next step.` : ` Mimo asks because ${event.reason}.`;
    this.keepAtBottom(() => {
      this.list.append(
        h(
          "div",
          { class: "output-card output-partial", "data-testid": "confirmation", "data-step": String(event.step) },
          h("div", { class: "output-title" }, h("span", { class: "output-icon" }, "?"), title),
          h("div", { class: "output-hint" }, riskBadge(event.risk, "confirm-risk"), hint),
          event.facts.length > 1 && h("ul", { class: "output-warnings", "data-testid": "confirm-facts" }, event.facts.map((f) => h("li", {}, f))),
          this.evidence(event),
          h("div", { class: "confirm-actions" }, confirm, decline, why),
          h("div", { class: "output-hint", "data-testid": "confirm-answer" }),
        ),
      );
    });
    this.syncChrome();
  }

  /** A confirmation was answered (here or elsewhere): its card says so, its buttons go. */
  showConfirmationAnswered(event: ConfirmationAnswered): void {
    const cards = this.list.querySelectorAll<HTMLElement>(`[data-testid="confirmation"][data-step="${event.step}"]`);
    const card = cards[cards.length - 1];
    if (card === undefined) return;
    card.querySelectorAll<HTMLButtonElement | HTMLInputElement>("button, input").forEach((el) => (el.disabled = true));
    const where = { web: "in the web app", extension: "in the extension's side panel", api: "through the API", mcp: "in the MCP client" }[event.by] ?? `by ${event.by}`;
    const said =
      event.by === "timeout"
        ? "Not answered in time: it did not run."
        : event.approved
          ? `Confirmed ${where}.`
          : `Declined ${where}${event.reason !== undefined ? `: “${event.reason}”` : ""}.`;
    card.querySelector('[data-testid="confirm-answer"]')!.textContent = said;
    card.setAttribute("data-answer", event.approved ? "approved" : "declined");
  }

  /**
   * A step needs a site the person has not allowed Mimo on: the run waits. The web app cannot
   * grant it (only the extension can show Chrome's prompt), so it says exactly where to click;
   * the task goes on by itself once they do. "Try again" is for a grant the extension could not
   * report (it was offline).
   */
  showSiteAccess(event: SiteAccessNeeded): void {
    this.justFinished = null;
    this.settleSiteAccess(null);
    const retry = h("button", { class: "btn btn-sm", type: "button", "data-testid": "site-access-retry", onclick: () => this.handlers.onResume() }, "Try again");
    this.keepAtBottom(() => {
      this.list.append(
        h(
          "div",
          { class: "output-card output-partial", "data-testid": "site-access", "data-site": event.site, "data-step": String(event.step) },
          h("div", { class: "output-title" }, h("span", { class: "output-icon" }, "!"), `Step ${event.step} needs Mimo on ${event.site}`),
          h(
            "ol",
            { class: "output-hint site-access-steps" },
            h("li", {}, "In Chrome, click Mimo's icon in the toolbar (under the puzzle piece if it is not pinned): its side panel opens."),
            h("li", {}, `Press “Allow Mimo on ${event.site}”, then Allow in Chrome's dialog.`),
          ),
          h("div", { class: "output-hint" }, "The task goes on by itself once you allow it; Stop ends it."),
          h("div", { class: "confirm-actions" }, retry),
          h("div", { class: "output-hint", "data-testid": "site-access-answer" }),
        ),
      );
    });
    this.syncChrome();
  }

  /** The run stopped waiting for a site (`status`), or a newer wait replaces this one (null). */
  private settleSiteAccess(status: TaskStatus | null): void {
    const card = this.list.querySelector<HTMLElement>('[data-testid="site-access"]:not([data-settled])');
    if (card === null) return;
    card.setAttribute("data-settled", "");
    card.querySelectorAll("button").forEach((b) => (b.disabled = true));
    const said = status === "running" ? "Allowed: the task goes on." : status === null ? "" : `The task is ${statusWords(status).toLowerCase()}.`;
    card.querySelector('[data-testid="site-access-answer"]')!.textContent = said;
  }

  /** The page the step would act on, its target outlined (when it is in view). */
  private evidence(event: ConfirmationRequested): HTMLElement | null {
    const artifactId = event.screenshotArtifactId;
    if (artifactId === undefined) return null;
    return outlinedShot({
      url: this.handlers.artifactUrl(artifactId),
      alt: "The page the step acts on",
      target: event.target,
      testIds: { shot: "confirm-screenshot", target: "confirm-target" },
      onMissing: (frame) => frame.remove(),
    });
  }

  /** A warning in the conversation's flow (the model reads pages without screenshots, …). */
  /**
   * A browser job the chat model handed to a sub-agent: a card under the chat turn that holds
   * the sub-agent's steps, then what it returned (or that the person stopped it).
   */
  showSubtask(event: SubtaskEvent): void {
    this.justFinished = null;
    this.keepAtBottom(() => {
      if (event.type === "subtaskStarted") {
        const steps = h("div", { class: "subtask-steps" });
        this.list.append(
          h(
            "div",
            { class: "subtask-card", "data-testid": "subtask", "data-subtask": String(event.subtask), "data-call": event.toolCallId, "data-state": "running" },
            h("div", { class: "subtask-title" }, h("span", { class: "subtask-number" }, `Browser sub-task ${event.subtask}`), ` · up to ${event.maxSteps} steps`),
            h("div", { class: "subtask-goal", "data-testid": "subtask-goal" }, event.goal),
            steps,
          ),
        );
        this.subtaskSteps = steps;
        return;
      }
      this.subtaskSteps = null;
      const card = this.list.querySelector<HTMLElement>(`[data-testid="subtask"][data-call="${CSS.escape(event.toolCallId)}"]`);
      if (card === null) return;
      const { status, summary, data, steps, error } = event.result;
      card.setAttribute("data-state", status);
      if (status === "stopped") card.setAttribute("data-manual-stop", "");
      const head = { succeeded: "✓ Done", failed: "✗ Not done", stopped: "■ Stopped by you" }[status];
      const result = h("div", { class: `subtask-result subtask-${status}`, "data-testid": "subtask-result" }, `${head} after ${steps} step${steps === 1 ? "" : "s"}`);
      if (error) result.append(h("div", { class: "output-error" }, h("code", {}, error.code), " ", error.message));
      if (status !== "stopped" && summary) result.append(h("div", { class: "subtask-summary" }, summary));
      if (data !== undefined) result.append(answerView(data, true));
      card.append(result);
    });
    this.syncChrome();
  }

  /**
   * A compaction, after the last message it stands for: the messages stay shown, and the person
   * can read what the model now sees in their place.
   */
  showCompaction(event: ChatCompacted): void {
    const note = h(
      "details",
      { class: "chat-note compaction", "data-testid": "compaction", "data-through": event.through },
      h("summary", {}, `↑ The ${event.messages} messages up to here are summarized for the model, to fit its context`),
      h("div", { class: "compaction-summary", "data-testid": "compaction-summary" }, event.summary),
    );
    this.keepAtBottom(() => {
      const row = this.messages.get(event.through)?.row;
      if (row) row.after(note);
      else this.list.append(note);
    });
  }

  /** Where this task was forked from (at the top of what it kept), or a fork made at a message. */
  showFork(event: ForkEvent): void {
    const other = event.type === "forkedFrom" ? event.origin : event.fork;
    const link = h("a", { href: `#/task/${encodeURIComponent(other.taskId)}`, "data-testid": "fork-link" }, event.type === "forkedFrom" ? "the task it was forked from" : "open the fork");
    this.keepAtBottom(() => {
      if (event.type === "forkedFrom") {
        this.list.append(h("div", { class: "chat-note", "data-testid": "forked-from" }, "Forked from ", link, " — what follows is this task's own."));
        return;
      }
      const col = this.messages.get(other.messageId)?.row.querySelector(".msg-col");
      (col ?? this.list).append(h("div", { class: "chat-note", "data-testid": "forked" }, "Forked here: ", link));
    });
  }

  showWarning(message: string): void {
    this.keepAtBottom(() => {
      this.list.append(h("div", { class: "chat-warning", "data-testid": "chat-warning" }, message));
    });
  }

  /** A retried model call: why, and while it waits, a countdown to when it is made. */
  showRetry(event: ModelRetry): void {
    this.progressed(this.activity);
    const line = h("div", { class: "chat-retry", "data-testid": "model-retry" });
    const show = (): boolean => {
      const remaining = retryRemainingMs(event, Date.now());
      line.textContent = retryText(event, remaining);
      line.dataset.state = remaining > 0 ? "waiting" : "settled";
      return remaining > 0;
    };
    this.keepAtBottom(() => {
      this.list.append(line);
    });
    if (!show()) return;
    const timer = setInterval(() => {
      if (!show()) clearInterval(timer);
    }, 250);
  }

  /** The page the agent looked at after a step. */
  showPage(event: PageObserved): void {
    this.progressed({ kind: "model", step: event.step + 1 });
    const step = this.steps.get(event.step);
    if (step === undefined) return;
    this.keepAtBottom(() => {
      const missing = event.missing.length > 0 ? ` · missing ${event.missing.join(", ")}` : "";
      const tabs = event.tabs;
      const current = tabs.findIndex((t) => t.current);
      const tab = tabs.length > 1 ? ` · tab ${current + 1} of ${tabs.length}` : "";
      step.body.append(h("div", { class: "step-page", title: event.url, "data-testid": "step-page" }, `Page: ${event.title || event.url}${tab} · ${event.elements} elements${missing}`));
      const dialog = event.dialog;
      if (dialog !== undefined) {
        const kind = dialog.kind === "beforeunload" ? "asks to leave the page" : dialog.kind === "alert" ? "shows an alert" : `asks (${dialog.kind})`;
        step.body.append(h("div", { class: "step-dialog", "data-testid": "step-dialog" }, `The page ${kind}: “${dialog.message}”`));
      }
    });
    const artifactId = event.screenshotArtifactId;
    if (artifactId !== undefined) {
      const shot = h("img", { class: "step-shot", alt: `The page after step ${event.step}`, "data-testid": "step-screenshot", loading: "lazy" });
      step.body.append(shot);
      // Best effort: a screenshot that cannot be loaded (expired, deleted) leaves the step as it is.
      this.handlers.artifactUrl(artifactId).then(
        (url) => (shot.src = url),
        () => shot.remove(),
      );
    }
  }

  /** A file the person attached, shown where it came in the conversation. */
  showAttachment(attachment: Attachment): void {
    this.keepAtBottom(() => {
      this.empty.hidden = true;
      this.list.append(
        h("div", { class: "attachment", "data-testid": "attachment", title: attachment.contentType }, `Attached ${attachment.name} · ${Math.ceil(attachment.size / 1024)} KB`),
      );
    });
  }

  /** The newest content in view, and the view following the run again. */
  scrollToEnd(): void {
    this.following = true;
    this.jump.hidden = true;
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  private createRow(messageId: string, role: "user" | "assistant", at: number): Rendered {
    const bubble = h("div", {
      class: "bubble",
      "data-testid": role === "user" ? "message-user" : "message-assistant",
      "data-message-id": messageId,
      "data-finished": role === "assistant" ? "false" : null,
    });
    const onFork = this.handlers.onFork;
    const fork = onFork === undefined ? null : h("button", { class: "btn-link msg-fork", type: "button", "data-testid": "fork", title: "Fork: a new task with the conversation up to here", onclick: () => onFork(messageId) }, "Fork");
    const meta = h("div", { class: "msg-meta" }, role === "user" ? "You" : "Mimo", h("span", { class: "msg-time" }, clockTime(at)), fork);
    const row = h(
      "div",
      { class: `msg msg-${role}` },
      role === "assistant" ? h("div", { class: "avatar", "aria-hidden": "true" }, "M") : null,
      h("div", { class: "msg-col" }, meta, bubble),
    );
    const r: Rendered = { row, meta, bubble, role, text: "", finished: role === "user", version: 1, superseded: false };
    this.messages.set(messageId, r);
    this.list.append(row);
    this.syncChrome();
    return r;
  }

  private finish(r: Rendered): void {
    if (r.finished) return;
    r.finished = true;
    r.bubble.setAttribute("data-finished", "true");
    r.bubble.classList.toggle("is-empty", r.text === "");
    this.justFinished = r;
    this.syncChrome();
  }

  private streaming(): boolean {
    for (const r of this.messages.values()) if (r.role === "assistant" && !r.finished) return true;
    return false;
  }

  /**
   * The answer to the latest request gets "Regenerate" once the task has stopped working, and,
   * when it has alternatives, "‹ 2/3 ›" to switch between them.
   */
  private syncAnswers(): void {
    const rows = [...this.messages.entries()];
    const lastUser = rows.map(([, r]) => r.role).lastIndexOf("user");
    const answers = rows.slice(lastUser + 1).filter(([, r]) => r.role === "assistant" && r.finished);
    const host = answers.filter(([, r]) => !r.superseded).at(-1)?.[1];
    this.answerControls.replaceChildren();
    if (lastUser < 0 || host === undefined) {
      this.answerControls.remove();
      return;
    }
    const versions = [...new Set(answers.map(([, r]) => r.version))].sort((a, b) => a - b);
    if (versions.length > 1) {
      const at = versions.indexOf(host.version);
      const pick = (version: number | undefined) => {
        const id = answers.filter(([, r]) => r.version === version).at(-1)?.[0];
        if (id !== undefined) this.handlers.onSelectAnswer(id);
      };
      const previous = h("button", { class: "btn-link", type: "button", "data-testid": "answer-previous", title: "The previous answer", onclick: () => pick(versions[at - 1]) }, "‹");
      const next = h("button", { class: "btn-link", type: "button", "data-testid": "answer-next", title: "The next answer", onclick: () => pick(versions[at + 1]) }, "›");
      previous.disabled = at <= 0;
      next.disabled = at >= versions.length - 1;
      this.answerControls.append(previous, h("span", { "data-testid": "answer-version" }, `${at + 1}/${versions.length}`), next);
    }
    if (!isActive(this.status)) {
      this.answerControls.append(h("button", { class: "btn-link", type: "button", "data-testid": "regenerate", title: "Answer again; this answer is kept", onclick: () => this.handlers.onRegenerate() }, "Regenerate"));
    }
    host.meta.append(this.answerControls);
  }

  /** Something happened in the run: the wait starts again, for `activity`. */
  private progressed(activity: Activity): void {
    this.activity = activity;
    this.lastProgress = Date.now();
    this.syncStall();
  }

  private syncStall(): void {
    const quiet = Date.now() - this.lastProgress;
    const stalled = this.status === "running" && quiet >= STALL_NOTE_MS;
    this.stall.hidden = !stalled;
    if (stalled) this.stall.textContent = waitingFor(this.activity, Math.floor(quiet / 1000));
  }

  private syncChrome(): void {
    const active = isActive(this.status);
    const held = this.status === "takeover" || this.status === "paused";
    this.composer.setStatus(this.status);
    this.syncAnswers();
    // Thinking, not waiting: a step waiting for the person shows its card, not the dots.
    const waits = this.status === "waiting_confirmation" || this.status === "waiting_permission";
    this.thinking.hidden = !(active && !held && !waits && !this.streaming());
    this.empty.hidden = this.list.childElementCount > 0;
  }

  /** Runs a change: a following view shows it; one the person scrolled up offers a way down. */
  private keepAtBottom(change: () => void): void {
    change();
    if (this.following) this.scroller.scrollTop = this.scroller.scrollHeight;
    else this.jump.hidden = false;
  }
}

/** `1,234 tokens in, 56 out · $0.0012` (the cost when the model's price is known). */
function usageLine(usage: TokenUsage, costUsd: number | null | undefined): string {
  const tokens = `${usage.inputTokens.toLocaleString("en")} tokens in, ${usage.outputTokens.toLocaleString("en")} out`;
  return typeof costUsd === "number" ? `${tokens} · $${costUsd.toFixed(4)}` : tokens;
}

/** A browser run's totals in its final output, if it carries them. */
function runTotals(output: unknown): { steps: number; usage: TokenUsage; costUsd?: number | null } | undefined {
  const o = output as { steps?: unknown; usage?: TokenUsage; costUsd?: number | null } | null | undefined;
  if (typeof o?.steps !== "number" || typeof o.usage?.inputTokens !== "number") return undefined;
  return { steps: o.steps, usage: o.usage, costUsd: o.costUsd };
}

/** The data of an answer given in the asked format (or given but not matching it). */
function answerOf(output: unknown): { data: unknown; valid: boolean } | undefined {
  if (typeof output !== "object" || output === null) return undefined;
  const o = output as { data?: unknown; invalidData?: unknown };
  if (o.data !== undefined) return { data: o.data, valid: true };
  if (o.invalidData !== undefined) return { data: o.invalidData, valid: false };
  return undefined;
}

/**
 * What of an output neither the chat bubble (its `text`), the run's totals nor the answer's data
 * already show, without empty fields: behind "Show data".
 */
function otherOutput(output: unknown): unknown {
  if (output === undefined || output === null) return undefined;
  if (typeof output !== "object" || Array.isArray(output)) return output;
  const shown = new Set(["text", "success", "steps", "usage", "costUsd", "data", "invalidData"]);
  const rest = Object.entries(output).filter(([key, value]) => !shown.has(key) && value !== null && value !== undefined);
  return rest.length === 0 ? undefined : Object.fromEntries(rest);
}
