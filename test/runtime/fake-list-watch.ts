/**
 * A scripted LIST/WATCH source for reflector tests: every call must have been expected
 * (`expectList` / `expectWatch`); an unexpected call throws and is recorded in `unexpected`, which
 * tests assert empty.
 */
import { ApiStatusError } from '../../src/kube/api-status-error.ts';
import type { KubeList, KubeObject, StatusBody, WatchEvent } from '../../src/kube/object.ts';
import type { ListOptions, WatchOptions } from '../../src/kube/resource-client.ts';
import type { ListWatchSource } from '../../src/runtime/list-watch-source.ts';

/** A watch stream the test drives. */
export class FakeWatch<T extends KubeObject> implements AsyncIterable<WatchEvent<T>> {
  options: WatchOptions | undefined;
  readonly #queue: (WatchEvent<T> | { end: true } | { error: Error })[] = [];
  #wake: (() => void) | undefined;
  closedByClient = false;

  push(event: WatchEvent<T>): this {
    this.#queue.push(event);
    this.#wake?.();
    return this;
  }
  end(): this {
    this.#queue.push({ end: true });
    this.#wake?.();
    return this;
  }
  fail(error: Error): this {
    this.#queue.push({ error });
    this.#wake?.();
    return this;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    const signal = this.options?.signal;
    try {
      for (;;) {
        while (this.#queue.length === 0) {
          if (signal?.aborted) return;
          await new Promise<void>((resolve) => {
            this.#wake = resolve;
            signal?.addEventListener('abort', () => resolve(), { once: true });
          });
          this.#wake = undefined;
        }
        const item = this.#queue.shift()!;
        if ('end' in item) return;
        if ('error' in item) throw item.error;
        yield item;
      }
    } finally {
      if (signal?.aborted) this.closedByClient = true;
    }
  }
}

type ListAnswer<T extends KubeObject> = KubeList<T> | ApiStatusError | Error;

export function obj(name: string, rv: string, extra: Partial<KubeObject> = {}, namespace = 'ns'): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, resourceVersion: rv, uid: `uid-${name}` }, ...extra };
}

export function page<T extends KubeObject>(items: T[], resourceVersion: string, cont?: string): KubeList<T> {
  return { metadata: { resourceVersion, ...(cont ? { continue: cont } : {}) }, items };
}

export function errorEvent(status: StatusBody): WatchEvent<KubeObject> {
  return { type: 'ERROR', object: status };
}

/** The scripted source. */
export class FakeListWatch<T extends KubeObject = KubeObject> implements ListWatchSource<T> {
  readonly #lists: ListAnswer<T>[] = [];
  readonly #watches: FakeWatch<T>[] = [];
  readonly listCalls: ListOptions[] = [];
  readonly watchCalls: WatchOptions[] = [];
  readonly unexpected: string[] = [];
  #listWaiters: (() => void)[] = [];

  expectList(answer: ListAnswer<T>): this {
    this.#lists.push(answer);
    return this;
  }

  /** Queues a watch; returns it so the test can push events. */
  expectWatch(): FakeWatch<T> {
    const w = new FakeWatch<T>();
    this.#watches.push(w);
    return w;
  }

  async list(options: ListOptions): Promise<KubeList<T>> {
    this.listCalls.push(options);
    for (const wake of this.#listWaiters.splice(0)) wake();
    const answer = this.#lists.shift();
    if (!answer) {
      this.unexpected.push(`list(${JSON.stringify(options)})`);
      throw new Error('unexpected list call');
    }
    if (answer instanceof Error) throw answer;
    // A fresh copy: the reflector's transform mutates objects.
    return structuredClone(answer);
  }

  watch(options: WatchOptions): AsyncIterable<WatchEvent<T>> {
    const { signal, ...rest } = options;
    this.watchCalls.push(rest);
    const w = this.#watches.shift();
    if (!w) {
      this.unexpected.push(`watch(${JSON.stringify(rest)})`);
      return {
        [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('unexpected watch call')) }),
      };
    }
    w.options = options;
    return w;
  }
}
