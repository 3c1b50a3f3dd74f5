/**
 * An indexed binary min-heap keyed by a number, with O(log n) update of an existing entry: what
 * client-go's delaying queue builds from `container/heap` plus its `knownEntries` map.
 * @internal
 */
export class KeyedMinHeap<K> {
  readonly #keys: K[] = [];
  readonly #priorities: number[] = [];
  readonly #positions = new Map<K, number>();
  #sequence = 0;
  // Insertion sequence breaks ties, so entries with equal priority come out first-in first-out.
  readonly #sequences: number[] = [];

  get size(): number {
    return this.#keys.length;
  }

  has(key: K): boolean {
    return this.#positions.has(key);
  }

  priorityOf(key: K): number | undefined {
    const at = this.#positions.get(key);
    return at === undefined ? undefined : this.#priorities[at];
  }

  /** Inserts `key`, or moves it to `priority` when it is already present. */
  set(key: K, priority: number): void {
    const at = this.#positions.get(key);
    if (at !== undefined) {
      const old = this.#priorities[at]!;
      this.#priorities[at] = priority;
      if (priority < old) this.#up(at);
      else this.#down(at);
      return;
    }
    this.#keys.push(key);
    this.#priorities.push(priority);
    this.#sequences.push(this.#sequence++);
    this.#positions.set(key, this.#keys.length - 1);
    this.#up(this.#keys.length - 1);
  }

  /** The smallest entry, without removing it. */
  peek(): { key: K; priority: number } | undefined {
    if (this.#keys.length === 0) return undefined;
    return { key: this.#keys[0]!, priority: this.#priorities[0]! };
  }

  /** Removes and returns the smallest entry. */
  pop(): { key: K; priority: number } | undefined {
    const top = this.peek();
    if (!top) return undefined;
    const last = this.#keys.length - 1;
    this.#swap(0, last);
    this.#keys.pop();
    this.#priorities.pop();
    this.#sequences.pop();
    this.#positions.delete(top.key);
    if (this.#keys.length > 0) this.#down(0);
    return top;
  }

  clear(): void {
    this.#keys.length = 0;
    this.#priorities.length = 0;
    this.#sequences.length = 0;
    this.#positions.clear();
  }

  #less(i: number, j: number): boolean {
    const pi = this.#priorities[i]!;
    const pj = this.#priorities[j]!;
    return pi < pj || (pi === pj && this.#sequences[i]! < this.#sequences[j]!);
  }

  #swap(i: number, j: number): void {
    if (i === j) return;
    const ki = this.#keys[i]!;
    const kj = this.#keys[j]!;
    this.#keys[i] = kj;
    this.#keys[j] = ki;
    const p = this.#priorities[i]!;
    this.#priorities[i] = this.#priorities[j]!;
    this.#priorities[j] = p;
    const s = this.#sequences[i]!;
    this.#sequences[i] = this.#sequences[j]!;
    this.#sequences[j] = s;
    this.#positions.set(kj, i);
    this.#positions.set(ki, j);
  }

  #up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(i, parent)) return;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #down(i: number): void {
    const n = this.#keys.length;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) return;
      const right = left + 1;
      const smallest = right < n && this.#less(right, left) ? right : left;
      if (!this.#less(smallest, i)) return;
      this.#swap(i, smallest);
      i = smallest;
    }
  }
}
