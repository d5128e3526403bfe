// The extension's socket to the server: `ws(s)://<server>/ws/extension?clientId=…&token=…`.
//
// On open it sends `hello`; on `welcome` the connection is online and `onOnline` runs (the
// browser sync starts). A dropped or refused connection is retried with exponential backoff and
// jitter, reset by the next welcome. The retry timer dies with the service worker, so the
// background script also calls `ensure()` whenever Chrome wakes the worker (an alarm every
// 30 s, a tab event, the options page). The state is published in `chrome.storage.local` for
// the options page.
//
// Where WebSockets are blocked (a proxy, a locked-down network) the same frames go over plain
// requests instead (`PollingSocket`, seed 002 §4.1): by the `transport` setting, or by itself
// after `SOCKET_FAILURES_BEFORE_POLLING` sockets in a row failed to open. While it polls, a
// socket is tried again every `SOCKET_PROBE_MS`; once one is welcomed it takes over.
//
// While online, `ping` is sent every 20 s as a heartbeat: socket traffic is what keeps an MV3
// service worker alive (Chrome 116+), and the `pong` in reply proves the connection still works
// end to end (a half-open socket is replaced rather than trusted). The runtime answers the
// ping itself, so an idle extension costs the server nothing.
import { PING_FRAME } from "../../protocol/ts/protocol.ts";
import type { BrowserAction, ConfirmationRequest, ErrorObject, ExtensionMessage, ServerToExtension, TaskStatus, WsTicket } from "../../protocol/ts/protocol.ts";
import { backoffDelay } from "./backoff.ts";
import { timedOut } from "./bounded.ts";
import { defaultName, extensionSocketUrl, normalizeServerUrl } from "./config.ts";
import { describeBrowser } from "./identity.ts";
import { PollingSocket } from "./polling.ts";
import { loadCredential, loadSettings, saveStatus } from "./storage.ts";
import type { ConnectionState, ConnectionStatus, Settings } from "./storage.ts";

/** How long the server gets to answer `hello` with `welcome`, or `ping` with `pong`. */
const WELCOME_TIMEOUT_MS = 10_000;
/** Heartbeat period while online; below the service worker's 30 s idle limit. */
const HEARTBEAT_MS = 20_000;
/** Sockets that failed to open in a row after which the `auto` transport polls instead. */
const SOCKET_FAILURES_BEFORE_POLLING = 3;
/** While polling by itself (`auto`), how often a socket is tried again. */
const SOCKET_PROBE_MS = 10_000;

/** What carries a connection: a WebSocket, or requests that behave like one. */
type Carrier = WebSocket | PollingSocket;

export type ConnectionHooks = {
  /** The server welcomed this connection. */
  onOnline(): void;
  /** The connection that was online is gone. */
  onOffline(): void;
  /** The server sent an action to run. */
  onAction(action: BrowserAction): void;
  /** The server says a task's status changed. */
  onTaskState(taskId: string, status: TaskStatus, bridge: boolean): void;
  /** The server has an action's result (`result_ack`). */
  onResultAck(ack: { actionId: string; attempt: number }): void;
  /** The server asks what became of an attempt (`action_query`). */
  onActionQuery(query: { taskId: string; actionId: string; attempt: number }): void;
  /** A step of a task waits for the person (`confirmation_requested`). */
  onConfirmationRequested(taskId: string, request: ConfirmationRequest): void;
  /** It was answered, here or elsewhere (`confirmation_settled`). */
  onConfirmationSettled(taskId: string, step: number): void;
};

/** How long the server may take to give a socket ticket: past it, the connection is tried again later. */
const TICKET_MS = 10_000;

/** A ticket for one socket (`POST /api/ws-ticket`), or why there is none. */
async function socketTicket(serverUrl: string, token: string): Promise<{ ok: true; ticket: string } | { ok: false; error: string }> {
  try {
    const res = await fetch(`${serverUrl}/api/ws-ticket`, { method: "POST", headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(TICKET_MS) });
    const body = (await res.json().catch(() => null)) as (WsTicket & Partial<ErrorObject>) | null;
    if (res.ok && body?.ticket !== undefined) return { ok: true, ticket: body.ticket };
    const why = body?.code !== undefined ? `${body.code}: ${body.message}` : `HTTP ${res.status}`;
    return { ok: false, error: `the server refused this browser (${why}); pair it again from the web app if it was revoked` };
  } catch (error) {
    const why = timedOut(error) ? `no answer within ${TICKET_MS / 1000} s` : error instanceof Error ? error.message : String(error);
    return { ok: false, error: `could not reach the server: ${why}` };
  }
}

