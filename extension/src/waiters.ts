// Promises for the next value told under a key: a dialog opening in a tab (dialogs.ts), a tab
// joining a task (task-tabs.ts). Pure: tested under node:test through its users.

export class Waiters<K, V> {
  readonly #waiting = new Map<K, Set<(value: V) => void>>();

  /** Tells everyone watching `key` of `value`. */
  tell(key: K, value: V): void {
    for (const waiter of this.#waiting.get(key) ?? []) waiter(value);
  }

  /** The next value told under `key` from now on; `cancel` stops watching. */
  watch(key: K): { next: Promise<V>; cancel(): void } {
    let waiter!: (value: V) => void;
    const next = new Promise<V>((resolve) => (waiter = resolve));
    const set = this.#waiting.get(key) ?? new Set();
    set.add(waiter);
    this.#waiting.set(key, set);
    return {
      next,
      cancel: () => {
        set.delete(waiter);
        if (set.size === 0 && this.#waiting.get(key) === set) this.#waiting.delete(key);
      },
    };
  }
}
