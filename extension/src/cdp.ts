// The Chrome DevTools Protocol through `chrome.debugger`: attached once per task tab and
// reused; every failure is a `CDP_UNAVAILABLE` `ActionError` (callers fall back to DOM events
// unless a CDP strategy was required).
import { bounded } from "./bounded.ts";
import { ActionError, errorText } from "./results.ts";

export class CdpFailure extends ActionError {
  constructor(message: string) {
    super("CDP_UNAVAILABLE", message, true);
  }
}

/** The setting that turns CDP off (`false`): input then goes through DOM events only. */
export const USE_CDP_KEY = "useCdp";
/**
 * How long a command may take unless its caller says otherwise: a renderer that is busy or a
 * tab Chrome does not draw may never answer.
 */
const COMMAND_MS = 10_000;

export class Debugger {
  readonly #attached = new Set<number>();
  /** Why Chrome detached us last, by tab (e.g. the person cancelled the infobar). */
  readonly detachReasons = new Map<number, string>();
  #enabled: Promise<boolean>;
  readonly #listeners = new Set<(tabId: number, method: string, params: unknown) => void>();

  constructor() {
    chrome.debugger.onEvent.addListener((source, method, params) => {
      if (source.tabId === undefined) return;
      for (const listener of this.#listeners) listener(source.tabId, method, params);
    });
    chrome.debugger.onDetach.addListener((source, reason) => {
      if (source.tabId === undefined) return;
      this.#attached.delete(source.tabId);
      this.detachReasons.set(source.tabId, reason);
    });
    this.#enabled = chrome.storage.local.get(USE_CDP_KEY).then((s) => s[USE_CDP_KEY] !== false, () => true);
    chrome.storage.onChanged.addListener((changes, area) => {
      if (area === "local" && USE_CDP_KEY in changes) this.#enabled = Promise.resolve(changes[USE_CDP_KEY]!.newValue !== false);
    });
  }

  attached(tabId: number): boolean {
    return this.#attached.has(tabId);
  }

  async attach(tabId: number): Promise<void> {
    if (!(await this.#enabled)) throw new CdpFailure("CDP is turned off in the extension's settings");
    if (this.#attached.has(tabId)) return;
    try {
      await bounded(chrome.debugger.attach({ tabId }, "1.3"), COMMAND_MS, () => new Error(`attaching did not finish within ${COMMAND_MS / 1000} s`));
    } catch (error) {
      // A worker that Chrome restarted forgets that it had attached.
      const targets = await chrome.debugger.getTargets().catch(() => []);
      const already = /already attached/i.test(errorText(error)) && targets.some((t) => t.tabId === tabId && t.attached);
      if (!already) throw new CdpFailure(`cannot attach the debugger to tab ${tabId}: ${errorText(error)}`);
    }
    this.#attached.add(tabId);
    // Page events tell of the JavaScript dialogs the page opens (see dialogs.ts).
    await this.#command(tabId, "Page.enable", {}, COMMAND_MS).catch(() => undefined);
  }

  /**
   * Sends `method` to the tab. A command that has not answered within `timeoutMs` (10 s unless
   * said) fails, left to Chrome: a hidden tab's renderer draws no frames, and a screenshot of
   * it would wait for one for ever. Input events (`Input.*`) are bounded only when the caller
   * says: one the page holds (behind a `confirm()`) still lands once it is free, and a caller
   * that took its wait for a failure would fall back to DOM events and click twice — the
   * server names that wait instead, and the next page-changing action is refused meanwhile.
   */
  async send<T = unknown>(tabId: number, method: string, params: Record<string, unknown> = {}, timeoutMs?: number): Promise<T> {
    await this.attach(tabId);
    return this.#command<T>(tabId, method, params, timeoutMs ?? (method.startsWith("Input.") ? undefined : COMMAND_MS));
  }

  async #command<T>(tabId: number, method: string, params: Record<string, unknown>, timeoutMs: number | undefined): Promise<T> {
    try {
      const sent = chrome.debugger.sendCommand({ tabId }, method, params) as Promise<T>;
      if (timeoutMs === undefined) return await sent;
      return await bounded(sent, timeoutMs, () => new CdpFailure(`${method} did not answer within ${timeoutMs / 1000} s in tab ${tabId}`));
    } catch (error) {
      if (error instanceof CdpFailure) throw error;
      throw new CdpFailure(`${method} failed: ${errorText(error)}`);
    }
  }

  /** The next `method` event of the tab's session from now on; `cancel` stops listening. */
  nextEvent<T = unknown>(tabId: number, method: string): { event: Promise<T>; cancel(): void } {
    let listener!: (tab: number, name: string, params: unknown) => void;
    const event = new Promise<T>((resolve) => {
      listener = (tab, name, params) => {
        if (tab !== tabId || name !== method) return;
        this.#listeners.delete(listener);
        resolve(params as T);
      };
    });
    this.#listeners.add(listener);
    return { event, cancel: () => this.#listeners.delete(listener) };
  }

  async detach(tabId: number): Promise<void> {
    this.#attached.delete(tabId);
    await chrome.debugger.detach({ tabId }).catch(() => undefined);
  }
}
