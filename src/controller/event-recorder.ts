/**
 * Kubernetes Events about BackupSchedules (`kubectl describe` shows them), recorded the way client-go's
 * `record.EventRecorder` does: a new Event the first time, and for the same object, type, reason and
 * message again, a PATCH of `count` and `lastTimestamp` on the existing Event instead of a new object.
 *
 * Recording never fails a reconcile: Events are best effort, sent in the background, errors logged.
 * Like client-go's broadcaster, one Event is written at a time from a bounded backlog (dropping when
 * full), so memory stays bounded. Unlike it, Events are a low-priority lane: they yield to the
 * reconciles' own writes (while `deferWhile()` says the controller is busy, an Event waits, at most
 * `maxDeferMs`), and a global token bucket paces them (client-go's correlator caps them per object).
 * The API server's capacity is better spent converging objects than describing it: measured on 1,000
 * new schedules, Events sent alongside the reconciles' writes made convergence ~40 % slower.
 *
 * The budget is shared fairly between namespaces, since one operator serves many tenants (issue 41):
 * each namespace has its own queue of at most `namespaceBacklog` Events (more are dropped, reported to
 * `onDrop` as `budget`), and the namespaces with Events waiting take turns, one Event each. When the
 * whole backlog is full, the namespace with the most Events waiting loses its newest to make room for
 * one from a namespace with fewer (`backlog`). So a tenant's flood fills only its own queue, and
 * another tenant's Event waits for at most one Event of each other namespace with Events waiting.
 */
import type { Clock } from '../runtime/clock.ts';
import { realClock } from '../runtime/clock.ts';
import { isNotFound } from '../kube/api-status-error.ts';
import type { KubeObject } from '../kube/object.ts';
import { BucketRateLimiter } from '../runtime/rate-limiters.ts';
import { formatTime } from '../pure/status.ts';

/** Event types of core/v1 Events. */
export type EventType = 'Normal' | 'Warning';

/** Why an Event was not recorded: its namespace's share of the backlog was full, or the whole backlog was. */
export type EventDropReason = 'budget' | 'backlog';

/** Records Events about objects. */
export interface EventRecorder {
  /** Records that `reason` happened to `object`; returns at once. */
  event(object: KubeObject, type: EventType, reason: string, message: string): void;
}

/** The two calls the recorder makes (core/v1 events). */
export interface EventWriter {
  create(event: KubeObject): Promise<unknown>;
  /** JSON merge patch of an existing Event. */
  patch(ref: { namespace: string; name: string }, patch: unknown): Promise<unknown>;
}

/** Options for {@link KubeEventRecorder}. */
export interface KubeEventRecorderOptions {
  /** Creates and patches Events. */
  readonly writer: EventWriter;
  /** `source.component` / `reportingComponent`. @default 'backupschedule-controller' */
  readonly component?: string;
  /** `reportingInstance` (the pod name). @default '' */
  readonly instance?: string;
  /** Distinct (object, type, reason, message) entries remembered for aggregation. @default 4096 */
  readonly cacheSize?: number;
  /** Events waiting to be written, all namespaces together; see the module doc for which are dropped. @default 10_000 */
  readonly maxBacklog?: number;
  /** Events of one namespace waiting to be written; more are dropped (and reported to `onDrop`). @default 50 */
  readonly namespaceBacklog?: number;
  /** While this returns true, Events wait (the controller has writes to make first). @default never busy */
  readonly deferWhile?: () => boolean;
  /** The longest an Event waits for `deferWhile` to turn false. @default 30_000 */
  readonly maxDeferMs?: number;
  /** How often a deferred Event checks `deferWhile` again, in ms. @default 50 */
  readonly deferPollMs?: number;
  /** Events per second written at most, all namespaces together. @default 5 */
  readonly eventsPerSecond?: number;
  /** Events that may go out back to back before the pace bites. @default 50 */
  readonly eventBurst?: number;
  /** Called when an Event is dropped: its namespace's share, or the whole backlog, is full. @default ignore */
  readonly onDrop?: (event: { reason: string; message: string }, why: EventDropReason) => void;
  /** Called with every failed Event write. @default ignore */
  readonly onError?: (err: unknown, event: KubeObject) => void;
  /** Time source for timestamps and names. @default realClock */
  readonly clock?: Clock;
}

