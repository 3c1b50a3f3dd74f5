/** One served request, as the library API and `GET /debug/requests` report it. */
export interface RequestLogEntry {
  time: string;
  user: string;
  verb: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  code: number;
}

/** A bounded log of requests (oldest dropped first). */
export class RequestLog {
  readonly #listeners = new Set<(entry: Readonly<RequestLogEntry>) => void>();
  #entries: RequestLogEntry[] = [];
  readonly #capacity: number;

  constructor(capacity = 200_000) {
    this.#capacity = capacity;
  }

  /** Appends an entry; the caller may still set its `code` when the response is written. */
  add(entry: RequestLogEntry): RequestLogEntry {
    this.#entries.push(entry);
    if (this.#entries.length > this.#capacity) this.#entries.splice(0, this.#entries.length - this.#capacity);
    return entry;
  }

  /** Marks `entry` (from {@link add}) as identified, its `user` set: {@link onEntry} listeners see it now. */
  identified(entry: Readonly<RequestLogEntry>): void {
    for (const listener of this.#listeners) listener(entry);
  }

  /**
   * Calls `listener` with each request once its user is known, before it is served, synchronously: a
   * test that must act at an exact request (kill a client at its n-th write) cannot poll for it, since a
   * burst of requests holds this process's event loop. Returns the unsubscribe function.
   */
  onEntry(listener: (entry: Readonly<RequestLogEntry>) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /**
   * How many entries `match` accepts, without copying any: a poll of a long log (the convergence
   * benchmark waits on it every 500 ms) must not cost the server's process a copy of every entry.
   */
  count(match: (entry: Readonly<RequestLogEntry>) => boolean): number {
    let n = 0;
    for (const e of this.#entries) if (match(e)) n++;
    return n;
  }

  /** A copy of the entries, oldest first. */
  entries(): RequestLogEntry[] {
    return this.#entries.map((e) => ({ ...e }));
  }

  clear(): void {
    this.#entries = [];
  }

  /**
   * The entries, oldest first, removed from the log in the same step: a reader that drains as it goes
   * misses none (a read followed by a separate clear loses what arrives between them).
   */
  drain(): RequestLogEntry[] {
    const out = this.#entries;
    this.#entries = [];
    return out;
  }
}
