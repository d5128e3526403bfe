// Protocol clients for tests: a web app socket and an extension socket, speaking the generated
// protocol types, with helpers to wait for particular events.
import WebSocket from "ws";
import type {
  BrowserAction,
  BrowserSnapshot,
  ErrorObject,
  EventEnvelope,
  ExtensionMessage,
  FrontendMessage,
  PairingCode,
  PairResponse,
  ServerToExtension,
  WsTicket,
} from "../../protocol/ts/protocol.ts";
import type { Endpoint } from "./mimo.ts";

export async function api(mimo: Endpoint, route: string, token: string | null = mimo.token): Promise<Response> {
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  return fetch(`${mimo.url}${route}`, { headers });
}

/** `POST` with a bearer token (or none), a JSON body when given. */
export async function post(mimo: Endpoint, route: string, body?: unknown, token: string | null = mimo.token): Promise<Response> {
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  return fetch(`${mimo.url}${route}`, { method: "POST", headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

/** A single-use socket ticket bought with `token` (the deployment's, or an extension's). */
export async function wsTicket(mimo: Endpoint, token: string = mimo.token): Promise<string> {
  const res = await post(mimo, "/api/ws-ticket", undefined, token);
  if (res.status !== 200) throw new Error(`ws ticket: ${res.status} ${await res.text()}`);
  return ((await res.json()) as WsTicket).ticket;
}

/** Pairs an extension as the options page does: its credential and the id the server gave it. */
export async function pairExtension(mimo: Endpoint, replaces?: string): Promise<PairResponse> {
  const issued = await post(mimo, "/api/extension/pairing-code");
  if (issued.status !== 200) throw new Error(`pairing code: ${issued.status} ${await issued.text()}`);
  const { code } = (await issued.json()) as PairingCode;
  const paired = await post(mimo, "/api/extension/pair", { code, ...(replaces !== undefined ? { replaces } : {}) }, null);
  if (paired.status !== 200) throw new Error(`pair: ${paired.status} ${await paired.text()}`);
  return (await paired.json()) as PairResponse;
}

export async function newTask(mimo: Endpoint): Promise<string> {
  const res = await api(mimo, "/api/task/id");
  if (res.status !== 200) throw new Error(`task id: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { taskId: string }).taskId;
}

/** A socket that records every frame it receives and lets a test wait for one. */
class RecordingSocket<In> {
  readonly ws: WebSocket;
  readonly received: In[] = [];
  closed: { code: number; reason: string } | null = null;
  private waiters: Array<() => void> = [];

  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.ws.on("message", (data) => {
      this.received.push(JSON.parse(String(data)) as In);
      this.wake();
    });
    this.ws.on("close", (code, reason) => {
      this.closed = { code, reason: String(reason) };
      this.wake();
    });
  }

  private wake() {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  opened(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.ws.readyState === WebSocket.OPEN) return resolve();
      this.ws.once("open", () => resolve());
      this.ws.once("error", reject);
      this.ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    });
  }

  /** Resolves with the first received frame (from index `from`) that matches. */
  async waitFor(match: (frame: In) => boolean, what = "frame", timeoutMs = 10_000, from = 0): Promise<In> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.slice(from).find(match);
      if (found !== undefined) return found;
      if (this.closed) throw new Error(`socket closed (${this.closed.code}) while waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.received.slice(-5))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /**
   * The code of the close frame the server sent, once the closing handshake is done, even
   * before the TCP connection ends (ws fires `close` only then, up to 30 s later when the
   * server leaves the connection open; browsers give up on waiting much sooner).
   */
  async serverCloseCode(timeoutMs = 5000): Promise<number | undefined> {
    const internals = this.ws as unknown as { _closeFrameReceived: boolean; _closeCode: number };
    for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
      if (this.closed) return this.closed.code;
      if (internals._closeFrameReceived) return internals._closeCode;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return undefined;
  }

  sendRaw(data: string | Buffer) {
    this.ws.send(data);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return resolve();
      this.ws.once("close", () => resolve());
      this.ws.close();
    });
  }
}

export class WebClient extends RecordingSocket<EventEnvelope> {
  /** A viewer's socket: the web app's, or (`token`: an extension's credential) its side panel's. */
  static async connect(mimo: Endpoint, taskId: string, lastSeq?: number, token: string = mimo.token): Promise<WebClient> {
    const q = new URLSearchParams({ taskId, ticket: await wsTicket(mimo, token) });
    if (lastSeq !== undefined) q.set("lastSeq", String(lastSeq));
    const client = new WebClient(`${mimo.url.replace("http", "ws")}/ws/web?${q}`);
    await client.opened();
    return client;
  }

  send(message: FrontendMessage) {
    this.sendRaw(JSON.stringify(message));
  }

  /** Sequenced (history) events received so far. */
  history(): EventEnvelope[] {
    return this.received.filter((e) => e.seq !== undefined);
  }

  lastSeq(): number {
    return Math.max(0, ...this.history().map((e) => e.seq ?? 0));
  }

  /** The assistant text of message `messageId` as streamed so far. */
  assistantText(messageId: string): string {
    return this.received
      .filter((e) => e.type === "chatDelta" && e.messageId === messageId)
      .map((e) => (e.type === "chatDelta" ? e.delta : ""))
      .join("");
  }

  /** Waits for the assistant reply that finishes after index `from` and returns its text. */
  async reply(from = 0, timeoutMs = 15_000): Promise<{ messageId: string; text: string }> {
    const done = await this.waitFor(
      (e) => e.type === "chatDelta" && e.finished,
      "a finished assistant message",
      timeoutMs,
      from,
    );
    const messageId = done.type === "chatDelta" ? done.messageId : "";
    return { messageId, text: this.assistantText(messageId) };
  }
}

export class ExtensionClient extends RecordingSocket<ServerToExtension> {
  readonly clientId: string;
  /** Its own credential, from pairing. */
  readonly token: string;

  private constructor(url: string, clientId: string, token: string) {
    super(url);
    this.clientId = clientId;
    this.token = token;
  }

  /** Pairs (unless given its credential) and connects, named `name` (by default after `label`). */
  static async connect(mimo: Endpoint, label: string, name = `Browser ${label}`, paired?: PairResponse): Promise<ExtensionClient> {
    const { clientId, token } = paired ?? (await pairExtension(mimo));
    const q = new URLSearchParams({ clientId, ticket: await wsTicket(mimo, token) });
    const client = new ExtensionClient(`${mimo.url.replace("http", "ws")}/ws/extension?${q}`, clientId, token);
    await client.opened();
    client.send({
      type: "hello",
      clientId,
      name,
      browser: { name: "Chromium", version: "156", userAgent: "test" },
      extensionVersion: "0.1.0",
    });
    await client.waitFor((m) => m.type === "welcome", "welcome");
    return client;
  }

  /** Its credential, to connect again as the same extension. */
  get credential(): PairResponse {
    return { clientId: this.clientId, token: this.token };
  }

  send(message: ExtensionMessage) {
    this.sendRaw(JSON.stringify(message));
  }

  sync(snapshot: BrowserSnapshot) {
    this.send({ type: "full_state_sync", snapshot });
  }

  /**
   * Answers every `browser_action` as an extension would: acks it at once, then sends what
   * `answer` gives it — a result or an error — or, given nothing, leaves it running.
   */
  serve(answer: (action: BrowserAction) => { result: unknown } | { error: ErrorObject } | undefined): void {
    this.ws.on("message", (data) => {
      const frame = JSON.parse(String(data)) as ServerToExtension;
      if (frame.type !== "browser_action") return;
      const { action } = frame;
      const ids = { actionId: action.actionId, attempt: action.attempt, taskId: action.taskId };
      this.send({ type: "action_ack", ...ids });
      const answered = answer(action);
      if (answered === undefined) return;
      const outcome = "result" in answered ? { ...ids, status: "ok" as const, result: answered.result, warnings: [] } : { ...ids, status: "error" as const, error: answered.error, warnings: [] };
      this.send({ type: "action_result", outcome });
    });
  }
}

/**
 * A stand-in's `browser_observe` result: the page's element list (`index`, a DOM index result)
 * and readable `text`, without a screenshot (a stand-in has none to give).
 */
export function observation(index: unknown, text: string) {
  return {
    screenshot: { error: { code: "CDP_UNAVAILABLE", message: "no screenshot here", retryable: false }, partial: false, warnings: [] },
    readability: { result: { text, title: "Shop", contentLengthBytes: text.length, truncated: false }, partial: false, warnings: [] },
    domIndex: { result: index, partial: false, warnings: [] },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
