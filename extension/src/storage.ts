// The extension's state in `chrome.storage.local`: the settings the person edits on the
// options page, the persistent client id, and the connection status the service worker
// publishes for the options page.
import { isValidClientId } from "./config.ts";

/** What the options page edits. Empty strings mean "not set". */
export type Settings = {
  serverUrl: string;
  /** This browser's own credential from pairing (`mimo_ext_…`), never the deployment token. */
  token: string;
  /** Empty means the default name ("Chromium on Linux"). */
  name: string;
  /**
   * How to reach the server: `auto` opens a WebSocket and falls back to polling over plain
   * requests where sockets are blocked; `websocket` or `polling` only that way.
   */
  transport: Transport;
};

export type Transport = "auto" | "websocket" | "polling";
const TRANSPORTS: readonly Transport[] = ["auto", "websocket", "polling"];

export const SETTING_KEYS = ["serverUrl", "token", "name", "transport"] as const satisfies ReadonlyArray<keyof Settings>;

export type ConnectionState = "connecting" | "online" | "offline";

export type ConnectionStatus = {
  state: ConnectionState;
  /** Why the last connection failed or what the server last refused. */
  lastError?: string;
  /** When the state last changed, in milliseconds since the Unix epoch. */
  since: number;
  /** While offline: when the next attempt is due. */
  retryAt?: number;
  /** While online: how the connection is carried. */
  transport?: "websocket" | "polling";
};

export const STATUS_KEY = "connection";
export const CLIENT_ID_KEY = "clientId";

export async function loadSettings(): Promise<Settings> {
  const stored = await chrome.storage.local.get<Partial<Settings>>([...SETTING_KEYS]);
  return {
    serverUrl: typeof stored.serverUrl === "string" ? stored.serverUrl : "",
    token: typeof stored.token === "string" ? stored.token : "",
    name: typeof stored.name === "string" ? stored.name : "",
    transport: TRANSPORTS.find((t) => t === stored.transport) ?? "auto",
  };
}

export async function saveSettings(settings: Settings): Promise<void> {
  await chrome.storage.local.set<Settings>(settings);
}

/** The client id, if the service worker has created it. */
export async function storedClientId(): Promise<string | undefined> {
  const stored = await chrome.storage.local.get<{ clientId?: unknown }>(CLIENT_ID_KEY);
  return isValidClientId(stored.clientId) ? stored.clientId : undefined;
}

/** This browser profile's id towards the server, created on first use and kept forever. */
export async function clientId(): Promise<string> {
  const stored = await storedClientId();
  if (stored !== undefined) return stored;
  const created = crypto.randomUUID();
  await chrome.storage.local.set({ [CLIENT_ID_KEY]: created });
  return created;
}

export async function loadStatus(): Promise<ConnectionStatus | undefined> {
  const stored = await chrome.storage.local.get<{ connection?: ConnectionStatus }>(STATUS_KEY);
  return stored.connection;
}

export async function saveStatus(status: ConnectionStatus): Promise<void> {
  await chrome.storage.local.set({ [STATUS_KEY]: status });
}
