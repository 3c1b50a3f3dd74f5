/**
 * One informer per watched namespace (or one for all namespaces), read as one cache: what a controller
 * limited to some namespaces (`--namespace`, repeated) reads instead of a single cluster-wide informer.
 */
import type { KubeObject } from '../kube/object.ts';
import type { Informer } from './informer.ts';

/** Informers of one resource, one per namespace (or one for all), looked up by an object's namespace. */
export class NamespacedInformers<T extends KubeObject> {
  readonly #byNamespace = new Map<string | undefined, Informer<T>>();

  /** `make` is called once per namespace, or once with `undefined` when `namespaces` is empty (all namespaces). */
  constructor(namespaces: readonly string[], make: (namespace: string | undefined) => Informer<T>) {
    for (const ns of namespaces.length > 0 ? namespaces : [undefined]) this.#byNamespace.set(ns, make(ns));
  }

  /** Every informer of the set. */
  get all(): Informer<T>[] {
    return [...this.#byNamespace.values()];
  }

  #informerFor(namespace: string | undefined): Informer<T> | undefined {
    return this.#byNamespace.get(namespace) ?? this.#byNamespace.get(undefined);
  }

  /** The cached object of `namespace/name` key (or `name` for a cluster-scoped one). */
  get(key: string): T | undefined {
    const namespace = key.includes('/') ? key.slice(0, key.indexOf('/')) : undefined;
    return this.#informerFor(namespace)?.store.get(key);
  }

  /** The cached objects of `namespace` whose index `index` holds `value`. */
  byIndex(index: string, namespace: string | undefined, value: string): T[] {
    return this.#informerFor(namespace)?.store.byIndex(index, value) ?? [];
  }
}
