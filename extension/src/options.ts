// The options page: the server address, pairing (a one-time code from the web app, traded for
// this browser's own credential) and name; the connection state the service worker publishes
// in storage, live; and the site access (all sites, or site by site).
import { BRIDGE_STATUS_KEY, DEFAULT_BRIDGE_URL, normalizeBridgeUrl } from "./bridge.ts";
import type { BridgeStatus } from "./bridge.ts";
import { bridgeSecretSaved, forgetBridgeSecret, saveBridgeSettings } from "./bridge-settings.ts";
import { defaultName, normalizeServerUrl } from "./config.ts";
import { describeBrowser } from "./identity.ts";
import type { PageMessage } from "./messages.ts";
import { mountSiteAccess } from "./site-access-view.ts";
import type { ErrorObject, PairRequest, PairResponse } from "../../protocol/ts/protocol.ts";
import { loadCredential, loadSettings, loadStatus, saveSettings, STATUS_KEY } from "./storage.ts";
import type { ConnectionStatus, Credential, Settings, Transport } from "./storage.ts";

function element<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`options.html lacks #${id}`);
  return el as T;
}

const form = element<HTMLFormElement>("settings");
const serverUrl = element<HTMLInputElement>("server-url");
const pairingCode = element<HTMLInputElement>("pairing-code");
const pairedView = element<HTMLElement>("paired");
const name = element<HTMLInputElement>("name");
const transport = element<HTMLSelectElement>("transport");
const formError = element<HTMLParagraphElement>("form-error");
const status = element<HTMLElement>("status");
const statusState = element<HTMLElement>("status-state");
const statusDetail = element<HTMLElement>("status-detail");
const clientIdView = element<HTMLElement>("client-id");

const STATE_LABELS: Record<ConnectionStatus["state"], string> = {
  online: "Online",
  connecting: "Connecting…",
  offline: "Offline",
};

let shown: ConnectionStatus | undefined;
let countdown: ReturnType<typeof setInterval> | undefined;

function renderStatus(): void {
  const current = shown ?? { state: "offline", since: Date.now() };
  status.dataset.state = current.state;
  statusState.textContent = STATE_LABELS[current.state];
  const parts: string[] = [];
  if (current.state === "online") parts.push(`since ${new Date(current.since).toLocaleTimeString()}`);
  if (current.transport === "polling") parts.push("by polling (WebSockets do not get through)");
  if (current.lastError !== undefined) parts.push(current.state === "online" ? `last refusal: ${current.lastError}` : current.lastError);
  if (current.state === "offline" && current.retryAt !== undefined) {
    const seconds = Math.max(0, Math.ceil((current.retryAt - Date.now()) / 1000));
    parts.push(seconds > 0 ? `retrying in ${seconds} s` : "retrying…");
  }
  statusDetail.textContent = parts.join(" · ");
  // A countdown only while a retry is pending.
  const counting = current.state === "offline" && current.retryAt !== undefined && current.retryAt > Date.now();
  if (counting && countdown === undefined) countdown = setInterval(renderStatus, 1000);
  if (!counting && countdown !== undefined) {
    clearInterval(countdown);
    countdown = undefined;
  }
}

function send(message: PageMessage): void {
  // Nothing answers; the promise only rejects when the worker could not be started.
  chrome.runtime.sendMessage(message).catch(() => undefined);
}

async function save(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const server = normalizeServerUrl(serverUrl.value);
  if (!server.ok) {
    formError.textContent = server.error;
    serverUrl.focus();
    return;
  }
  const [previous, held] = await Promise.all([loadSettings(), loadCredential()]);
  const code = pairingCode.value.trim();
  // A credential is for one server: another address needs a new pairing.
  const keep = held !== null && previous.serverUrl === server.url;
  if (code === "" && !keep) {
    formError.textContent = "Enter the pairing code the web app shows under “Pair a browser”.";
    pairingCode.focus();
    return;
  }
  let credential: Credential | undefined;
  if (code !== "") {
    // Pairing again with the same server keeps this browser's id (and revokes the old credential).
    const paired = await pair(server.url, code, keep ? held.token : undefined);
    if (!paired.ok) {
      formError.textContent = paired.error;
      pairingCode.focus();
      return;
    }
    credential = paired.credential;
    pairingCode.value = "";
  }
  formError.textContent = "";
  const next: Settings = { serverUrl: server.url, name: name.value.trim(), transport: transport.value as Transport };
  serverUrl.value = next.serverUrl;
  // Changed settings reach the worker through storage; unchanged ones mean "connect again now".
  const unchanged = credential === undefined && (["serverUrl", "name", "transport"] as const).every((key) => previous[key] === next[key]);
  await saveSettings(next, credential);
  renderPaired(credential ?? held);
  if (unchanged) send({ type: "mimo:reconnect" });
}

