/**
 * Which status-only updates of a BackupSchedule the controller made itself. Its own status write comes
 * back through the watch as an update that keeps `generation`; reconciling it again would only find
 * the status it just wrote. Anyone else's status write (a `kubectl edit --subresource=status`, a
 * restored backup, a script setting `Ready=True` on an invalid schedule) must be reconciled, or it
 * stands until the next resync. So each status write remembers the resourceVersion the API server
 * answered with, and an update carrying another one is someone else's.
 *
 * The answer and the watch event travel on different connections: the event may arrive first. While a
 * key's write is in flight its status-only updates are held, and decided when the answer says which
 * version was ours. The controller never reconciles one key twice at once, so a key has at most one
 * write in flight; what is kept is one entry per key with a write not yet seen back (bounded by the
 * number of schedules, dropped when the schedule is).
 */

/** See the module doc. */
export class OwnStatusWrites {
  /** Per key, the resourceVersion our last status write stored, until its watch event is seen. */
  readonly #written = new Map<string, string>();
  /** Per key with a status write in flight, the resourceVersions of status-only updates seen meanwhile. */
  readonly #inFlight = new Map<string, string[]>();
  readonly #onForeign: (key: string) => void;

  /** `onForeign` is called with a key whose status someone else changed, once that is known. */
  constructor(onForeign: (key: string) => void) {
    this.#onForeign = onForeign;
  }

  /**
   * Runs the status write of `key` and remembers the resourceVersion of what it stored (`versionOf` of
   * the answer). Resolves or rejects as the write does.
   */
  async track<T>(key: string, write: () => Promise<T>, versionOf: (stored: T) => string | undefined): Promise<T> {
    const seen: string[] = [];
    this.#inFlight.set(key, seen);
    let stored: T;
    try {
      stored = await write();
    } catch (err) {
      this.#inFlight.delete(key);
      // Nothing of ours was stored: whatever came meanwhile was someone else's.
      if (seen.length > 0) this.#onForeign(key);
      throw err;
    }
    this.#inFlight.delete(key);
    const ours = versionOf(stored);
    const foreign = seen.filter((version) => version !== ours);
    if (ours !== undefined && foreign.length === seen.length) this.#written.set(key, ours);
    else this.#written.delete(key);
    if (foreign.length > 0) this.#onForeign(key);
    return stored;
  }

  /**
   * Whether a status-only update of `key` to `resourceVersion` was written by someone else: true means
   * reconcile it now. While the key's own write is in flight it answers false and decides when the
   * write returns (calling `onForeign` then).
   */
  isForeign(key: string, resourceVersion: string | undefined): boolean {
    const seen = this.#inFlight.get(key);
    if (seen) {
      if (resourceVersion !== undefined) seen.push(resourceVersion);
      else this.#onForeign(key);
      return false;
    }
    if (resourceVersion !== undefined && this.#written.get(key) === resourceVersion) {
      this.#written.delete(key);
      return false;
    }
    return true;
  }

  /** Drops what is remembered of `key` (its schedule was deleted). */
  forget(key: string): void {
    this.#written.delete(key);
  }

  /** Keys remembered (for tests and bounds). */
  get size(): number {
    return this.#written.size + this.#inFlight.size;
  }
}
