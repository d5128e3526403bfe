// Where the bridge's settings live. The address is in `chrome.storage.local`, which content
// scripts can read (recent Chromium can take the whole area from them with `setAccessLevel`,
// earlier versions that the manifest allows only `chrome.storage.session`), so the secret is
// not: the options page turns it into a non-extractable HMAC key (bridge.ts) and keeps that in
// the extension's own IndexedDB, which only its pages and service worker reach (a content
// script runs with the page's origin, and so its storage), across restarts. Even they can only
// prove with the key, never read the secret back. `bridgeKeyId` in `chrome.storage.local` changes
// with the key, so that the service worker, which listens there, connects anew.
import { importBridgeKey } from "./bridge.ts";
import type { BridgeSettings } from "./bridge.ts";

const DATABASE = "mimo-bridge";
const STORE = "keys";
const KEY = "hmac";

/** What `chrome.storage.local` holds of the bridge settings. */
type Stored = { bridgeUrl?: string; bridgeKeyId?: string; bridgeSecret?: unknown };

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function keys<T>(mode: IDBTransactionMode, run: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const open = indexedDB.open(DATABASE, 1);
  open.onupgradeneeded = () => open.result.createObjectStore(STORE);
  const db = await request(open);
  try {
    const transaction = db.transaction(STORE, mode);
    const result = request(run(transaction.objectStore(STORE)));
    // Done only once written: the service worker reads it as soon as `bridgeKeyId` changes.
    await new Promise<void>((resolve, reject) => {
      transaction.oncomplete = () => resolve();
      transaction.onerror = transaction.onabort = () => reject(transaction.error);
    });
    return await result;
  } finally {
    db.close();
  }
}

async function storeKey(key: CryptoKey | null): Promise<void> {
  if (key === null) await keys("readwrite", (store) => store.delete(KEY));
  else await keys("readwrite", (store) => store.put(key, KEY));
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
  const key = stored.bridgeKeyId ? ((await keys("readonly", (store) => store.get(KEY))) as CryptoKey | undefined) : undefined;
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
