// The extension's side of the local bridge (seed 004 §4.2): a WebSocket to `mimo-bridge` on this
// machine, opened with the secret it printed (`hello`, answered by `ready`), kept open and
// reopened with backoff. The coordinator's `bridge_invoke` actions are relayed to it as
// `invoke` frames and its `result` comes back as the action's outcome; the `invoke.stdout` and
// `invoke.stderr` events are not forwarded (a command's result carries its output, up to the
// bridge's limit). Nothing on the internet reaches the bridge: only this extension talks to it.
//
// Chrome is not used here (storage and timers come through `BridgeHooks`), so that the client
// is the same in the service worker and in a test.
import type { BridgeInfo, BridgeMessage, BridgeRequest, Invoke, InvokeResult } from "../../protocol/ts/protocol.ts";
import { backoffDelay } from "./backoff.ts";

/** Where the bridge listens unless the person says otherwise (`mimo-bridge --port`). */
export const DEFAULT_BRIDGE_URL = "ws://127.0.0.1:8765";

/** What the options page edits: an empty secret means no bridge is used. */
export type BridgeSettings = { bridgeUrl: string; bridgeSecret: string };
export const BRIDGE_SETTING_KEYS = ["bridgeUrl", "bridgeSecret"] as const satisfies ReadonlyArray<keyof BridgeSettings>;

/** The bridge connection's state, as the options page shows it. */
export type BridgeStatus = {
  state: "off" | "connecting" | "connected" | "offline";
  /** While connected: what the bridge serves. */
  info?: BridgeInfo;
  /** Why the last connection failed (a wrong secret, nothing listening). */
  lastError?: string;
  since: number;
};
export const BRIDGE_STATUS_KEY = "bridge.status";

export type BridgeHooks = {
  settings(): Promise<BridgeSettings>;
  /** The state changed (connected to another bridge, or gone). */
  changed(status: BridgeStatus): void;
  now(): number;
  random(): number;
};

/** Why an invocation got no result from the bridge. */
export class BridgeUnavailable extends Error {}

/** Checks a bridge address as typed: ws:// on this machine only. */
export function normalizeBridgeUrl(input: string): { ok: true; url: string } | { ok: false; error: string } {
  let url: URL;
  try {
    url = new URL(input.trim() === "" ? DEFAULT_BRIDGE_URL : input.trim());
  } catch {
    return { ok: false, error: `"${input.trim()}" is not an address; use e.g. ${DEFAULT_BRIDGE_URL}` };
  }
  if (url.protocol !== "ws:") return { ok: false, error: "The bridge's address starts with ws://" };
  if (url.hostname !== "127.0.0.1" && url.hostname !== "localhost") return { ok: false, error: "The bridge runs on this computer: use 127.0.0.1" };
  return { ok: true, url: url.href.replace(/\/+$/, "") };
}

type Pending = { resolve(result: InvokeResult): void; reject(error: Error): void };

export class BridgeClient {
  readonly #hooks: BridgeHooks;
  #socket: WebSocket | null = null;
  #status: BridgeStatus;
  #pending = new Map<string, Pending>();
  #attempt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Incremented by every (re)start, so that an old socket's events are ignored. */
  #generation = 0;

  constructor(hooks: BridgeHooks) {
    this.#hooks = hooks;
    this.#status = { state: "off", since: hooks.now() };
  }

  get info(): BridgeInfo | undefined {
    return this.#status.state === "connected" ? this.#status.info : undefined;
  }

  /** (Re)connects with the current settings, or stays off without a secret. */
  async restart(): Promise<void> {
    const generation = ++this.#generation;
    this.#close("the bridge settings changed");
    clearTimeout(this.#timer);
    this.#attempt = 0;
    const settings = await this.#hooks.settings();
    if (generation !== this.#generation) return;
    if (settings.bridgeSecret === "") return this.#set({ state: "off", since: this.#hooks.now() });
    this.#open(settings, generation);
  }

  /** Connects unless already connected or connecting (a woken worker). */
  ensure(): void {
    if (this.#socket === null && this.#timer === undefined) void this.restart();
  }

  /** Relays one invocation and resolves with the bridge's result. */
  invoke(invoke: Invoke): Promise<InvokeResult> {
    const socket = this.#socket;
    if (socket === null || this.#status.state !== "connected") {
      const why = this.#status.lastError === undefined ? "" : ` (${this.#status.lastError})`;
      return Promise.reject(new BridgeUnavailable(`no local bridge is connected to the extension${why}: start mimo-bridge and set its address and secret in the extension's options`));
    }
    return new Promise((resolve, reject) => {
      this.#pending.set(invoke.id, { resolve, reject });
      socket.send(JSON.stringify({ type: "invoke", ...invoke } satisfies BridgeRequest));
    });
  }

  #open(settings: BridgeSettings, generation: number): void {
    this.#set({ state: "connecting", since: this.#hooks.now(), ...this.#lastError() });
    let socket: WebSocket;
    try {
      socket = new WebSocket(settings.bridgeUrl || DEFAULT_BRIDGE_URL);
    } catch (error) {
      return this.#retry(generation, String(error));
    }
    this.#socket = socket;
    socket.onopen = () => socket.send(JSON.stringify({ type: "hello", secret: settings.bridgeSecret } satisfies BridgeRequest));
    socket.onmessage = (event) => {
      if (generation !== this.#generation || typeof event.data !== "string") return;
      let message: BridgeMessage;
      try {
        message = JSON.parse(event.data) as BridgeMessage;
      } catch {
        return;
      }
      if (message.type === "ready") {
        const { type: _, ...info } = message;
        this.#attempt = 0;
        this.#set({ state: "connected", info, since: this.#hooks.now() });
      } else if (message.type === "result") {
        const pending = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        pending?.resolve(message);
      }
    };
    socket.onclose = (event) => {
      if (generation !== this.#generation) return;
      this.#socket = null;
      this.#failPending("the bridge connection closed before the invocation finished");
      this.#retry(generation, event.reason || `the bridge at ${settings.bridgeUrl || DEFAULT_BRIDGE_URL} cannot be reached`);
    };
  }

  #retry(generation: number, error: string): void {
    if (generation !== this.#generation) return;
    this.#set({ state: "offline", lastError: error, since: this.#hooks.now() });
    const delay = backoffDelay(this.#attempt++, this.#hooks.random());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (generation !== this.#generation) return;
      void this.#hooks.settings().then((settings) => {
        if (generation === this.#generation && settings.bridgeSecret !== "") this.#open(settings, generation);
      });
    }, delay);
  }

  #close(why: string): void {
    const socket = this.#socket;
    this.#socket = null;
    this.#failPending(why);
    if (socket !== null) socket.close(1000, why);
  }

  #failPending(why: string): void {
    for (const pending of this.#pending.values()) pending.reject(new BridgeUnavailable(why));
    this.#pending.clear();
  }

  #lastError(): { lastError?: string } {
    return this.#status.lastError === undefined ? {} : { lastError: this.#status.lastError };
  }

  #set(status: BridgeStatus): void {
    const was = this.#status;
    this.#status = status;
    if (was.state !== status.state || was.lastError !== status.lastError || was.info?.root !== status.info?.root) this.#hooks.changed(status);
  }
}
