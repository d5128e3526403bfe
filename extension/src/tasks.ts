// The tasks this browser runs: each task's own tab (seed 000 §4.7), the overlay state shown in
// it, whether the person took over, and where the click ids of its last DOM index live. Kept in
// `chrome.storage.local` under one key, so it survives the worker being stopped and the side
// panel can show it.
import type { KeyValue } from "./action-log.ts";
import type { DomainPolicy, RedactionPolicy, TaskControl, TaskStatus } from "../../protocol/ts/protocol.ts";
import type { OverlayState } from "./frame-protocol.ts";
import type { GuardedTask } from "./net-rules.ts";

export const TASKS_KEY = "tasks";
/** Takeovers, resumes and stops the person made in a task tab (until the protocol carries them). */
export const TAKEOVER_LOG_KEY = "takeovers";
/** The last status the server reported per task (also for tasks without a tab yet). */
export const TASK_STATUS_KEY = "taskStatus";
const MAX_STATUSES = 100;

export type TaskRecord = {
  taskId: string;
  /** The tab the task acts in now (one of `tabs`). */
  tabId: number;
  /** Every tab of the task: the one it started in and those its pages opened; absent, just `tabId`. */
  tabs?: number[];
  windowId: number;
  groupId?: number;
  startedAt: number;
  overlay: OverlayState;
  /** What the overlay says Mimo is doing. */
  label?: string;
  /** The person took over; automation waits until they resume. */
  takeover?: { at: number; reason: string };
  /** The person pressed Stop in the overlay. */
  stopRequested?: { at: number };
  /** The server said the task ended (completed, failed or canceled); undone by a task_start or by a status of a task that runs again. */
  ended?: { at: number };
  /** Click id ranges of the last index: `[first, last, frameId]`. */
  clicks?: Array<[number, number, number]>;
  /** The tab the last index is of: its click ids mean nothing in another. */
  indexTabId?: number;
  /** The attribute the last index wrote click ids to. */
  attr?: string;
  /** The person closed the tab. */
  tabClosed?: boolean;
  /** Tabs of the person's that the task continues on: handed back, never closed, when it ends. */
  adopted?: number[];
  /** Where the task may go (checked before every action, after redirects too). */
  domains?: DomainPolicy;
  /** The task's own rules, kept as well as `domains`. */
  taskDomains?: DomainPolicy;
  /** What personal data is kept out of evidence and of the model's text (evidence.ts). */
  redaction?: RedactionPolicy;
  /** The last action, for the side panel. */
  lastAction?: { name: string; at: number };
  /** A takeover, resume or stop the server has not been told of (it was offline). */
  pendingControl?: TaskControl;
};

/** What the server last told of a task: its status, and whether it may use the local bridge. */
type TaskState = { status: TaskStatus; at: number; bridge?: boolean };

/**
 * Told after every change of the tasks is stored, before the change resolves (what follows the
 * registry is in step when its caller goes on); what it throws fails the change.
 */
export type RegistryFollower = (registry: TaskRegistry) => Promise<void>;

export class TaskRegistry {
  readonly #kv: KeyValue;
  readonly #changed: RegistryFollower | undefined;
  #tasks: Record<string, TaskRecord> | undefined;
  #writes: Promise<void> = Promise.resolve();
  #statuses: Record<string, TaskState> | undefined;

  constructor(kv: KeyValue, changed?: RegistryFollower) {
    this.#kv = kv;
    this.#changed = changed;
  }

  async #all(): Promise<Record<string, TaskRecord>> {
    if (this.#tasks === undefined) {
      const stored = (await this.#kv.get([TASKS_KEY]))[TASKS_KEY];
      this.#tasks ??= typeof stored === "object" && stored !== null ? (stored as Record<string, TaskRecord>) : {};
    }
    return this.#tasks;
  }

