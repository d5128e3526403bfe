// The task's WebSocket: connects, hands every server event to the app, and reconnects with
// exponential backoff and jitter, asking the server to replay from the last applied seq.

import type { EventEnvelope, FrontendMessage } from "../../protocol/ts/protocol.ts";
import { socketTicket, taskSocketUrl } from "./api.ts";

export type ConnectionState =
  /** Opening the socket. */
  | "connecting"
  /** Open; the server is replaying history (until `ready`). */
  | "syncing"
  /** Replay done, live events flow. */
  | "live"
  /** Lost; waiting before the next attempt. */
  | "reconnecting"
  /** Closed on purpose (task switched, token rejected). */
  | "closed";

export type ConnectionInfo = {
  state: ConnectionState;
  /** Consecutive failed attempts since the last healthy connection. */
  attempt: number;
  /** When state is `reconnecting`: epoch ms of the next attempt. */
  retryAt?: number;
};

export type TaskSocketOptions = {
  taskId: string;
  token: string;
  /** The highest seq the app has applied for this task; sent as `lastSeq` on (re)connect. */
  lastSeq: () => number;
  onEvent: (event: EventEnvelope) => void;
  onConnection: (info: ConnectionInfo) => void;
  /** The socket closed without ever opening: the token may have been revoked. */
  onOpenFailed?: () => void;
};

const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 10_000;

/** Delay before attempt `n` (0-based): 0.5 s doubling to 10 s, with ±25 % jitter. */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** attempt);
  const jittered = base * (0.75 + random() * 0.5);
  return Math.round(Math.min(BACKOFF_MAX_MS, Math.max(BACKOFF_MIN_MS / 2, jittered)));
}

export class TaskSocket {
  private readonly opts: TaskSocketOptions;
  private ws: WebSocket | null = null;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  private ready = false;
  private readonly outbox: FrontendMessage[] = [];
  /**
   * Messages sent on a socket that may have died before the server stored them, by their
   * `clientMessageId`, until their echo (a `message` event with that id) arrives. Sent again
   * after each reconnect's replay; the server stores each id once.
   */
  private readonly unconfirmed = new Map<string, FrontendMessage>();
  private info: ConnectionInfo = { state: "connecting", attempt: 0 };

  constructor(opts: TaskSocketOptions) {
    this.opts = opts;
  }

  get taskId(): string {
    return this.opts.taskId;
  }

  get connection(): ConnectionInfo {
    return this.info;
  }

  get isLive(): boolean {
    return this.info.state === "live";
  }

  start(): void {
    window.addEventListener("online", this.wake);
    document.addEventListener("visibilitychange", this.wake);
    this.open();
  }

  /** Closes for good: no more events, no reconnects. */
  close(): void {
    this.stopped = true;
    window.removeEventListener("online", this.wake);
    document.removeEventListener("visibilitychange", this.wake);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const ws = this.ws;
    this.ws = null;
    if (ws && ws.readyState <= WebSocket.OPEN) ws.close(1000, "bye");
    this.setInfo({ state: "closed", attempt: this.attempt });
  }

  /** Sends now when live, otherwise queues until the next connection has replayed. */
  send(message: FrontendMessage): "sent" | "queued" {
    if (message.type === "user_message" && message.clientMessageId !== undefined) this.unconfirmed.set(message.clientMessageId, message);
    if (this.ws && this.ready && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(message));
      return "sent";
    }
    this.outbox.push(message);
    return "queued";
  }

  get queued(): number {
    return this.outbox.length;
  }

  /** Skips the backoff wait (the network came back, the tab became visible, the user asked). */
  reconnectNow(): void {
    if (this.stopped || this.info.state !== "reconnecting") return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.open();
  }

  private readonly wake = (): void => {
    if (document.visibilityState === "visible" && navigator.onLine !== false) this.reconnectNow();
  };

  private setInfo(info: ConnectionInfo): void {
    this.info = info;
    this.opts.onConnection(info);
  }

  /** Counts `open` calls, so a ticket that arrives after a newer attempt started is dropped. */
  private opening = 0;

  private open(): void {
    if (this.stopped) return;
    this.ready = false;
    this.setInfo({ state: "connecting", attempt: this.attempt });
    const attempt = ++this.opening;
    // Every socket opens with a fresh single-use ticket: the token never goes in a URL.
    socketTicket(this.opts.token).then(
      (ticket) => {
        if (attempt === this.opening && !this.stopped) this.openWith(ticket);
      },
      () => {
        if (attempt === this.opening) this.scheduleReconnect(false);
      },
    );
  }

  private openWith(ticket: string): void {
    let opened = false;
    let ws: WebSocket;
    try {
      ws = new WebSocket(taskSocketUrl(this.opts.taskId, ticket, this.opts.lastSeq()));
    } catch {
      this.scheduleReconnect(false);
      return;
    }
    this.ws = ws;
    this.setInfo({ state: "connecting", attempt: this.attempt });

    ws.onopen = () => {
      if (ws !== this.ws) return;
      opened = true;
      this.setInfo({ state: "syncing", attempt: this.attempt });
    };
    ws.onmessage = (msg: MessageEvent) => {
      if (ws !== this.ws || typeof msg.data !== "string") return;
      let event: EventEnvelope;
      try {
        event = JSON.parse(msg.data) as EventEnvelope;
      } catch {
        console.warn("mimo: ignoring a frame that is not JSON", msg.data);
        return;
      }
      if (typeof event !== "object" || event === null || typeof event.type !== "string") return;
      if (event.taskId && event.taskId !== this.opts.taskId) return;
      if (event.type === "message" && event.message.clientMessageId !== undefined) this.unconfirmed.delete(event.message.clientMessageId);
      this.opts.onEvent(event);
      if (event.type === "ready" && ws === this.ws) {
        this.ready = true;
        this.attempt = 0;
        // What the replay did not show arrived may have died with the old socket.
        const queued = new Set(this.outbox);
        for (const message of this.unconfirmed.values()) if (!queued.has(message)) ws.send(JSON.stringify(message));
        this.flush();
        this.setInfo({ state: "live", attempt: 0 });
      }
    };
    ws.onclose = () => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.ready = false;
      this.scheduleReconnect(opened);
    };
    // An error is always followed by close, which does the work.
    ws.onerror = () => {};
  }

  private flush(): void {
    while (this.outbox.length > 0 && this.ws && this.ws.readyState === WebSocket.OPEN) {
      const next = this.outbox.shift()!;
      this.ws.send(JSON.stringify(next));
    }
  }

  private scheduleReconnect(opened: boolean): void {
    if (this.stopped) return;
    const delay = backoffDelay(this.attempt);
    this.attempt += 1;
    this.setInfo({ state: "reconnecting", attempt: this.attempt, retryAt: Date.now() + delay });
    if (!opened) this.opts.onOpenFailed?.();
    this.timer = setTimeout(() => {
      this.timer = null;
      this.open();
    }, delay);
  }
}
