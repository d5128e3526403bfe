// One open task: its event stream applied exactly once, in order, to whatever renders it.

import type { Attachment, BrowserSnapshot, ChatMessage, ErrorObject, EventEnvelope, TaskStatus } from "../../protocol/ts/protocol.ts";
import type { ModelRetry } from "./retry.ts";

type StructuredOutput = Extract<EventEnvelope, { type: "structuredOutput" }>;
export type ToolUsed = Extract<EventEnvelope, { type: "toolUsed" }>;
export type PageObserved = Extract<EventEnvelope, { type: "pageObserved" }>;
export type ConfirmationRequested = Extract<EventEnvelope, { type: "confirmationRequested" }>;
export type ConfirmationAnswered = Extract<EventEnvelope, { type: "confirmationAnswered" }>;
export type SiteAccessNeeded = Extract<EventEnvelope, { type: "siteAccessNeeded" }>;
export type SubtaskEvent = Extract<EventEnvelope, { type: "subtaskStarted" | "subtaskFinished" }>;
export type ForkEvent = Extract<EventEnvelope, { type: "forkedFrom" | "forked" }>;
export type ChatCompacted = Extract<EventEnvelope, { type: "chatCompacted" }>;

/** What the task's events drive. */
export type TaskSink = {
  message(message: ChatMessage): void;
  delta(messageId: string, delta: string, finished: boolean, at: number): void;
  status(status: TaskStatus, title: string | undefined, selectedClientId: string | undefined): void;
  snapshot(clientId: string, snapshot: BrowserSnapshot): void;
  output(event: StructuredOutput): void;
  /** A step of the agent: chosen (`start`), then done (`end`). */
  step(event: ToolUsed): void;
  /** A browser job the chat model handed to a sub-agent: started, then closed with its result. */
  subtask(event: SubtaskEvent): void;
  /** This task is a fork of another, or a fork was made of it. */
  fork(event: ForkEvent): void;
  /** The conversation's earlier part was summarized: the model sees the summary in its place. */
  compacted(event: ChatCompacted): void;
  page(event: PageObserved): void;
  /** A file the person attached to the task. */
  attachment(attachment: Attachment): void;
  /** The task's own allowed and blocked sites. */
  domains(allowed: string[], blocked: string[]): void;
  /** A risky step (or any, step by step) waits for the person's answer. */
  confirmation(event: ConfirmationRequested): void;
  /** It was answered, here or elsewhere (the extension's side panel, a script). */
  answered(event: ConfirmationAnswered): void;
  /** A step needs a site the person has not allowed Mimo on: the run waits for them. */
  siteAccess(event: SiteAccessNeeded): void;
  /** Whether each step waits for the person. */
  stepMode(stepByStep: boolean): void;
  /** Whether the task may use the local bridge, and whether its changes wait for the person. */
  bridgeMode(allow: boolean, confirm: boolean): void;
  /** Something the person should know that does not stop the task. */
  warning(message: string): void;
  /** A model call failed and is made again. */
  retry(event: ModelRetry): void;
  error(error: ErrorObject): void;
  /** Replay finished. `behind` when the server's log ends before what was applied (its storage was reset). */
  ready(behind: boolean): void;
};

export class TaskModel {
  readonly taskId: string;
  /** Highest history seq applied; events at or below it are duplicates. */
  lastSeq = 0;
  status: TaskStatus = "created";
  title: string | undefined;
  selectedClientId: string | undefined;
  snapshot: { clientId: string; snapshot: BrowserSnapshot } | undefined;
  /** Whether any `taskStatus` was seen (else the status shown is the default `created`). */
  statusKnown = false;
  /** Whether a replay has completed at least once. */
  synced = false;
  private readonly sink: TaskSink;

  constructor(taskId: string, sink: TaskSink) {
    this.taskId = taskId;
    this.sink = sink;
  }

  /** Applies one event; returns false when it was a duplicate or for another task. */
  apply(event: EventEnvelope): boolean {
    if (event.taskId && event.taskId !== this.taskId) return false;
    if (typeof event.seq === "number") {
      if (event.seq <= this.lastSeq) return false;
      this.lastSeq = event.seq;
    }
    switch (event.type) {
      case "message":
        this.sink.message(event.message);
        break;
      case "chatDelta":
        this.sink.delta(event.messageId, event.delta ?? "", event.finished === true, event.at);
        break;
      case "taskStatus":
        this.status = event.status;
        this.statusKnown = true;
        if (event.title) this.title = event.title;
        if (event.selectedClientId) this.selectedClientId = event.selectedClientId;
        this.sink.status(this.status, this.title, this.selectedClientId);
        break;
      case "snapshotSync":
        this.snapshot = { clientId: event.clientId, snapshot: event.snapshot };
        this.sink.snapshot(event.clientId, event.snapshot);
        break;
      case "structuredOutput":
        this.sink.output(event);
        break;
      case "toolUsed":
        this.sink.step(event);
        break;
      case "subtaskStarted":
      case "subtaskFinished":
        this.sink.subtask(event);
        break;
      case "forkedFrom":
      case "forked":
        this.sink.fork(event);
        break;
      case "chatCompacted":
        this.sink.compacted(event);
        break;
      case "pageObserved":
        this.sink.page(event);
        break;
      case "fileAttached":
        this.sink.attachment(event.attachment);
        break;
      case "taskDomains":
        this.sink.domains(event.allowed, event.blocked);
        break;
      case "confirmationRequested":
        this.sink.confirmation(event);
        break;
      case "confirmationAnswered":
        this.sink.answered(event);
        break;
      case "siteAccessNeeded":
        this.sink.siteAccess(event);
        break;
      case "stepMode":
        this.sink.stepMode(event.stepByStep);
        break;
      case "bridgeMode":
        this.sink.bridgeMode(event.allow, event.confirm);
        break;
      case "warning":
        this.sink.warning(event.message);
        break;
      case "modelRetry":
        this.sink.retry(event);
        break;
      case "ready":
        this.synced = true;
        this.sink.ready(typeof event.lastSeq === "number" && event.lastSeq < this.lastSeq);
        break;
      case "error":
        this.sink.error(event.error);
        break;
      default:
        // A newer server may send event types this build does not know: skip them.
        break;
    }
    return true;
  }
}

/**
 * The tab the person means by "my current tab" from the web app: the tab shown in a window of
 * theirs, the focused one first — never the web app itself, which is where they are typing.
 */
export function currentTab(snapshot: BrowserSnapshot, appOrigin: string): number | undefined {
  const shown = snapshot.tabs.filter((t) => t.active && /^https?:\/\//.test(t.url) && !t.url.startsWith(`${appOrigin}/`));
  return (shown.find((t) => t.tabId === snapshot.activeTabId) ?? shown[0])?.tabId;
}

