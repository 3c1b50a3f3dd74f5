/**
 * An informer (client-go `SharedIndexInformer`): a {@link Reflector} feeding a {@link Store}, and
 * event handlers told what changed, with the old and the new object. A relist (first sync, or after
 * `410 Gone`) is turned into the differences against the cache, so deletes that happened while the
 * watch was down still reach `onDelete` with the last known object.
 */
import { objectKey, type KubeObject } from '../kube/object.ts';
import { realClock, type Clock, type TimerHandle } from './clock.ts';
import { silentLogger, type Logger } from './logger.ts';
import { Reflector, type ReflectorHealth, type ReflectorOptions, type ReflectorSink } from './reflector.ts';
import { Store, type StoreReader } from './store.ts';

/** Callbacks of an informer. Exceptions are logged and do not stop the informer. */
export interface EventHandler<T extends KubeObject> {
  onAdd?(obj: T): void;
  /** Also called on resync with `oldObj === newObj`. */
  onUpdate?(oldObj: T, newObj: T): void;
  /** The final state from the DELETE event, or the last cached object for a delete seen only by a relist. */
  onDelete?(obj: T): void;
}

/** Something the controller waits for before starting its workers. */
export interface SyncSource {
  readonly name: string;
  hasSynced(): boolean;
}

/** Options for {@link Informer}. */
export interface InformerOptions<T extends KubeObject> extends Omit<ReflectorOptions<T>, 'sink' | 'clock' | 'logger'> {
  /**
   * Re-deliver every cached object to `onUpdate` this often, jittered ±`resyncJitter`, to repair
   * anything a reconcile missed. `0` disables it. @default 36_000_000 (10 h, controller-runtime's SyncPeriod)
   */
  readonly resyncPeriodMs?: number;
  /** Fraction of random spread on the resync period. @default 0.1 */
  readonly resyncJitter?: number;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default silentLogger */
  readonly logger?: Logger;
}

/** Cache + handlers for one resource. */
export class Informer<T extends KubeObject> implements SyncSource {
  readonly name: string;
  readonly #store = new Store<T>();
  readonly #handlers: EventHandler<T>[] = [];
  readonly #reflector: Reflector<T>;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #resyncPeriodMs: number;
  readonly #resyncJitter: number;
  readonly #random: () => number;
  #resyncTimer: TimerHandle | undefined;
  #started = false;

  constructor(options: InformerOptions<T>) {
    this.name = options.name;
    this.#clock = options.clock ?? realClock;
    this.#logger = (options.logger ?? silentLogger).child({ informer: options.name });
    this.#resyncPeriodMs = options.resyncPeriodMs ?? 36_000_000;
    this.#resyncJitter = options.resyncJitter ?? 0.1;
    this.#random = options.random ?? Math.random;
    if (!(this.#resyncPeriodMs >= 0)) throw new RangeError(`resyncPeriodMs must be >= 0, got ${this.#resyncPeriodMs}`);
    const sink: ReflectorSink<T> = {
      replace: (items) => this.#replace(items),
      added: (obj) => this.#upsert(obj),
      modified: (obj) => this.#upsert(obj),
      deleted: (obj) => this.#delete(obj),
    };
    this.#reflector = new Reflector<T>({ ...options, sink, clock: this.#clock, logger: this.#logger });
  }

  /** The cache (read it; only the informer writes it). */
  get store(): StoreReader<T> & Pick<Store<T>, 'addIndex'> {
    return this.#store;
  }

  /**
   * Registers handlers. Added after the first sync, they first receive `onAdd` for every cached object
   * (as client-go does for late handlers). Returns a function that unregisters them.
   */
  addEventHandler(handler: EventHandler<T>): () => void {
    this.#handlers.push(handler);
    if (this.#reflector.hasSynced()) for (const [, obj] of this.#store.entries()) this.#call(handler, 'onAdd', obj);
    return () => {
      const i = this.#handlers.indexOf(handler);
      if (i >= 0) this.#handlers.splice(i, 1);
    };
  }

  hasSynced(): boolean {
    return this.#reflector.hasSynced();
  }

  health(): ReflectorHealth {
    return this.#reflector.health();
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#reflector.start();
    this.#scheduleResync();
  }

  async stop(): Promise<void> {
    if (this.#resyncTimer) this.#clock.clearTimeout(this.#resyncTimer);
    this.#resyncTimer = undefined;
    await this.#reflector.stop();
  }

  #scheduleResync(): void {
    if (this.#resyncPeriodMs === 0) return;
    const delay = this.#resyncPeriodMs * (1 + this.#resyncJitter * (2 * this.#random() - 1));
    this.#resyncTimer = this.#clock.setTimeout(() => {
      if (this.#reflector.hasSynced()) {
        this.#logger.debug({ count: this.#store.size }, 'resync');
        for (const [, obj] of this.#store.entries()) this.#emitUpdate(obj, obj);
      }
      this.#scheduleResync();
    }, delay);
  }

  #replace(items: T[]): void {
    const seen = new Set<string>();
    for (const obj of items) {
      const key = objectKey(obj.metadata);
      seen.add(key);
      const old = this.#store.get(key);
      if (!old) {
        this.#store.upsert(obj);
        this.#emitAdd(obj);
      } else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) {
        this.#store.upsert(obj);
        this.#emitUpdate(old, obj);
      }
    }
    const gone: string[] = [];
    for (const [key] of this.#store.entries()) if (!seen.has(key)) gone.push(key);
    for (const key of gone) {
      const old = this.#store.delete(key);
      if (old) this.#emitDelete(old);
    }
  }

  #upsert(obj: T): void {
    const old = this.#store.upsert(obj);
    if (old) this.#emitUpdate(old, obj);
    else this.#emitAdd(obj);
  }

  #delete(obj: T): void {
    this.#store.delete(objectKey(obj.metadata));
    this.#emitDelete(obj);
  }

  #emitAdd(obj: T): void {
    for (const h of this.#handlers) this.#call(h, 'onAdd', obj);
  }

  #emitUpdate(oldObj: T, newObj: T): void {
    for (const h of this.#handlers) {
      if (!h.onUpdate) continue;
      try {
        h.onUpdate(oldObj, newObj);
      } catch (err) {
        this.#logger.error({ err }, 'onUpdate handler threw');
      }
    }
  }

  #emitDelete(obj: T): void {
    for (const h of this.#handlers) this.#call(h, 'onDelete', obj);
  }

  #call(handler: EventHandler<T>, method: 'onAdd' | 'onDelete', obj: T): void {
    try {
      handler[method]?.(obj);
    } catch (err) {
      this.#logger.error({ err }, `${method} handler threw`);
    }
  }
}
