// Action dispatch, exactly once. By its dedupe key `(actionId, attempt)`, a `browser_action` is:
// - running now → only acked again;
// - finished → acked, and its stored outcome is sent again (the first one may have been lost);
// - new → recorded as running (persistently), then acked, and executed, one action at a time
//   per task. An ack says the attempt is recorded: a restarted worker knows every attempt it
//   acked.
// Outcomes are stored before they are sent, so a worker stopped in between still has them. The
// server answers each result it has with `result_ack`; on every `welcome` exactly the outcomes
// it has not acknowledged go out again (usually none: never a burst of what it already has).
// An action that was running when the worker died is run again on restart if it only reads the
// page, else reported as a `TIMEOUT` — retryable only if running it twice ends the same way.
//
// The server asks what became of an attempt that timed out (`action_query`) before it runs it
// again; the answer (`action_status`) comes from the log, and never starts anything. A
// page-changing action that arrives while another of its task is still running (held by a
// `confirm()` dialog, say: the server gave up waiting for it) is refused, not queued behind it
// to run late.
//
// A look at the page (a read-only attempt) still running when the server's budget for it
// (`budgetMs`) is nearly spent ends with a `TIMEOUT` that says what it was doing, so that one
// hung wait never holds the task's queue. A page-changing attempt is never ended early: what it
// started may still land (a click the page holds behind a `confirm()`), and while it runs the
// next page-changing action is refused — ending it would let that one land too.
//
// Chrome is reached only through `DispatcherDeps`, so this runs under node:test.
import { ACTION_TRAITS } from "../../protocol/ts/protocol.ts";
import type { ActionOutcome, BrowserAction, ExtensionMessage } from "../../protocol/ts/protocol.ts";
import type { ActionLog, RunningEntry } from "./action-log.ts";
import { bounded } from "./bounded.ts";
import { actionLabel } from "./overlay-state.ts";
import { ActionError, actionKey, errorOutcome, successOutcome } from "./results.ts";
import type { ActionSuccess } from "./results.ts";
import { timeline } from "./timeline.ts";

/**
 * Outcomes of actions that may run again are stored only up to this size: writing a DOM index
 * of thousands of elements to storage costs more than running it again on a repeated delivery.
 */
export const MAX_STORED_RERUNNABLE_BYTES = 16 * 1024;

/** Actions that only read the page (or wait): running one twice does no harm. */
export function safeToRerun(action: Pick<BrowserAction, "name">): boolean {
  return ACTION_TRAITS[action.name].rerun === "read_only";
}

/** An attempt's bound without a budget from the server (one from before it sent budgets). */
const DEFAULT_BUDGET_MS = 60_000;

/** How long an attempt may run here: a little less than the server waits for it. */
export function runBound(action: Pick<BrowserAction, "budgetMs">): number {
  return Math.floor((action.budgetMs ?? DEFAULT_BUDGET_MS) * 0.9);
}

function overran(action: BrowserAction, ms: number): ActionError {
  return new ActionError("TIMEOUT", `${action.name} did not finish within ${(ms / 1000).toFixed(1)} s in the extension (${actionLabel(action)})`, true);
}

