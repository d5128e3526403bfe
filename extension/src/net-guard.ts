// Keeps Chrome's session rules (net-rules.ts) what the task registry says they should be: after
// every change of a task or of its status (a task starts, a tab joins or leaves it, it ends or
// is forgotten), and when the service worker starts, since session rules outlive a stopped
// worker and a task may have been forgotten meanwhile. The extension has no other session
// rules, so each update replaces them all: ids are numbered afresh and never collide.
import { netRules } from "./net-rules.ts";
import { ActionError, errorText } from "./results.ts";
import { guardedTasks } from "./tasks.ts";
import type { TaskRegistry } from "./tasks.ts";

export class NetGuard {
  /** The rules Chrome has now, as JSON; unknown until this worker first set them. */
  #applied: string | undefined;
  #updates: Promise<void> = Promise.resolve();

  /** Brings Chrome's rules in line with the registry; resolves once Chrome applies them. */
  follow(registry: TaskRegistry): Promise<void> {
    // One at a time, each reading the registry when its turn comes: the last one leaves the
    // rules of the registry's latest state.
    const next = this.#updates.then(() => this.#apply(registry));
    this.#updates = next.catch(() => undefined);
    return next;
  }

  async #apply(registry: TaskRegistry): Promise<void> {
    const wanted = netRules(guardedTasks(await registry.all()));
    const json = JSON.stringify(wanted);
    if (json === this.#applied) return;
    try {
      const existing = await chrome.declarativeNetRequest.getSessionRules();
      await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: existing.map((r) => r.id), addRules: wanted });
    } catch (error) {
      throw new ActionError("INTERNAL_ERROR", `Chrome did not take the rules that keep tasks' tabs from their blocked sites: ${errorText(error)}`);
    }
    this.#applied = json;
  }
}
