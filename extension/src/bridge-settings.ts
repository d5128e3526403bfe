// Where the bridge's settings live. The address is in `chrome.storage.local`; the secret is
// not: the options page turns it into a non-extractable HMAC key (bridge.ts) and keeps that in
// the vault (vault.ts), out of content scripts' reach. Even the extension's own pages can only
// prove with the key, never read the secret back. `bridgeKeyId` in `chrome.storage.local`
// changes with the key, so that the service worker, which listens there, connects anew.
import { importBridgeKey } from "./bridge.ts";
import type { BridgeSettings } from "./bridge.ts";
import { vaultGet, vaultPut } from "./vault.ts";

const KEY = "bridge-hmac";

/** What `chrome.storage.local` holds of the bridge settings. */
type Stored = { bridgeUrl?: string; bridgeKeyId?: string; bridgeSecret?: unknown };

async function storeKey(key: CryptoKey | null): Promise<void> {
  await vaultPut(KEY, key);
  await chrome.storage.local.set({ bridgeKeyId: key === null ? "" : crypto.randomUUID() });
}

/** The settings the service worker connects with. */
export async function loadBridgeSettings(): Promise<BridgeSettings> {
  const stored = await chrome.storage.local.get<Stored>(["bridgeUrl", "bridgeKeyId", "bridgeSecret"]);
  if ("bridgeSecret" in stored) {
    // Kept in plain text by earlier versions: becomes a key, and is gone from where content
    // scripts could read it. Storing the key changes `bridgeKeyId`, which reconnects.
    const secret = typeof stored.bridgeSecret === "string" ? stored.bridgeSecret.trim() : "";
    await chrome.storage.local.remove("bridgeSecret");
    if (secret !== "") await storeKey(await importBridgeKey(secret));
    return loadBridgeSettings();
  }
  const key = stored.bridgeKeyId ? await vaultGet<CryptoKey>(KEY) : undefined;
  return { bridgeUrl: stored.bridgeUrl ?? "", key: key ?? null };
}

/** Whether a secret is saved (the options page says so; it cannot show it). */
export async function bridgeSecretSaved(): Promise<boolean> {
  const stored = await chrome.storage.local.get<Stored>("bridgeKeyId");
  return Boolean(stored.bridgeKeyId);
}

/** Saves the address and, unless `secret` is `null` (keep the saved one), the secret's key. */
export async function saveBridgeSettings(bridgeUrl: string, secret: string | null): Promise<void> {
  if (secret !== null) await storeKey(await importBridgeKey(secret));
  await chrome.storage.local.set({ bridgeUrl });
}

/** Forgets the secret: no bridge is used until one is saved again. */
export async function forgetBridgeSecret(): Promise<void> {
  await storeKey(null);
}