/** The first frame of every connection: who this extension instance is. */
async function helloFrame(settings: Settings, id: string): Promise<string> {
  const self = await describeBrowser();
  const hello: ExtensionMessage = {
    type: "hello",
    clientId: id,
    name: settings.name.trim() || defaultName(self.browser, self.platform),
    browser: self.browser,
    extensionVersion: chrome.runtime.getManifest().version,
  };
  return JSON.stringify(hello);
}

/** Why a connection ended, for the options page. Browsers hide why an upgrade failed. */
function closeReason(event: { code: number; reason: string }, opened: boolean): string {
  if (!opened) return "could not reach the server, or it refused the connection (check the address and token)";
  if (event.code === 1006) return "the connection to the server was lost";
  if (event.code === 4000) return "replaced by a newer connection with the same client id";
  if (event.code === 4401) return "this browser's pairing was revoked in the web app; pair it again";
  return `the server closed the connection (${event.code}${event.reason ? `: ${event.reason}` : ""})`;
}

export class Connection {
  readonly #hooks: ConnectionHooks;
  #socket: Carrier | null = null;
  /** WebSockets in a row that never opened (blocked, or the server down). */
  #socketFailures = 0;
  #probeTimer: ReturnType<typeof setTimeout> | undefined;
  #online = false;
  /** Failed attempts since the last welcome. */
  #attempt = 0;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #answerTimer: ReturnType<typeof setTimeout> | undefined;
  #heartbeatTimer: ReturnType<typeof setInterval> | undefined;
  /** Incremented whenever a connection is abandoned, so late callbacks of older ones are ignored. */
  #generation = 0;
  #lastError: string | undefined;
  /** What the options page was last told; `since` moves only when the state changes. */
  #status: ConnectionStatus | undefined;

  constructor(hooks: ConnectionHooks) {
    this.#hooks = hooks;
  }

