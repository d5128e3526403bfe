// Where the extension keeps what content scripts must never read: its server credential and
// the bridge's key. `chrome.storage.local` is readable by content scripts (recent Chromium can
// take the whole area from them with `setAccessLevel`, earlier versions the manifest allows
// only `chrome.storage.session`, which a browser restart empties); the extension's own
// IndexedDB is reached only by its pages and service worker — a content script runs with the
// page's origin, and so its storage — and it lasts across restarts.

const DATABASE = "mimo-vault";
const STORE = "secrets";

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function inStore<T>(mode: IDBTransactionMode, run: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const open = indexedDB.open(DATABASE, 1);
  open.onupgradeneeded = () => open.result.createObjectStore(STORE);
  const db = await request(open);
  try {
    const transaction = db.transaction(STORE, mode);
    const result = request(run(transaction.objectStore(STORE)));
    // Done only once written: the service worker reads it as soon as storage says it changed.
    await new Promise<void>((resolve, reject) => {
      transaction.oncomplete = () => resolve();
      transaction.onerror = transaction.onabort = () => reject(transaction.error);
    });
    return await result;
  } finally {
    db.close();
  }
}

/** What the vault holds under `key`, if anything. */
export async function vaultGet<T>(key: string): Promise<T | undefined> {
  return (await inStore("readonly", (store) => store.get(key))) as T | undefined;
}

/** Keeps `value` under `key` (a `CryptoKey` stays non-extractable), or forgets it (`null`). */
export async function vaultPut(key: string, value: unknown): Promise<void> {
  if (value === null) await inStore("readwrite", (store) => store.delete(key));
  else await inStore("readwrite", (store) => store.put(value, key));
}
