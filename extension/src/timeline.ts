// Where an attempt's time goes in the extension (`ActionOutcome.timings`): each stage is the
// time since the previous mark, so the stages add up to the attempt's time here until its
// outcome is made. The server's span from sending the action to having its result, less these,
// is the way there and back (with the outcome's write to the action log) — `make bench` prints
// both. Diagnostics only: nothing decides anything by them.
import type { BrowserAction, StageTime } from "../../protocol/ts/protocol.ts";

export class Timeline {
  #last = performance.now();
  readonly stages: StageTime[] = [];

  /** Ends the stage called `stage` now. */
  mark(stage: string): void {
    const now = performance.now();
    this.stages.push({ stage, ms: Math.round((now - this.#last) * 10) / 10 });
    this.#last = now;
  }
}

/** Each attempt's timeline, by the action object the dispatcher runs. */
const timelines = new WeakMap<BrowserAction, Timeline>();

/** The timeline of `action`, started now if it has none yet. */
export function timeline(action: BrowserAction): Timeline {
  let found = timelines.get(action);
  if (found === undefined) timelines.set(action, (found = new Timeline()));
  return found;
}