/** Actions that change the page but end in the same state when run twice (opening a URL). */
function idempotent(action: Pick<BrowserAction, "name">): boolean {
  return ACTION_TRAITS[action.name].rerun !== "once";
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
  /** The action executing now in each task (others of the task wait behind it). */
  readonly #executing = new Map<string, BrowserAction>();

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
    timeline(action);
    await this.#ready;
    const key = actionKey(action);
    if (this.#running.has(key)) return this.#ack(action);
    if (this.#deps.log.finished().some((e) => e.key === key)) {
      const outcome = this.#recent.get(key) ?? (await this.#deps.log.outcome(key));
      if (outcome !== undefined || !safeToRerun(action)) {
        this.#ack(action);
        if (outcome !== undefined) this.#sendOutcomes([outcome]);
        return;
      }
      // A large read-only result that was not stored: reading the page again answers as well.
    }
    this.#running.add(key);
    const entry: RunningEntry = { key, action, startedAt: this.#deps.now() };
    await this.#deps.log.start(entry);
    // Acked only once recorded: a worker stopped before then never acked, so the server hears
    // nothing within its ack timeout (seconds) and sends the attempt again; acked earlier, it
    // would wait the whole execution budget for an attempt the restarted worker never knew.
    this.#ack(action);
    timeline(action).mark("log");
    this.#deps.changed?.();
    const blocking = this.#executing.get(action.taskId);
    if (blocking !== undefined && !safeToRerun(blocking) && !safeToRerun(action)) {
      const error = new ActionError(
        "TARGET_NOT_INTERACTABLE",
        `${action.name} was not run: ${blocking.name} (sent earlier) is still running on this page — a dialog or a long script may be blocking it`,
        false,
      );
      await this.#finish(entry, errorOutcome(action, error));
      return;
    }
    await this.#enqueue(action.taskId, () => this.#run(entry));
  }

  #ack(action: BrowserAction): void {
    this.#deps.send({ type: "action_ack", actionId: action.actionId, attempt: action.attempt, taskId: action.taskId });
  }

  /** The server asks what became of an attempt (`action_query`). Never starts it. */
  async query(ids: { taskId: string; actionId: string; attempt: number }): Promise<void> {
    await this.#ready;
    const key = actionKey(ids);
    const base = { type: "action_status", taskId: ids.taskId, actionId: ids.actionId, attempt: ids.attempt } as const;
    if (this.#running.has(key)) {
      this.#deps.send({ ...base, state: "running" });
    } else if (this.#deps.log.finished().some((e) => e.key === key)) {
      const outcome = this.#recent.get(key) ?? (await this.#deps.log.outcome(key));
      this.#deps.send(outcome === undefined ? { ...base, state: "finished" } : { ...base, state: "finished", outcome });
    } else {
      this.#deps.send({ ...base, state: "unknown" });
    }
  }

  /** A connection was welcomed: send the outcomes the server has not acknowledged. */
  async online(): Promise<void> {
    await this.#ready;
    const due = this.#deps.log.finished().filter((e) => e.acked !== true);
    const outcomes: ActionOutcome[] = [];
    for (const e of due) {
      const outcome = this.#recent.get(e.key) ?? (await this.#deps.log.outcome(e.key));
      if (outcome !== undefined) outcomes.push(outcome);
    }
    this.#sendOutcomes(outcomes);
  }

  /** The server has this attempt's outcome (`result_ack`). */
  async acknowledged(attempt: { actionId: string; attempt: number }): Promise<void> {
    await this.#ready;
    await this.#deps.log.markAcked([actionKey(attempt)]);
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
          idempotent(entry.action),
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
    this.#executing.set(entry.action.taskId, entry.action);
    timeline(entry.action).mark("queue");
    try {
      const running = this.#deps.execute(entry.action);
      const ms = runBound(entry.action);
      outcome = successOutcome(entry.action, await (safeToRerun(entry.action) ? bounded(running, ms, () => overran(entry.action, ms)) : running));
    } catch (error) {
      if (!(error instanceof ActionError)) console.error(`mimo: ${entry.action.name} failed`, error);
      outcome = errorOutcome(entry.action, error);
    } finally {
      this.#executing.delete(entry.action.taskId);
    }
    await this.#finish(entry, outcome);
  }

  async #finish(entry: RunningEntry, outcome: ActionOutcome): Promise<void> {
    // Stored with its timings, so that a delivery again sends the same outcome; the write of it
    // to the log, after them, counts in the server's figure for the way there and back.
    const stages = timeline(entry.action);
    stages.mark("outcome");
    outcome = { ...outcome, timings: stages.stages };
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
    // Sent while it is written: the server keeps the first outcome of an attempt and ignores
    // any other, so a restart before the write lands — which reports the attempt as cut off,
    // or runs a harmless one again — can only repeat what it already has.
    const written = this.#deps.log.finish(finished, keep ? outcome : undefined);
    this.#sendOutcomes([outcome]);
    try {
      await written;
    } finally {
      this.#running.delete(entry.key);
    }
    this.#deps.changed?.();
  }

  #sendOutcomes(outcomes: ActionOutcome[]): void {
    for (const outcome of outcomes) this.#deps.send({ type: "action_result", outcome });
  }
}
