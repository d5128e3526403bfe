// Action dispatch, exactly once. Every `browser_action` is acked at once; then, by its dedupe
// key `(actionId, attempt)`:
// - running now → only acked again;
// - finished → its stored outcome is sent again (the first one may have been lost);
// - new → recorded as running (persistently) and executed, one action at a time per task.
// Outcomes are stored before they are sent, so a worker stopped in between still has them; on
// every `welcome` the outcomes never sent, and those of the last `RESEND_WINDOW_MS`, go out
// again (the server records a result once). An action that was running when the worker died is
// run again on restart if it only reads the page, else reported as a retryable `TIMEOUT`.
//
// Chrome is reached only through `DispatcherDeps`, so this runs under node:test.
import type { ActionOutcome, BrowserAction, ExtensionMessage } from "../../protocol/ts/protocol.ts";
import type { ActionLog, RunningEntry } from "./action-log.ts";
import { ActionError, actionKey, errorOutcome, successOutcome } from "./results.ts";
import type { ActionSuccess } from "./results.ts";

/** Outcomes this recent are resent on every welcome, sent or not. */
export const RESEND_WINDOW_MS = 2 * 60_000;

/**
 * Outcomes of actions that may run again are stored only up to this size: writing a DOM index
 * of thousands of elements to storage costs more than running it again on a repeated delivery.
 */
export const MAX_STORED_RERUNNABLE_BYTES = 16 * 1024;

/** Actions that only read the page (or wait): running one twice does no harm. */
const RERUNNABLE: ReadonlySet<BrowserAction["name"]> = new Set<BrowserAction["name"]>([
  "browser_debugger_attach",
  "browser_wait_for_loaded",
  "browser_screenshot",
  "browser_readability_extract",
  "browser_dom_index",
  "browser_xpath_scan",
  "browser_get_html",
  "browser_wait_for",
]);

export function safeToRerun(action: BrowserAction): boolean {
  return RERUNNABLE.has(action.name);
}

export type DispatcherDeps = {
  log: ActionLog;
  /** Runs one action; throws `ActionError` (or anything, an internal error). */
  execute(action: BrowserAction): Promise<ActionSuccess>;
  /** Sends a frame; false when no connection is online (the frame is dropped). */
  send(message: ExtensionMessage): boolean;
  now(): number;
  /** Something in the log changed (for the side panel). */
  changed?(): void;
};

export class ActionDispatcher {
  readonly #deps: DispatcherDeps;
  readonly #ready: Promise<void>;
  /** Keys of the actions running now. */
  readonly #running = new Set<string>();
  /** The tail of each task's queue: one action at a time per task. */
  readonly #queues = new Map<string, Promise<void>>();
  /** Outcomes produced by this worker, by key, so repeated deliveries need no storage read. */
  readonly #recent = new Map<string, ActionOutcome>();

  constructor(deps: DispatcherDeps) {
    this.#deps = deps;
    this.#ready = this.#recover();
  }

  /** Resolves once the log is loaded and actions interrupted by a restart are dealt with. */
  ready(): Promise<void> {
    return this.#ready;
  }

  /** A `browser_action` frame arrived. Resolves when it is handled (finished, for a new one). */
  async receive(action: BrowserAction): Promise<void> {
    this.#deps.send({ type: "action_ack", actionId: action.actionId, attempt: action.attempt, taskId: action.taskId });
    await this.#ready;
    const key = actionKey(action);
    if (this.#running.has(key)) return;
    if (this.#deps.log.finished().some((e) => e.key === key)) {
      const outcome = this.#recent.get(key) ?? (await this.#deps.log.outcome(key));
      if (outcome !== undefined || !safeToRerun(action)) {
        if (outcome !== undefined) await this.#sendOutcomes([outcome]);
        return;
      }
      // A large read-only result that was not stored: reading the page again answers as well.
    }
    this.#running.add(key);
    const entry: RunningEntry = { key, action, startedAt: this.#deps.now() };
    await this.#deps.log.start(entry);
    this.#deps.changed?.();
    await this.#enqueue(action.taskId, () => this.#run(entry));
  }

  /** A connection was welcomed: send what the server may not have. */
  async online(): Promise<void> {
    await this.#ready;
    const since = this.#deps.now() - RESEND_WINDOW_MS;
    const due = this.#deps.log.finished().filter((e) => !e.sent || e.finishedAt >= since);
    const outcomes: ActionOutcome[] = [];
    for (const e of due) {
      const outcome = this.#recent.get(e.key) ?? (await this.#deps.log.outcome(e.key));
      if (outcome !== undefined) outcomes.push(outcome);
    }
    await this.#sendOutcomes(outcomes);
  }

  /** Whether an action of this task is running. */
  busy(taskId: string): boolean {
    return this.#deps.log.running().some((e) => e.action.taskId === taskId);
  }

  async #recover(): Promise<void> {
    const { running } = await this.#deps.log.load();
    for (const entry of running) {
      this.#running.add(entry.key);
      if (safeToRerun(entry.action)) {
        void this.#enqueue(entry.action.taskId, () => this.#run(entry));
      } else {
        const error = new ActionError(
          "TIMEOUT",
          `the extension restarted while ${entry.action.name} was running; it may or may not have taken effect`,
          true,
        );
        await this.#finish(entry, errorOutcome(entry.action, error));
      }
    }
  }

  #enqueue(taskId: string, work: () => Promise<void>): Promise<void> {
    const next = (this.#queues.get(taskId) ?? Promise.resolve()).then(work);
    const tail = next.catch(() => undefined);
    this.#queues.set(taskId, tail);
    void tail.then(() => {
      if (this.#queues.get(taskId) === tail) this.#queues.delete(taskId);
    });
    return next;
  }

  async #run(entry: RunningEntry): Promise<void> {
    let outcome: ActionOutcome;
    try {
      outcome = successOutcome(entry.action, await this.#deps.execute(entry.action));
    } catch (error) {
      if (!(error instanceof ActionError)) console.error(`mimo: ${entry.action.name} failed`, error);
      outcome = errorOutcome(entry.action, error);
    }
    await this.#finish(entry, outcome);
  }

  async #finish(entry: RunningEntry, outcome: ActionOutcome): Promise<void> {
    this.#recent.set(entry.key, outcome);
    if (this.#recent.size > 50) this.#recent.delete(this.#recent.keys().next().value!);
    const finished = {
      key: entry.key,
      taskId: entry.action.taskId,
      name: entry.action.name,
      status: outcome.status,
      startedAt: entry.startedAt,
      finishedAt: this.#deps.now(),
      ...(outcome.error !== undefined ? { code: outcome.error.code } : {}),
    };
    const keep = !safeToRerun(entry.action) || JSON.stringify(outcome).length <= MAX_STORED_RERUNNABLE_BYTES;
    try {
      await this.#deps.log.finish(finished, keep ? outcome : undefined);
    } finally {
      this.#running.delete(entry.key);
    }
    this.#deps.changed?.();
    await this.#sendOutcomes([outcome]);
  }

  async #sendOutcomes(outcomes: ActionOutcome[]): Promise<void> {
    const sent: string[] = [];
    for (const outcome of outcomes) {
      if (this.#deps.send({ type: "action_result", outcome })) sent.push(actionKey(outcome));
    }
    if (sent.length > 0) await this.#deps.log.markSent(sent);
  }
}
