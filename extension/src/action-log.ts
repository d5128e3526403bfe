// The persistent record of actions, so that an action delivered twice runs once even when Chrome
// stopped the service worker in between: the actions running now (with the action itself, to
// decide on restart whether it may run again) and the outcomes of the last `MAX_FINISHED`
// actions. Stored in `chrome.storage.local` (reached through `KeyValue`, so this runs under
// node:test): the small index and running set under one key each, every outcome under its own
// key (a DOM index result can be large, and is read back only for a repeated delivery or a
// resend).
import type { ActionOutcome, BrowserAction } from "../../protocol/ts/protocol.ts";

/** Chrome's `chrome.storage.local` has exactly this shape. */
export interface KeyValue {
  get(keys: string[]): Promise<Record<string, unknown>>;
  set(items: Record<string, unknown>): Promise<void>;
  remove(keys: string[]): Promise<void>;
}

/** How many finished actions are remembered. */
export const MAX_FINISHED = 200;

export const INDEX_KEY = "actions.index";
export const RUNNING_KEY = "actions.running";
const OUTCOME_PREFIX = "actions.out.";

/** One finished action in the index (newest last). */
export type FinishedEntry = {
  key: string;
  taskId: string;
  name: string;
  status: ActionOutcome["status"];
  code?: string;
  startedAt: number;
  finishedAt: number;
  /**
   * Whether the server said it has the outcome (`result_ack`). Until then the outcome is sent
   * again on every new connection; old entries without the field count as unacknowledged.
   */
  acked?: boolean;
};

export type RunningEntry = { key: string; action: BrowserAction; startedAt: number };

export class ActionLog {
  readonly #kv: KeyValue;
  #finished: FinishedEntry[] = [];
  #running: Record<string, RunningEntry> = {};
  /** Serializes writes so that the last one written is the newest state. */
  #writes: Promise<void> = Promise.resolve();

  constructor(kv: KeyValue) {
    this.#kv = kv;
  }

  async load(): Promise<{ finished: FinishedEntry[]; running: RunningEntry[] }> {
    const stored = await this.#kv.get([INDEX_KEY, RUNNING_KEY]);
    const index = stored[INDEX_KEY];
    const running = stored[RUNNING_KEY];
    this.#finished = Array.isArray(index) ? (index as FinishedEntry[]) : [];
    this.#running = typeof running === "object" && running !== null ? (running as Record<string, RunningEntry>) : {};
    return { finished: [...this.#finished], running: Object.values(this.#running) };
  }

  finished(): readonly FinishedEntry[] {
    return this.#finished;
  }

  running(): RunningEntry[] {
    return Object.values(this.#running);
  }

  async start(entry: RunningEntry): Promise<void> {
    this.#running[entry.key] = entry;
    await this.#write(async () => this.#kv.set({ [RUNNING_KEY]: this.#running }));
  }

  /**
   * Stores an outcome and forgets the action as running, in one write. Without `outcome` only
   * the entry is stored (a large result of an action that may simply run again).
   */
  async finish(entry: Omit<FinishedEntry, "acked">, outcome: ActionOutcome | undefined): Promise<void> {
    delete this.#running[entry.key];
    this.#finished = this.#finished.filter((e) => e.key !== entry.key);
    this.#finished.push({ ...entry, acked: false });
    const dropped = this.#finished.length > MAX_FINISHED ? this.#finished.splice(0, this.#finished.length - MAX_FINISHED) : [];
    await this.#write(async () => {
      const items: Record<string, unknown> = { [INDEX_KEY]: this.#finished, [RUNNING_KEY]: this.#running };
      if (outcome !== undefined) items[OUTCOME_PREFIX + entry.key] = outcome;
      await this.#kv.set(items);
      if (dropped.length > 0) await this.#kv.remove(dropped.map((e) => OUTCOME_PREFIX + e.key));
    });
  }

  /** The server has these outcomes: they are never sent again unasked. */
  async markAcked(keys: string[]): Promise<void> {
    let changed = false;
    for (const e of this.#finished) {
      if (keys.includes(e.key) && e.acked !== true) {
        e.acked = true;
        changed = true;
      }
    }
    if (changed) await this.#write(async () => this.#kv.set({ [INDEX_KEY]: this.#finished }));
  }

  async outcome(key: string): Promise<ActionOutcome | undefined> {
    const k = OUTCOME_PREFIX + key;
    const stored = await this.#kv.get([k]);
    return stored[k] as ActionOutcome | undefined;
  }

  #write(work: () => Promise<void>): Promise<void> {
    const next = this.#writes.then(work);
    this.#writes = next.catch((error: unknown) => console.error("mimo: cannot store the action log", error));
    return next;
  }
}