interface Recorded {
  readonly namespace: string;
  readonly name: string;
  count: number;
}

/** An Event waiting to be written: when it was recorded, and how to write it. */
interface Pending {
  readonly at: number;
  readonly reason: string;
  readonly message: string;
  readonly send: () => Promise<void>;
}

const MAX_NAME = 253;
/** Longest Event message written (kube-apiserver accepts more; `kubectl describe` shows one line of it). */
const MAX_MESSAGE = 1024;

/** An {@link EventRecorder} writing core/v1 Events through the API. */
export class KubeEventRecorder implements EventRecorder {
  readonly #writer: EventWriter;
  readonly #component: string;
  readonly #instance: string;
  readonly #cacheSize: number;
  readonly #onError: (err: unknown, event: KubeObject) => void;
  readonly #clock: Clock;
  readonly #maxBacklog: number;
  readonly #namespaceBacklog: number;
  readonly #onDrop: (event: { reason: string; message: string }, why: EventDropReason) => void;
  readonly #pace: BucketRateLimiter<void>;
  readonly #seen = new Map<string, Recorded>();
  readonly #deferWhile: () => boolean;
  readonly #maxDeferMs: number;
  readonly #deferPollMs: number;
  /** Per namespace, its Events in order; the map's order is the namespaces' turn order. Never holds an empty queue. */
  readonly #queues = new Map<string, Pending[]>();
  #waiting = 0;
  #pump: Promise<void> | undefined;

  constructor(options: KubeEventRecorderOptions) {
    this.#writer = options.writer;
    this.#component = options.component ?? 'backupschedule-controller';
    this.#instance = options.instance ?? '';
    this.#cacheSize = options.cacheSize ?? 4096;
    this.#onError = options.onError ?? (() => {});
    this.#clock = options.clock ?? realClock;
    this.#maxBacklog = options.maxBacklog ?? 10_000;
    this.#namespaceBacklog = options.namespaceBacklog ?? 50;
    this.#deferWhile = options.deferWhile ?? (() => false);
    this.#maxDeferMs = options.maxDeferMs ?? 30_000;
    this.#deferPollMs = options.deferPollMs ?? 50;
    this.#onDrop = options.onDrop ?? (() => {});
    this.#pace = new BucketRateLimiter({ qps: options.eventsPerSecond ?? 5, burst: options.eventBurst ?? 50, clock: this.#clock });
  }

  event(object: KubeObject, type: EventType, reason: string, full: string): void {
    // Cut now, not when written: a full backlog then holds at most ~1 KB of message an Event.
    const message = full.length > MAX_MESSAGE ? `${full.slice(0, MAX_MESSAGE - 3)}...` : full;
    const meta = object.metadata;
    const namespace = meta.namespace ?? '';
    const queue = this.#queues.get(namespace) ?? [];
    if (queue.length >= this.#namespaceBacklog) {
      this.#onDrop({ reason, message }, 'budget');
      return;
    }
    if (this.#waiting >= this.#maxBacklog && !this.#dropFromLongest(queue.length)) {
      this.#onDrop({ reason, message }, 'backlog');
      return;
    }
    const key = [meta.uid ?? `${meta.namespace}/${meta.name}`, type, reason, message].join('\u0000');
    // Snapshot what the Event needs now: the object may change before the write goes out.
    const { name, uid, resourceVersion } = meta;
    const involved: KubeObject = { apiVersion: object.apiVersion, kind: object.kind, metadata: { name, namespace: meta.namespace, uid, resourceVersion } };
    const at = this.#clock.now();
    queue.push({ at, reason, message, send: () => this.#record(key, involved, type, reason, message, at) });
    this.#queues.set(namespace, queue);
    this.#waiting++;
    this.#kick();
  }

  /**
   * Makes room in a full backlog for an Event of a namespace with `length` Events waiting: drops the
   * newest Event of the namespace with the most waiting, when that is more. False when none has more.
   */
  #dropFromLongest(length: number): boolean {
    let longest: Pending[] | undefined;
    let longestNamespace = '';
    for (const [namespace, queue] of this.#queues) {
      if (queue.length > (longest?.length ?? length)) [longest, longestNamespace] = [queue, namespace];
    }
    const dropped = longest?.pop();
    if (longest === undefined || dropped === undefined) return false;
    if (longest.length === 0) this.#queues.delete(longestNamespace);
    this.#waiting--;
    this.#onDrop(dropped, 'backlog');
    return true;
  }

  #kick(): void {
    if (this.#pump) return;
    this.#pump = this.#drain().finally(() => {
      this.#pump = undefined;
      // An Event recorded between the drain's last check and here would otherwise wait for the next one.
      if (this.#waiting > 0) this.#kick();
    });
  }

