// Where an attempt's time goes in the extension (`ActionOutcome.timings`): each stage is the
// time since the previous mark, so the stages add up to the attempt's time here until its
// outcome is made. The server's span from sending the action to having its result, less these,
// is the way there and back (with the outcome's write to the action log) — `make bench` prints
// both. A stage named `outer.part` is one of several parts of `outer` that ran at once: it is
// not added to the sum (its time is in `outer`'s). Diagnostics only: nothing decides anything
// by them.
import type { BrowserAction, StageTime } from "../../protocol/ts/protocol.ts";

export class Timeline {
  #last = performance.now();
  readonly stages: StageTime[] = [];

  /** Ends the stage called `stage` now. */
  mark(stage: string): void {
    const now = performance.now();
    this.stages.push({ stage, ms: tenths(now - this.#last) });
    this.#last = now;
  }

  /** Notes `ms` spent on `part` of the stage running now (`outer.part`), measured elsewhere. */
  note(part: string, ms: number): void {
    this.stages.push({ stage: part, ms: tenths(ms) });
  }

  /** Times `work` as `part` of the stage running now (`outer.part`), beside its other parts. */
  async part<T>(name: string, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.stages.push({ stage: name, ms: tenths(performance.now() - started) });
    }
  }
}

function tenths(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** Each attempt's timeline, by the action object the dispatcher runs. */
const timelines = new WeakMap<BrowserAction, Timeline>();

/** The timeline of `action`, started now if it has none yet. */
export function timeline(action: BrowserAction): Timeline {
  let found = timelines.get(action);
  if (found === undefined) timelines.set(action, (found = new Timeline()));
  return found;
}