  /** Connects unless a connection is open, being opened, or scheduled. */
  ensure(): void {
    if (this.#socket !== null || this.#retryTimer !== undefined || this.#opening) return;
    this.#open();
  }

  /** A connection is being prepared (settings read, ticket asked for) and has no socket yet. */
  #opening = false;

  /** Drops any connection and connects again at once (the settings changed). */
  restart(): void {
    this.#abandon();
    this.#attempt = 0;
    this.#lastError = undefined;
    this.#open();
  }

  /** Sends a frame if the connection is online, else drops it; says which. */
  send(frame: string): boolean {
    if (!this.#online || this.#socket?.readyState !== WebSocket.OPEN) return false;
    if (this.filter !== undefined) frame = this.filter(frame);
    const socket = this.#socket;
    const put = (f: string) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(f);
    };
    if (this.wire === undefined) put(frame);
    else this.wire(frame, put);
    this.onSent?.(frame);
    return true;
  }

  /** Rewrites every frame before it is sent (the secret values out: background.ts). */
  filter: ((frame: string) => string) | undefined;

  /** Sees every frame sent (test hooks only). */
  onSent: ((frame: string) => void) | undefined;

  /** Puts frames on the wire its own way: late, twice (test hooks only: the chaos tests). */
  wire: ((frame: string, put: (frame: string) => void) => void) | undefined;

  /** Handles a frame as if the server had sent it (test hooks only). */
  receiveForTest(frame: string): void {
    this.#receive(frame);
  }

  /** Whether a connection is online now. */
  get online(): boolean {
    return this.#online;
  }

  /** How the connection is carried now. */
  get transport(): "websocket" | "polling" {
    return this.#socket instanceof PollingSocket ? "polling" : "websocket";
  }

  /** Gives up the current connection after a failure on this side, and retries later. */
  fail(reason: string): void {
    if (this.#socket === null) return;
    this.#abandon();
    this.#retry(reason);
  }

  #open(): void {
    this.#opening = true;
    const generation = this.#generation;
    this.#connect(generation)
      .catch((error: unknown) => this.#publish("offline", `cannot connect: ${String(error)}`))
      .finally(() => {
        if (generation === this.#generation) this.#opening = false;
      });
  }

  async #connect(generation: number): Promise<void> {
    const [settings, credential] = await Promise.all([loadSettings(), loadCredential()]);
    // A restart or another ensure() may have happened while the settings were read.
    if (generation !== this.#generation || this.#socket !== null) return;
    const server = normalizeServerUrl(settings.serverUrl);
    if (settings.serverUrl === "" || credential === null) {
      return this.#publish("offline", "Not configured: set the server address and pair this browser on the options page.");
    }
    if (!server.ok) return this.#publish("offline", server.error);
    const { clientId: id, token } = credential;

    // The socket opens with a single-use ticket bought with this extension's credential: the
    // credential itself never travels in a URL. (Polling sends the credential in a header;
    // the ticket still tells early whether the server takes it.)
    this.#publish("connecting");
    const ticket = await socketTicket(server.url, token);
    if (generation !== this.#generation || this.#socket !== null) return;
    if (!ticket.ok) return this.#retry(ticket.error);
    // Before the socket exists: its handlers must be set in the same turn as it is made.
    const hello = await helloFrame(settings, id);
    if (generation !== this.#generation || this.#socket !== null) return;
    let socket: Carrier;
    try {
      socket = this.#polls(settings)
        ? new PollingSocket(server.url, id, token)
        : new WebSocket(extensionSocketUrl(server.url, id, ticket.ticket));
    } catch (error) {
      return this.#publish("offline", `cannot open a connection: ${String(error)}`);
    }
    this.#socket = socket;
    this.#publish("connecting");
    this.#expectAnswer();
    const current = () => this.#socket === socket;
    let opened = false;

    socket.onopen = () => {
      if (!current()) return;
      opened = true;
      socket.send(hello);
    };
    socket.onmessage = (event: MessageEvent) => {
      if (current()) this.#receive(event.data);
    };
    socket.onclose = (event: { code: number; reason: string }) => {
      if (!current()) return;
      if (!opened && socket instanceof WebSocket) this.#socketFailures++;
      this.#abandon();
      this.#retry(closeReason(event, opened));
    };
  }

  /** Whether the next connection polls: by setting, or after sockets kept failing. */
  #polls(settings: Settings): boolean {
    if (settings.transport === "polling") return true;
    return settings.transport === "auto" && this.#socketFailures >= SOCKET_FAILURES_BEFORE_POLLING;
  }

  /**
   * While polling by itself, tries a WebSocket now and then: welcomed, it replaces the polling
   * (the server sends what it kept for the polls on it), else polling goes on.
   */
  #probeLater(): void {
    clearTimeout(this.#probeTimer);
    this.#probeTimer = setTimeout(() => {
      this.#probeTimer = undefined;
      void this.#probe(this.#generation);
    }, SOCKET_PROBE_MS);
  }

  async #probe(generation: number): Promise<void> {
    const [settings, credential] = await Promise.all([loadSettings(), loadCredential()]);
    const server = normalizeServerUrl(settings.serverUrl);
    const still = () => generation === this.#generation && this.#socket instanceof PollingSocket;
    if (!still() || !server.ok || settings.transport !== "auto" || credential === null) return;
    const { clientId: id, token } = credential;
    const ticket = await socketTicket(server.url, token);
    if (!still()) return;
    if (!ticket.ok) return this.#probeLater();
    const hello = await helloFrame(settings, id);
    if (!still()) return;
    let probe: WebSocket;
    try {
      probe = new WebSocket(extensionSocketUrl(server.url, id, ticket.ticket));
    } catch {
      return this.#probeLater();
    }
    probe.onopen = () => probe.send(hello);
    probe.onclose = () => {
      if (still()) this.#probeLater();
    };
    probe.onmessage = (event: MessageEvent) => {
      const welcomed = String(event.data).includes('"type":"welcome"');
      if (!welcomed || !still()) {
        probe.onclose = null;
        probe.close(1000, "not needed");
        return;
      }
      this.#adopt(probe);
    };
  }

  /** Makes a welcomed probe socket the connection, in place of the polling. */
  #adopt(socket: WebSocket): void {
    const polling = this.#socket;
    this.#socket = socket;
    this.#socketFailures = 0;
    polling?.close(1000, "a socket took over");
    const current = () => this.#socket === socket;
    socket.onmessage = (event: MessageEvent) => {
      if (current()) this.#receive(event.data);
    };
    socket.onclose = (event: CloseEvent) => {
      if (!current()) return;
      this.#abandon();
      this.#retry(closeReason(event, true));
    };
    this.#publish("online");
    // Whatever went unacknowledged over the polls is resent on the socket.
    this.#hooks.onOnline();
  }

