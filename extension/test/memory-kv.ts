import type { KeyValue } from "../src/action-log.ts";

/** `chrome.storage.local` as a map, with JSON copies like Chrome's. */
export class MemoryKv implements KeyValue {
  data = new Map<string, string>();
  writes = 0;
  async get(keys: string[]): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const k of keys) if (this.data.has(k)) out[k] = JSON.parse(this.data.get(k)!);
    return out;
  }
  async set(items: Record<string, unknown>): Promise<void> {
    this.writes++;
    for (const [k, v] of Object.entries(items)) this.data.set(k, JSON.stringify(v));
  }
  async remove(keys: string[]): Promise<void> {
    for (const k of keys) this.data.delete(k);
  }
}
