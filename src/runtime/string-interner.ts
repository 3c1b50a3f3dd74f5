/**
 * Deduplicates the repeated values of cached objects. `JSON.parse` allocates every value anew, so
 * 10,000 CronJobs hold 10,000 copies of `"Forbid"`, `"/dev/termination-log"`, the image name, the
 * schedule… and of whole small objects: `{ drop: ["ALL"] }`, the container's `securityContext`, its
 * `resources`, its `volumeMounts`, and the three identical label maps of every CronJob (object, job
 * template, pod template). An interner makes equal strings and equal small subtrees share one copy; it
 * is applied by a reflector transform, once per object, before caching. Measured on 10,000 CronJobs as
 * the test API server returns them: 3.5 KB each as parsed, 2.5 KB with strings interned, 1.3 KB with
 * subtrees shared too, for about 50 µs per object.
 *
 * Shared subtrees make the interned objects read-only: a change through one object would show in
 * every object sharing that subtree. Informer caches are read-only anyway (copy before changing, as
 * client-go requires of its listers).
 */

/** Options for {@link StringInterner}. */
export interface StringInternerOptions {
  /** Longest string value considered. @default 256 */
  readonly maxLength?: number;
  /**
   * Distinct strings remembered. When full, the table starts afresh (as the subtree table does): values
   * of objects long gone would otherwise fill it for good, and nothing new would be shared after that.
   * Interned objects keep what they share. @default 50_000
   */
  readonly maxEntries?: number;
  /**
   * Object keys whose values are unique per object and not worth remembering: a condition's `message`
   * names its object and generation (`CronJob "x" matches generation 7`), so every status change would
   * add one (a soak of 100 changes/s filled the table at ~100 strings a second).
   * @default ['name', 'uid', 'resourceVersion', 'generateName', 'message']
   */
  readonly skipKeys?: readonly string[];
  /**
   * Largest subtree (objects and arrays, measured as the length of its JSON text, escapes aside)
   * shared between equal occurrences; `0` shares strings only. Larger subtrees hold per-object values
   * and rarely repeat.
   * @default 256
   */
  readonly maxTreeLength?: number;
  /**
   * Distinct subtrees remembered. When full, the table starts afresh: per-object subtrees (label maps
   * with the object's name) would otherwise crowd out the common ones, which are learnt again from the
   * next object. Interned objects keep what they share.
   * @default 4_096
   */
  readonly maxTrees?: number;
}

/** A remembered string value: its shared copy and its content hash. */
interface Interned {
  readonly value: string;
  readonly hash: number;
}

/** A property name seen before: its content hash, and whether its values are not worth remembering. */
interface PropertyName {
  readonly hash: number;
  readonly skipsValue: boolean;
}

/** Replaces string values and small subtrees in JSON-shaped objects by a shared copy. */
export class StringInterner {
  /** Remembered string values, each with its hash computed once. */
  readonly #seen = new Map<string, Interned>();
  /** Property names seen, likewise (bounded as #seen is: the names in a map come from users). */
  readonly #names = new Map<string, PropertyName>();
  /** The shared subtrees by the hash of their content (a bucket per hash: hashes may collide). */
  readonly #trees = new Map<number, object[]>();
  #treeCount = 0;
  readonly #maxLength: number;
  readonly #maxEntries: number;
  readonly #maxTreeLength: number;
  readonly #maxTrees: number;
  readonly #skip: ReadonlySet<string>;
  /** The JSON length of the value {@link #walk} returned last (escapes aside), Infinity when longer than maxTreeLength. */
  #size = 0;
  /** The content hash of the value {@link #walk} returned last, when #size is finite. */
  #hash = 0;

  constructor(options: StringInternerOptions = {}) {
    this.#maxLength = options.maxLength ?? 256;
    this.#maxEntries = options.maxEntries ?? 50_000;
    this.#maxTreeLength = options.maxTreeLength ?? 256;
    this.#maxTrees = options.maxTrees ?? 4_096;
    this.#skip = new Set(options.skipKeys ?? ['name', 'uid', 'resourceVersion', 'generateName', 'message']);
  }

  /** Distinct strings remembered. */
  get size(): number {
    return this.#seen.size;
  }

  /** Distinct subtrees remembered. */
  get trees(): number {
    return this.#treeCount;
  }

  /** Interns one string. */
  intern(value: string): string {
    return this.#remember(value)?.value ?? value;
  }

  /**
   * Interns every string value inside `value` (objects and arrays, in place) and replaces small
   * subtrees equal to one seen before by that one. Returns the result, which is `value` itself unless
   * `value` is a small subtree seen before. Treat the result as read-only (see the module doc).
   */
  internDeep<T>(value: T): T {
    return this.#walk(value, false) as T;
  }

  /** The entry of `value` (remembered now if new), or undefined when it is longer than maxLength. */
  #remember(value: string): Interned | undefined {
    if (value.length > this.#maxLength) return undefined;
    return this.#seen.get(value) ?? addAfresh(this.#seen, value, { value, hash: stringHash(value, STRING_SEED) }, this.#maxEntries);
  }