  #receive(data: unknown): void {
    let message: ServerToExtension;
    try {
      message = JSON.parse(String(data)) as ServerToExtension;
    } catch {
      console.warn("mimo: the server sent a frame that is not JSON", data);
      return;
    }
    switch (message.type) {
      case "pong":
        clearTimeout(this.#answerTimer);
        this.#answerTimer = undefined;
        return;
      case "welcome":
        clearTimeout(this.#answerTimer);
        this.#answerTimer = undefined;
        if (this.#online) return;
        this.#online = true;
        this.#attempt = 0;
        this.#lastError = undefined;
        if (this.#socket instanceof WebSocket) this.#socketFailures = 0;
        else this.#probeLater();
        this.#publish("online");
        this.#heartbeatTimer = setInterval(() => {
          this.#socket?.send(PING_FRAME);
          this.#expectAnswer();
        }, HEARTBEAT_MS);
        this.#hooks.onOnline();
        return;
      case "error":
        // The server refused one frame; the connection itself is fine.
        console.warn(`mimo: the server refused a frame: ${message.error.code}: ${message.error.message}`);
        this.#lastError = `${message.error.code}: ${message.error.message}`;
        this.#publish(this.#online ? "online" : "connecting");
        return;
      case "browser_action":
        this.#hooks.onAction(message.action);
        return;
      case "task_state":
        this.#hooks.onTaskState(message.taskId, message.status, message.bridge === true);
        return;
      case "result_ack":
        this.#hooks.onResultAck(message);
        return;
      case "action_query":
        this.#hooks.onActionQuery(message);
        return;
      case "confirmation_requested":
        this.#hooks.onConfirmationRequested(message.taskId, message.request);
        return;
      case "confirmation_settled":
        this.#hooks.onConfirmationSettled(message.taskId, message.step);
        return;
      default:
        console.warn("mimo: unknown frame from the server", message);
    }
  }

  /** Gives the server until the timeout to welcome the connection (or answer a ping). */
  #expectAnswer(): void {
    if (this.#answerTimer !== undefined) return;
    this.#answerTimer = setTimeout(() => {
      this.#answerTimer = undefined;
      this.fail("the server did not answer in time");
    }, WELCOME_TIMEOUT_MS);
  }

  /** Closes and forgets the current socket and its timers, without scheduling anything. */
  #abandon(): void {
    this.#generation++;
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#answerTimer);
    clearTimeout(this.#probeTimer);
    clearInterval(this.#heartbeatTimer);
    this.#retryTimer = this.#answerTimer = this.#heartbeatTimer = undefined;
    const socket = this.#socket;
    this.#socket = null;
    if (socket !== null && socket.readyState !== WebSocket.CLOSED) socket.close(1000, "reconnecting");
    if (this.#online) {
      this.#online = false;
      this.#hooks.onOffline();
    }
  }

  #retry(reason: string): void {
    const delay = backoffDelay(this.#attempt++, Math.random());
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      this.#open();
    }, delay);
    this.#publish("offline", reason, Date.now() + delay);
  }

  #publish(state: ConnectionState, error?: string, retryAt?: number): void {
    if (error !== undefined) this.#lastError = error;
    const since = this.#status?.state === state ? this.#status.since : Date.now();
    const status: ConnectionStatus = { state, since };
    if (state === "online") status.transport = this.transport;
    if (this.#lastError !== undefined) status.lastError = this.#lastError;
    if (retryAt !== undefined) status.retryAt = retryAt;
    this.#status = status;
    saveStatus(status).catch((e: unknown) => console.error("mimo: cannot store the connection state", e));
  }
}