/** Trades a pairing code for this browser's credential and id (`POST /api/extension/pair`). */
async function pair(server: string, code: string, replaces: string | undefined): Promise<{ ok: true; credential: Credential } | { ok: false; error: string }> {
  const request: PairRequest = { code, ...(replaces !== undefined ? { replaces } : {}) };
  try {
    const res = await fetch(`${server}/api/extension/pair`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request) });
    const body = (await res.json().catch(() => null)) as (PairResponse & Partial<ErrorObject>) | null;
    if (res.ok && body?.token !== undefined) return { ok: true, credential: { clientId: body.clientId, token: body.token } };
    return { ok: false, error: body?.message ?? `the server answered ${res.status}` };
  } catch (error) {
    return { ok: false, error: `cannot reach the server: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function renderPaired(credential: Credential | null): void {
  pairedView.textContent = credential === null ? "Not paired yet." : "Paired with this server. A new code pairs it again.";
  if (credential !== null) clientIdView.textContent = credential.clientId;
}

const bridgeForm = element<HTMLFormElement>("bridge-settings");
const bridgeUrl = element<HTMLInputElement>("bridge-url");
const bridgeSecret = element<HTMLInputElement>("bridge-secret");
const bridgeError = element<HTMLParagraphElement>("bridge-error");
const bridgeStatus = element<HTMLElement>("bridge-status");
const bridgeForget = element<HTMLButtonElement>("bridge-forget");

/** The secret is never shown again once saved (it is not kept, only a key made from it). */
function renderSecretSaved(saved: boolean): void {
  bridgeSecret.value = "";
  bridgeSecret.placeholder = saved ? "saved; paste a new one to replace it" : "paste the secret mimo-bridge printed";
  bridgeForget.hidden = !saved;
}

function renderBridge(status: BridgeStatus | undefined): void {
  const state = status?.state ?? "off";
  bridgeStatus.dataset.state = state;
  const error = status?.lastError === undefined ? "" : `: ${status.lastError}`;
  bridgeStatus.textContent = {
    off: "No bridge set.",
    connecting: `Connecting to the bridge…`,
    connected: `Connected to the bridge serving ${status?.info?.root ?? "a folder"}.`,
    offline: `The bridge is not connected${error}. Retrying.`,
  }[state];
}

async function saveBridge(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const url = normalizeBridgeUrl(bridgeUrl.value);
  if (!url.ok) {
    bridgeError.textContent = url.error;
    bridgeUrl.focus();
    return;
  }
  bridgeError.textContent = "";
  bridgeUrl.value = url.url;
  const secret = bridgeSecret.value.trim();
  // The service worker connects again when these change.
  await saveBridgeSettings(url.url, secret === "" ? null : secret);
  renderSecretSaved(await bridgeSecretSaved());
}

async function initBridge(): Promise<void> {
  const stored = await chrome.storage.local.get<{ bridgeUrl?: string; [BRIDGE_STATUS_KEY]?: BridgeStatus }>(["bridgeUrl", BRIDGE_STATUS_KEY]);
  bridgeUrl.value = stored.bridgeUrl || DEFAULT_BRIDGE_URL;
  renderSecretSaved(await bridgeSecretSaved());
  renderBridge(stored[BRIDGE_STATUS_KEY]);
  bridgeForget.addEventListener("click", () => void forgetBridgeSecret().then(() => renderSecretSaved(false)));
  chrome.storage.onChanged.addListener((changes, area) => {
    const changed = changes[BRIDGE_STATUS_KEY];
    if (area === "local" && changed !== undefined) renderBridge(changed.newValue as BridgeStatus | undefined);
  });
  bridgeForm.addEventListener("submit", (event) => void saveBridge(event));
}

async function init(): Promise<void> {
  // The connection's status is listened to first and shown as soon as it is read, on its own:
  // the worker may connect (and store "online") while the rest of the page still loads (the
  // credential from the vault, the browser's name), and that change must not be missed.
  let changedMeanwhile = false;
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area !== "local") return;
    const changed = changes[STATUS_KEY];
    if (changed !== undefined) {
      changedMeanwhile = true;
      shown = changed.newValue as ConnectionStatus | undefined;
      renderStatus();
    }
  });
  void loadStatus().then((stored) => {
    if (changedMeanwhile) return;
    shown = stored;
    renderStatus();
  });
  const [settings, credential, self] = await Promise.all([loadSettings(), loadCredential(), describeBrowser()]);
  name.placeholder = defaultName(self.browser, self.platform);
  serverUrl.value = settings.serverUrl;
  name.value = settings.name;
  transport.value = settings.transport;
  renderPaired(credential);
  form.addEventListener("submit", (event) => void save(event));
  send({ type: "mimo:wake" });
}

void init();
void initBridge();
mountSiteAccess(element<HTMLElement>("site-access"), { currentTab: false });