  async all(): Promise<TaskRecord[]> {
    return Object.values(await this.#all());
  }

  async status(taskId: string): Promise<TaskStatus | undefined> {
    return (await this.#allStatuses())[taskId]?.status;
  }

  /** The tasks the server last said are in `status`. */
  async withStatus(status: TaskStatus): Promise<string[]> {
    return Object.entries(await this.#allStatuses())
      .filter(([, state]) => state.status === status)
      .map(([taskId]) => taskId);
  }

  async setStatus(taskId: string, status: TaskStatus, at: number, bridge = false): Promise<void> {
    const statuses = await this.#allStatuses();
    delete statuses[taskId];
    statuses[taskId] = { status, at, bridge };
    const keys = Object.keys(statuses);
    for (const old of keys.slice(0, Math.max(0, keys.length - MAX_STATUSES))) delete statuses[old];
    await this.#kv.set({ [TASK_STATUS_KEY]: statuses });
  }

  /**
   * Whether the server last said the person allows this task to use the local bridge: a
   * `bridge_invoke` of a task it did not say so of is refused, whoever sent it.
   */
  async bridgeAllowed(taskId: string): Promise<boolean> {
    return (await this.#allStatuses())[taskId]?.bridge === true;
  }

  async #allStatuses(): Promise<Record<string, TaskState>> {
    if (this.#statuses === undefined) {
      const stored = (await this.#kv.get([TASK_STATUS_KEY]))[TASK_STATUS_KEY];
      this.#statuses ??= typeof stored === "object" && stored !== null ? (stored as Record<string, TaskState>) : {};
    }
    return this.#statuses;
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    return (await this.#all())[taskId];
  }

  /** The task one of whose tabs this is. */
  async byTab(tabId: number): Promise<TaskRecord | undefined> {
    return Object.values(await this.#all()).find((t) => t.tabClosed !== true && tabsOf(t).includes(tabId));
  }

  async put(task: TaskRecord): Promise<void> {
    (await this.#all())[task.taskId] = task;
    await this.#save();
  }

  async update(taskId: string, change: (task: TaskRecord) => void): Promise<TaskRecord | undefined> {
    const task = (await this.#all())[taskId];
    if (task === undefined) return undefined;
    change(task);
    await this.#save();
    return task;
  }

  async remove(taskId: string): Promise<void> {
    delete (await this.#all())[taskId];
    await this.#save();
  }

  async #save(): Promise<void> {
    const next = this.#writes.then(() => this.#kv.set({ [TASKS_KEY]: this.#tasks }));
    this.#writes = next.catch((error: unknown) => console.error("mimo: cannot store the tasks", error));
    await next;
    await this.#changed?.(this);
  }
}

/**
 * The tasks whose domain policies hold their tabs: those that have not ended, with their tabs
 * while they have any. An ended task's tab is the person's to use as they like.
 */
export function guardedTasks(tasks: readonly TaskRecord[]): GuardedTask[] {
  return tasks
    .filter((t) => t.tabClosed !== true && t.ended === undefined)
    .map((t) => ({ rules: { domains: t.domains, taskDomains: t.taskDomains }, tabIds: tabsOf(t) }));
}

/** Every tab of a task, the current one among them. */
export function tabsOf(task: Pick<TaskRecord, "tabId" | "tabs">): number[] {
  return task.tabs ?? [task.tabId];
}

/** A tab the task's page opened joins it, and the task goes on there. */
export function joinTab(task: TaskRecord, tabId: number, windowId: number): void {
  const tabs = tabsOf(task);
  if (!tabs.includes(tabId)) task.tabs = [...tabs, tabId];
  task.tabId = tabId;
  task.windowId = windowId;
}

/**
 * A tab of the task is gone: the task goes on in the tab it used last before (the newest
 * other one), or, when it was the last, has no tab any more.
 */
export function leaveTab(task: TaskRecord, tabId: number): void {
  const rest = tabsOf(task).filter((id) => id !== tabId);
  if (rest.length === 0) {
    task.tabClosed = true;
    return;
  }
  task.tabs = rest;
  if (task.tabId === tabId) task.tabId = rest[rest.length - 1]!;
}

/**
 * The person's tabs a task took over ("continue on this page") and gives back now that it
 * ended: they leave the task, which goes on (if ever) in its own.
 */
export function handBack(task: TaskRecord): number[] {
  const adopted = task.adopted ?? [];
  for (const tabId of adopted) {
    if (tabsOf(task).length > 1) leaveTab(task, tabId);
    else task.tabClosed = true;
  }
  delete task.adopted;
  return adopted;
}