  /** Resolves once every Event recorded so far was written (or failed). */
  async flush(): Promise<void> {
    while (this.#pump) await this.#pump;
  }

  /** Events recorded and not yet written. */
  get backlog(): number {
    return this.#waiting;
  }

  /** The oldest Event of the namespace whose turn it is, which goes to the end of the turns when it has more. */
  #next(): Pending | undefined {
    const [namespace, queue] = this.#queues.entries().next().value ?? [];
    const next = queue?.shift();
    if (namespace === undefined || next === undefined) return undefined;
    this.#queues.delete(namespace);
    if (queue!.length > 0) this.#queues.set(namespace, queue!);
    this.#waiting--;
    return next;
  }

  async #drain(): Promise<void> {
    while (this.#waiting > 0) {
      // Yield to the reconciles first, measured from the oldest Event waiting (the next turn's may be newer).
      while (this.#deferWhile() && this.#clock.now() - this.#oldest() < this.#maxDeferMs) await this.#clock.sleep(this.#deferPollMs);
      const wait = this.#pace.when();
      if (wait > 0) await this.#clock.sleep(wait);
      const next = this.#next();
      if (next) await next.send();
    }
  }

  /** When the oldest Event waiting was recorded. */
  #oldest(): number {
    let oldest = Infinity;
    for (const queue of this.#queues.values()) oldest = Math.min(oldest, queue[0]?.at ?? Infinity);
    return oldest;
  }

  async #record(key: string, object: KubeObject, type: EventType, reason: string, message: string, at: number): Promise<void> {
    const now = formatTime(at);
    const seen = this.#seen.get(key);
    if (seen) {
      const count = seen.count + 1;
      try {
        await this.#writer.patch({ namespace: seen.namespace, name: seen.name }, { count, lastTimestamp: now });
        seen.count = count;
        return;
      } catch (err) {
        // The Event expired (1 h TTL) or was deleted: fall through and create a fresh one.
        if (!isNotFound(err)) {
          this.#onError(err, { metadata: { namespace: seen.namespace, name: seen.name } });
          return;
        }
        this.#seen.delete(key);
      }
    }
    const event = this.#build(object, type, reason, message, now, at);
    try {
      await this.#writer.create(event);
      this.#remember(key, { namespace: event.metadata.namespace ?? '', name: event.metadata.name ?? '', count: 1 });
    } catch (err) {
      this.#onError(err, event);
    }
  }

  #remember(key: string, recorded: Recorded): void {
    this.#seen.delete(key);
    this.#seen.set(key, recorded);
    if (this.#seen.size > this.#cacheSize) {
      const oldest = this.#seen.keys().next().value;
      if (oldest !== undefined) this.#seen.delete(oldest);
    }
  }

  #build(object: KubeObject, type: EventType, reason: string, message: string, now: string, at: number): KubeObject & { metadata: { name: string; namespace: string } } {
    const meta = object.metadata;
    // client-go names Events `<object>.<unix nanos in hex>`; keep it within the 253-character limit.
    const suffix = `.${(BigInt(at) * 1_000_000n + BigInt(Math.floor(Math.random() * 1e6))).toString(16)}`;
    const name = `${(meta.name ?? 'object').slice(0, MAX_NAME - suffix.length)}${suffix}`;
    const namespace = meta.namespace ?? 'default';
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: object.apiVersion,
        kind: object.kind,
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
      },
      reason,
      message,
      type,
      source: { component: this.#component },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: this.#component,
      reportingInstance: this.#instance,
    };
  }
}
