// The extension's state: the settings the person edits on the options page and the connection
// status the service worker publishes for it, in `chrome.storage.local`; the credential from
// pairing (its client id and token) in the vault (vault.ts), where content scripts cannot read it.
import { isValidClientId } from "./config.ts";
import { vaultGet, vaultPut } from "./vault.ts";

/** What the options page edits. Empty strings mean "not set". */
export type Settings = {
  serverUrl: string;
  /** Empty means the default name ("Chromium on Linux"). */
  name: string;
  /**
   * How to reach the server: `auto` opens a WebSocket and falls back to polling over plain
   * requests where sockets are blocked; `websocket` or `polling` only that way.
   */
  transport: Transport;
};

/** This browser's own credential from pairing (never the deployment token), and the id the server gave it. */
export type Credential = { clientId: string; token: string };

export type Transport = "auto" | "websocket" | "polling";
const TRANSPORTS: readonly Transport[] = ["auto", "websocket", "polling"];

/**
 * The keys in `chrome.storage.local` whose change means "connect anew": the settings, and
 * `credentialId`, which changes whenever the vault's credential does.
 */
export const SETTING_KEYS = ["serverUrl", "name", "transport", "credentialId"] as const;

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
const CREDENTIAL = "server-credential";

export async function loadSettings(): Promise<Settings> {
  const stored = await chrome.storage.local.get<Partial<Settings>>(["serverUrl", "name", "transport"]);
  return {
    serverUrl: typeof stored.serverUrl === "string" ? stored.serverUrl : "",
    name: typeof stored.name === "string" ? stored.name : "",
    transport: TRANSPORTS.find((t) => t === stored.transport) ?? "auto",
  };
}

/** Saves the settings and, when given, the credential of a new pairing (`null` forgets it). */
export async function saveSettings(settings: Settings, credential?: Credential | null): Promise<void> {
  if (credential !== undefined) await saveCredential(credential);
  await chrome.storage.local.set<Settings>(settings);
}

async function saveCredential(credential: Credential | null): Promise<void> {
  await vaultPut(CREDENTIAL, credential);
  await chrome.storage.local.set({ credentialId: credential === null ? "" : crypto.randomUUID() });
}

/** The credential this browser was paired with, if it was. */
export async function loadCredential(): Promise<Credential | null> {
  const legacy = await chrome.storage.local.get<{ token?: unknown; clientId?: unknown }>(["token", "clientId"]);
  if ("token" in legacy) {
    // Kept where content scripts could read it by earlier versions (with an id the extension
    // chose, which the server still knows it by): moved into the vault.
    await chrome.storage.local.remove(["token", "clientId"]);
    const { token, clientId } = legacy;
    if (typeof token === "string" && token !== "" && isValidClientId(clientId)) await saveCredential({ clientId, token });
  }
  const credential = await vaultGet<Credential>(CREDENTIAL);
  return credential !== undefined && isValidClientId(credential.clientId) && typeof credential.token === "string" ? credential : null;
}

/** Where the server is and this browser's credential there (empty when not paired). */
export type ServerAccess = { serverUrl: string; token: string };

export async function loadServerAccess(): Promise<ServerAccess> {
  const [settings, credential] = await Promise.all([loadSettings(), loadCredential()]);
  return { serverUrl: settings.serverUrl, token: credential?.token ?? "" };
}

export async function loadStatus(): Promise<ConnectionStatus | undefined> {
  const stored = await chrome.storage.local.get<{ connection?: ConnectionStatus }>(STATUS_KEY);
  return stored.connection;
}

export async function saveStatus(status: ConnectionStatus): Promise<void> {
  await chrome.storage.local.set({ [STATUS_KEY]: status });
}
