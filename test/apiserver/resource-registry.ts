import { BUILTIN_RESOURCES } from './builtin-resources.ts';
import type { ResourceType } from './resource-type.ts';

/**
 * Every served resource, built-in and CRD-defined, looked up the way the API server's router does
 * (by group, version and plural) and the way discovery lists them (by group version).
 */
export class ResourceRegistry {
  readonly #types = new Map<string, ResourceType>();
  /** Bumped on every change so discovery/openapi caches can invalidate. */
  #generation = 0;

  constructor() {
    for (const t of BUILTIN_RESOURCES) this.add(t);
  }

  get generation(): number {
    return this.#generation;
  }

  /** Serves a resource (replacing one with the same group/version/plural). */
  add(type: ResourceType): void {
    this.#types.set(`${type.group}/${type.version}/${type.resource}`, type);
    this.#generation++;
  }

  /** Stops serving every version of `group/resource` that belongs to the CRD `crdName`. */
  removeCustom(crdName: string): void {
    for (const [key, t] of this.#types) if (t.custom?.crdName === crdName) this.#types.delete(key);
    this.#generation++;
  }

  /** The resource at group/version/plural, if served. */
  get(group: string, version: string, resource: string): ResourceType | undefined {
    return this.#types.get(`${group}/${version}/${resource}`);
  }

  /** Every served resource, in registration order. */
  all(): ResourceType[] {
    return [...this.#types.values()];
  }

  /** Group versions served, `''` being the core group; each group lists its versions newest-registered-first. */
  groups(): Map<string, string[]> {
    const groups = new Map<string, string[]>();
    for (const t of this.#types.values()) {
      const versions = groups.get(t.group) ?? [];
      if (!versions.includes(t.version)) versions.push(t.version);
      groups.set(t.group, versions);
    }
    return groups;
  }

  /** The resources of one group version. */
  inGroupVersion(group: string, version: string): ResourceType[] {
    return this.all().filter((t) => t.group === group && t.version === version);
  }

  /** True when the group/version is served at all (so an unknown resource in it is a 404 of that path). */
  servesGroupVersion(group: string, version: string): boolean {
    return this.all().some((t) => t.group === group && t.version === version);
  }
}
