/**
 * Deduplicates the repeated string values of cached objects. `JSON.parse` allocates every string
 * value anew, so 10,000 CronJobs hold 10,000 copies of `"Forbid"`, `"/dev/termination-log"`, the
 * image name, the schedule… An interner makes them share one copy; it is applied by a reflector
 * transform, once per object, before caching.
 */

/** Options for {@link StringInterner}. */
export interface StringInternerOptions {
  /** Longest string value considered. @default 256 */
  readonly maxLength?: number;
  /** Distinct strings remembered; beyond this, new values are kept as they are. @default 50_000 */
  readonly maxEntries?: number;
  /**
   * Object keys whose values are unique per object and not worth remembering.
   * @default ['name', 'uid', 'resourceVersion', 'generateName']
   */
  readonly skipKeys?: readonly string[];
}

/** Replaces string values in objects by a shared copy. */
export class StringInterner {
  readonly #seen = new Map<string, string>();
  readonly #maxLength: number;
  readonly #maxEntries: number;
  readonly #skip: ReadonlySet<string>;

  constructor(options: StringInternerOptions = {}) {
    this.#maxLength = options.maxLength ?? 256;
    this.#maxEntries = options.maxEntries ?? 50_000;
    this.#skip = new Set(options.skipKeys ?? ['name', 'uid', 'resourceVersion', 'generateName']);
  }

  /** Distinct strings remembered. */
  get size(): number {
    return this.#seen.size;
  }

  /** Interns one string. */
  intern(value: string): string {
    if (value.length > this.#maxLength) return value;
    const known = this.#seen.get(value);
    if (known !== undefined) return known;
    if (this.#seen.size < this.#maxEntries) this.#seen.set(value, value);
    return value;
  }

  /** Interns every string value inside `value` in place (objects and arrays); returns `value`. */
  internDeep<T>(value: T): T {
    this.#walk(value as unknown);
    return value;
  }

  #walk(node: unknown): void {
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const v: unknown = node[i];
        if (typeof v === 'string') node[i] = this.intern(v);
        else if (typeof v === 'object' && v !== null) this.#walk(v);
      }
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const record = node as Record<string, unknown>;
    for (const key in record) {
      const v = record[key];
      if (typeof v === 'string') {
        if (!this.#skip.has(key)) record[key] = this.intern(v);
      } else if (typeof v === 'object' && v !== null) {
        this.#walk(v);
      }
    }
  }
}
