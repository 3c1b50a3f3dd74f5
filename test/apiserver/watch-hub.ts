import type { KubeObject } from '../../src/kube/object.ts';

/** One change as the storage recorded it (kube's `watchCacheEvent`). */
export interface StoredEvent {
  readonly rv: number;
  /** `group/resource` of the object. */
  readonly gr: string;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: KubeObject;
  /** The object before a MODIFIED or DELETED, so selector watches can tell enter/leave. */
  readonly prev: KubeObject | undefined;
}

/** A live watch as the hub sees it. */
export interface WatchSubscriber {
  readonly gr: string;
  /** Called synchronously for every event of `gr` after the watch's start version. */
  deliver(event: StoredEvent): void;
  /** Ends the stream (closeWatches). */
  close(): void;
}

/** The result of asking to watch from a resourceVersion. */
export type WatchStart =
  | { readonly ok: true; readonly replay: StoredEvent[] }
  | { readonly ok: false; readonly oldestRetained: number };

/**
 * The change history (a bounded ring like kube's watch cache) and the live subscribers. History is
 * global across resources: its floor is the newest version no longer retained, and a watch from a
 * version below the floor must relist (410 Expired).
 */
export class WatchHub {
  readonly #ring: (StoredEvent | undefined)[];
  #start = 0;
  #size = 0;
  /** Events with rv <= floor are gone. */
  #floor = 0;
  readonly #subscribers = new Map<string, Set<WatchSubscriber>>();

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new TypeError(`watchHistorySize must be a positive integer, got ${capacity}`);
    this.#ring = new Array<StoredEvent | undefined>(capacity);
  }

  /** The newest resourceVersion no longer replayable. */
  get floor(): number {
    return this.#floor;
  }

  /** Records an event and hands it to the live subscribers of its resource. */
  publish(event: StoredEvent): void {
    const capacity = this.#ring.length;
    if (this.#size === capacity) {
      const evicted = this.#ring[this.#start];
      if (evicted) this.#floor = evicted.rv;
      this.#start = (this.#start + 1) % capacity;
      this.#size--;
    }
    this.#ring[(this.#start + this.#size) % capacity] = event;
    this.#size++;
    const subs = this.#subscribers.get(event.gr);
    if (subs) for (const s of [...subs]) s.deliver(event);
  }

  /**
   * Subscribes from `fromRv` (exclusive): returns the retained events to replay first, or the
   * oldest retained version when `fromRv` has been compacted away.
   */
  subscribe(sub: WatchSubscriber, fromRv: number): WatchStart {
    if (fromRv < this.#floor) return { ok: false, oldestRetained: this.#floor + 1 };
    const replay: StoredEvent[] = [];
    for (let i = 0; i < this.#size; i++) {
      const e = this.#ring[(this.#start + i) % this.#ring.length];
      if (e && e.rv > fromRv && e.gr === sub.gr) replay.push(e);
    }
    let subs = this.#subscribers.get(sub.gr);
    if (!subs) this.#subscribers.set(sub.gr, (subs = new Set()));
    subs.add(sub);
    return { ok: true, replay };
  }

  /** Retained events of `gr` newer than `rv`, oldest first (undefined when `rv` is below the floor). */
  eventsAfter(rv: number, gr: string): StoredEvent[] | undefined {
    if (rv < this.#floor) return undefined;
    const out: StoredEvent[] = [];
    for (let i = 0; i < this.#size; i++) {
      const e = this.#ring[(this.#start + i) % this.#ring.length];
      if (e && e.rv > rv && e.gr === gr) out.push(e);
    }
    return out;
  }

  unsubscribe(sub: WatchSubscriber): void {
    this.#subscribers.get(sub.gr)?.delete(sub);
  }

  /** Drops every retained event: any watch from an older version gets 410. */
  compact(currentRv: number): void {
    this.#ring.fill(undefined);
    this.#start = 0;
    this.#size = 0;
    this.#floor = currentRv;
  }

  /** Ends every live watch. */
  closeAll(): void {
    for (const subs of this.#subscribers.values()) for (const s of [...subs]) s.close();
  }
}
