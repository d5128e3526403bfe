// The extension's side of the local bridge (seed 004 §4.2): a WebSocket to `mimo-bridge` on this
// machine, opened with a mutual proof of the secret it printed (protocol/src/bridge.rs): our
// nonce in `hello`; the bridge's `challenge` must carry its proof over both nonces before we
// send ours in `auth` and take its `ready`, so whatever else listens on the port learns nothing
// derived from the secret, and gets no invocation. The secret itself is never kept: only a
// non-extractable HMAC key made from it (bridge-settings.ts). Kept open and reopened with backoff. The coordinator's `bridge_invoke` actions are relayed to it as
// `invoke` frames and its `result` comes back as the action's outcome; the `invoke.stdout` and
// `invoke.stderr` events are not forwarded (a command's result carries its output, up to the
// bridge's limit). Nothing on the internet reaches the bridge: only this extension talks to it.
//
// Chrome is not used here (storage and timers come through `BridgeHooks`), so that the client
// is the same in the service worker and in a test.
import type { BridgeInfo, BridgeMessage, BridgeRequest, Invoke, InvokeResult } from "../../protocol/ts/protocol.ts";
import { backoffDelay } from "./backoff.ts";
import { toHex } from "./image.ts";

/** Where the bridge listens unless the person says otherwise (`mimo-bridge --port`). */
export const DEFAULT_BRIDGE_URL = "ws://127.0.0.1:8765";
/** How long a bridge has to prove itself once the socket is open. */
const HANDSHAKE_MS = 10_000;

/** What the options page sets: without a key (no secret given) no bridge is used. */
export type BridgeSettings = { bridgeUrl: string; key: CryptoKey | null };
/** The `chrome.storage.local` keys whose change means new bridge settings (bridge-settings.ts). */
export const BRIDGE_SETTING_KEYS = ["bridgeUrl", "bridgeKeyId"] as const;

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

/** The HMAC-SHA256 key of a secret, usable to prove and check proofs but never read back. */
export function importBridgeKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

/** What a side's proof covers (as the bridge computes it: bridge/src/handshake.rs). */
function proofMessage(side: "bridge" | "client", clientNonce: string, bridgeNonce: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(`mimo-bridge v1 ${side}\n${clientNonce}\n${bridgeNonce}`);
}


function fromHex(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^(?:[0-9a-f]{2})*$/.test(text)) return null;
  return Uint8Array.from(text.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

type Pending = { resolve(result: InvokeResult): void; reject(error: Error): void };

export class BridgeClient {
  readonly #hooks: BridgeHooks;
  #socket: WebSocket | null = null;
  #status: BridgeStatus;
  #pending = new Map<string, Pending>();
  #attempt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The bound on the open socket's handshake. */
  #handshake: ReturnType<typeof setTimeout> | undefined;
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
    this.#open(settings, generation);
  }

  /** Connects unless already connected or connecting (a woken worker). */
  ensure(): void {
    if (this.#socket === null && this.#timer === undefined) void this.restart();
  }

  /** Relays one invocation and resolves with the bridge's result (only to a bridge that proved itself). */
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
    const key = settings.key;
    if (key === null) return this.#set({ state: "off", since: this.#hooks.now() });
    const url = settings.bridgeUrl || DEFAULT_BRIDGE_URL;
    this.#set({ state: "connecting", since: this.#hooks.now(), ...this.#lastError() });
    let socket: WebSocket;
    try {
      socket = new WebSocket(url);
    } catch (error) {
      return this.#retry(generation, String(error));
    }
    this.#socket = socket;
    const clientNonce = toHex(crypto.getRandomValues(new Uint8Array(32)));
    /** Where the handshake is: `ready` counts only once we proved ourselves, after the bridge did. */
    let step: "hello" | "checking" | "proved" | "ready" = "hello";
    /** Why we closed the socket ourselves (a bridge that closes first says why in its close frame). */
    let refusal: string | undefined;
    const refuse = (why: string) => {
      refusal = why;
      // A page may close with 1000 or 3000-4999 only, and a reason of at most 123 bytes.
      socket.close(1000, "the bridge could not prove it knows the secret");
    };
    // Something that accepts the socket and then says nothing is not a bridge: past the bound
    // it is closed and tried again later, instead of staying "connecting" for ever.
    clearTimeout(this.#handshake);
    this.#handshake = setTimeout(() => {
      if (step !== "ready" && socket.readyState !== WebSocket.CLOSED) refuse(`what listens at ${url} did not finish the handshake within ${HANDSHAKE_MS / 1000} s`);
    }, HANDSHAKE_MS);
    socket.onopen = () => socket.send(JSON.stringify({ type: "hello", nonce: clientNonce } satisfies BridgeRequest));
    socket.onmessage = (event) => {
      if (generation !== this.#generation || typeof event.data !== "string") return;
      let message: BridgeMessage;
      try {
        message = JSON.parse(event.data) as BridgeMessage;
      } catch {
        return;
      }
      if (message.type === "challenge" && step === "hello") {
        step = "checking";
        void this.#answer(key, clientNonce, message).then((proof) => {
          if (generation !== this.#generation || socket.readyState !== WebSocket.OPEN) return;
          if (proof === null) return refuse(`wrong secret, or what listens at ${url} is not your mimo-bridge: it could not prove it knows the secret, so nothing was sent to it`);
          step = "proved";
          socket.send(JSON.stringify({ type: "auth", proof } satisfies BridgeRequest));
        });
      } else if (message.type === "ready") {
        if (step !== "proved") return refuse(`what listens at ${url} said it was ready before proving it knows the secret: it is not mimo-bridge`);
        step = "ready";
        clearTimeout(this.#handshake);
        const { type: _, ...info } = message;
        this.#attempt = 0;
        this.#set({ state: "connected", info, since: this.#hooks.now() });
      } else if (message.type === "result" && step === "ready") {
        const pending = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        pending?.resolve(message);
      }
    };
    socket.onclose = (event) => {
      if (generation !== this.#generation) return;
      clearTimeout(this.#handshake);
      this.#socket = null;
      this.#failPending("the bridge connection closed before the invocation finished");
      this.#retry(generation, refusal ?? (event.reason || `the bridge at ${url} cannot be reached`));
    };
  }

  /** Our proof, once the bridge's proof checked out; `null` when it did not. */
  async #answer(key: CryptoKey, clientNonce: string, challenge: { nonce: string; proof: string }): Promise<string | null> {
    const proof = fromHex(challenge.proof);
    const valid = proof !== null && typeof challenge.nonce === "string" && (await crypto.subtle.verify("HMAC", key, proof, proofMessage("bridge", clientNonce, challenge.nonce)));
    if (!valid) return null;
    return toHex(new Uint8Array(await crypto.subtle.sign("HMAC", key, proofMessage("client", clientNonce, challenge.nonce))));
  }

  #retry(generation: number, error: string): void {
    if (generation !== this.#generation) return;
    this.#set({ state: "offline", lastError: error, since: this.#hooks.now() });
    const delay = backoffDelay(this.#attempt++, this.#hooks.random());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (generation !== this.#generation) return;
      void this.#hooks.settings().then((settings) => {
        if (generation === this.#generation) this.#open(settings, generation);
      });
    }, delay);
  }

  #close(why: string): void {
    clearTimeout(this.#handshake);
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
