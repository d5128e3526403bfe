// The extension's connection over plain HTTPS requests, for networks that block WebSockets (a
// proxy, a locked-down network; seed 002 §4.1): `POST /api/extension/poll` carries the same
// frames as the socket, both ways. It looks like a WebSocket to `Connection` (open, send,
// message, close), so everything above it — hello and welcome, actions, results, resending
// what the server did not acknowledge — is the same code on both transports.
//
// One request at a time is held open as a long poll (the server answers as soon as it has a
// frame, or after `MAX_POLL_WAIT_MS` with none); frames to send go at once in a request of their
// own. Each answer acknowledges nothing by itself: the next request's `ack` names the last
// server frame handled, so a lost answer is delivered again, and a frame that comes twice (two
// requests in flight) is handled once (by its sequence number).
import { MAX_EXTENSION_FRAME_BYTES, MAX_POLL_WAIT_MS } from "../../protocol/ts/protocol.ts";
import type { ErrorObject, PollResponse } from "../../protocol/ts/protocol.ts";
import { backoffDelay } from "./backoff.ts";

/** Requests failed in a row after which the connection counts as lost (closed, 1006). */
const FAILURES_BEFORE_CLOSE = 3;
/** How much longer than the server may hold it a request may take before it counts as stalled. */
const REQUEST_MARGIN_MS = 15_000;
/** Frames carried by one request at most, and their size (the server's body limit is 4×). */
const FRAMES_PER_REQUEST = 20;
const BYTES_PER_REQUEST = 2 * MAX_EXTENSION_FRAME_BYTES;

type CloseInfo = { code: number; reason: string };

/** A connection by polling, with the parts of the WebSocket interface `Connection` uses. */
export class PollingSocket {
  readyState: number = WebSocket.CONNECTING;
  onopen: (() => void) | null = null;
  onmessage: ((event: { data: string }) => void) | null = null;
  onclose: ((event: CloseInfo) => void) | null = null;

  readonly #url: string;
  readonly #token: string;
  /** Frames (JSON text) waiting to be sent, in order. */
  #outbox: string[] = [];
  #sending = false;
  /** The last server frame handled. */
  #ack = 0;
  #failures = 0;

  /** `server` is the server's origin; `clientId` this extension's id. */
  constructor(server: string, clientId: string, token: string) {
    this.#url = `${server}/api/extension/poll?clientId=${encodeURIComponent(clientId)}`;
    this.#token = token;
    // Opens in a later task, like a WebSocket: its handlers are set by then.
    setTimeout(() => {
      if (this.readyState !== WebSocket.CONNECTING) return;
      this.readyState = WebSocket.OPEN;
      this.onopen?.();
      void this.#listen();
    }, 0);
  }

  send(frame: string): void {
    if (this.readyState !== WebSocket.OPEN) return;
    this.#outbox.push(frame);
    void this.#flush();
  }

  close(code = 1000, reason = ""): void {
    if (this.readyState === WebSocket.CLOSED) return;
    this.readyState = WebSocket.CLOSED;
    this.onclose?.({ code, reason });
  }

  /** The long poll: always one held open while the connection is. */
  async #listen(): Promise<void> {
    while (this.readyState === WebSocket.OPEN) {
      // An extension API call: a service worker waiting on fetch alone counts as idle.
      await chrome.runtime.getPlatformInfo();
      if (!(await this.#exchange([], MAX_POLL_WAIT_MS))) await this.#pause();
    }
  }

  /** Sends what waits, a batch per request, in order; a failed batch is tried again. */
  async #flush(): Promise<void> {
    if (this.#sending) return;
    this.#sending = true;
    try {
      while (this.#outbox.length > 0 && this.readyState === WebSocket.OPEN) {
        const batch = this.#batch();
        if (!(await this.#exchange(batch, 0))) {
          this.#outbox.unshift(...batch);
          await this.#pause();
        }
      }
    } finally {
      this.#sending = false;
    }
  }

  /** The next frames to send: at least one, then as many as fit in a request. */
  #batch(): string[] {
    let bytes = 0;
    let count = 0;
    for (const frame of this.#outbox) {
      if (count > 0 && (count >= FRAMES_PER_REQUEST || bytes + frame.length > BYTES_PER_REQUEST)) break;
      bytes += frame.length;
      count++;
    }
    return this.#outbox.splice(0, count);
  }

  /** One request; `false` when it failed or stalled (counted: enough in a row close the connection). */
  async #exchange(frames: string[], waitMs: number): Promise<boolean> {
    // The frames are JSON text already (as the socket would carry them): spliced in as is.
    const body = `{"ack":${this.#ack},"waitMs":${waitMs},"frames":[${frames.join(",")}]}`;
    let answer: PollResponse;
    try {
      // The server holds a poll up to `waitMs`: past that and a margin, the connection stalled.
      const res = await fetch(this.#url, {
        method: "POST",
        headers: { authorization: `Bearer ${this.#token}`, "content-type": "application/json" },
        body,
        signal: AbortSignal.timeout(waitMs + REQUEST_MARGIN_MS),
      });
      if (res.status === 401 || res.status === 403) {
        const error = (await res.json().catch(() => null)) as Partial<ErrorObject> | null;
        this.close(4401, error?.message ?? "the server refused this browser's credential");
        return false;
      }
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      answer = (await res.json()) as PollResponse;
    } catch (error) {
      console.warn("mimo: a poll failed", error);
      if (++this.#failures >= FAILURES_BEFORE_CLOSE) this.close(1006, "polling failed");
      return false;
    }
    this.#failures = 0;
    if (this.readyState !== WebSocket.OPEN) return true;
    for (const reply of answer.replies) this.#deliver(JSON.stringify(reply));
    for (const { seq, frame } of answer.frames) {
      if (seq <= this.#ack) continue;
      this.#ack = seq;
      this.#deliver(JSON.stringify(frame));
    }
    return true;
  }

  #deliver(data: string): void {
    if (this.readyState === WebSocket.OPEN) this.onmessage?.({ data });
  }

  /** Waits after a failure before the next request. */
  #pause(): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, backoffDelay(this.#failures, Math.random())));
  }
}