  #propertyName(name: string): PropertyName {
    return this.#names.get(name) ?? addAfresh(this.#names, name, { hash: stringHash(name, STRING_SEED), skipsValue: this.#skip.has(name) }, this.#maxEntries);
  }

  /**
   * Interns below `node` children first; a small subtree is then looked up by a hash of its content
   * and compared with the shared ones of that hash mostly by the identity of its (already shared)
   * children. No text of it is built: building each subtree's JSON text as its key cost more than
   * the interning itself. One small method per kind of node: a single walker over every shape was
   * optimized, deoptimized and optimized again by V8 a dozen times while a fresh controller converged
   * 1,000 schedules (~40 ms of compiling).
   */
  #walk(node: unknown, skip: boolean): unknown {
    if (typeof node === 'string') return this.#walkString(node, skip);
    if (typeof node !== 'object' || node === null) {
      this.#walkPrimitive(node);
      return node;
    }
    const size = Array.isArray(node) ? this.#walkArray(node) : this.#walkRecord(node as Record<string, unknown>);
    if (size > this.#maxTreeLength) {
      this.#size = Infinity;
      return node;
    }
    this.#size = size;
    return this.#share(node);
  }

  #walkString(text: string, skip: boolean): string {
    // A value that is unique per object is hashed but not remembered.
    const entry = skip ? undefined : this.#remember(text);
    if (text.length >= this.#maxTreeLength) {
      this.#size = Infinity;
    } else {
      this.#size = text.length + 2;
      this.#hash = entry ? entry.hash : stringHash(text, STRING_SEED);
    }
    return entry ? entry.value : text;
  }

  #walkPrimitive(value: unknown): void {
    const text = String(value);
    this.#size = text.length;
    this.#hash = stringHash(text, PRIMITIVE_SEED);
  }

  /** Walks the items (replacing them in place); sets #hash, returns the JSON length. */
  #walkArray(items: unknown[]): number {
    let size = 1;
    let hash = ARRAY_SEED;
    for (let i = 0; i < items.length; i++) {
      items[i] = this.#walk(items[i], false);
      size += (i === 0 ? 0 : 1) + this.#size;
      hash = mix(hash, this.#hash);
    }
    this.#hash = hash;
    return size + 1;
  }

  /** Walks the properties (replacing their values in place); sets #hash, returns the JSON length (a name adds its quotes and colon). */
  #walkRecord(record: Record<string, unknown>): number {
    let size = 1;
    let hash = OBJECT_SEED;
    const names = Object.keys(record);
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const known = this.#propertyName(name);
      record[name] = this.#walk(record[name], known.skipsValue);
      size += (i === 0 ? 0 : 1) + name.length + 3 + this.#size;
      hash = mix(mix(hash, known.hash), this.#hash);
    }
    this.#hash = hash;
    return size + 1;
  }

  /** `node` (of hash #hash), or the shared subtree equal to it, which it becomes when there is none. */
  #share(node: object): object {
    const hash = this.#hash;
    let bucket = this.#trees.get(hash);
    const known = bucket?.find((tree) => sameTree(tree, node));
    if (known !== undefined) return known;
    if (this.#treeCount >= this.#maxTrees) {
      this.#trees.clear();
      this.#treeCount = 0;
      bucket = undefined;
    }
    if (!bucket) this.#trees.set(hash, (bucket = []));
    else if (bucket.length >= MAX_BUCKET) return node;
    bucket.push(node);
    this.#treeCount++;
    return node;
  }
}

/** Adds `entry` to `table` and returns it; a full table starts afresh first (see maxEntries). */
function addAfresh<V>(table: Map<string, V>, key: string, entry: V, maxEntries: number): V {
  if (table.size >= maxEntries) table.clear();
  table.set(key, entry);
  return entry;
}

/**
 * Subtrees kept per hash. FNV-1a collisions are easy to make on purpose (two colliding strings, and
 * any concatenation of such pairs collides too), and label values are users' input: past this, equal
 * hashes are not shared, so that no lookup becomes a scan of the whole table.
 */
const MAX_BUCKET = 8;

const STRING_SEED = 0x811c9dc5;
const PRIMITIVE_SEED = 0x050c5d1f;
const ARRAY_SEED = 0x2c1b3c6d;
const OBJECT_SEED = 0x297a2d39;

/** FNV-1a over UTF-16 code units. */
function stringHash(text: string, seed: number): number {
  let hash = seed;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash;
}

function mix(hash: number, value: number): number {
  return Math.imul(hash ^ value, 0x01000193);
}

/**
 * Whether two JSON values are equal: the same names in the same order and equal values. Children are
 * mostly interned already (equal strings and equal small subtrees are the same values), so the
 * identity check ends most comparisons at once; only a child shared before the table started afresh
 * is compared in depth. A subtree with a child larger than maxTreeLength is never compared (it is
 * larger than maxTreeLength too).
 */
function sameTree(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameTree(a[i], b[i])) return false;
    return true;
  }
  const names = Object.keys(a);
  const other = Object.keys(b);
  if (names.length !== other.length) return false;
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    if (name !== other[i] || !sameTree((a as Record<string, unknown>)[name], (b as Record<string, unknown>)[name])) return false;
  }
  return true;
}
