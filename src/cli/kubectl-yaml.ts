/**
 * YAML read as kubectl reads it, so the CLI judges the object kubectl would send. kubectl turns YAML
 * into JSON with sigs.k8s.io/yaml, whose parser is a fork of go-yaml v2: YAML 1.1 scalars, not 1.2's.
 * What that means for a manifest, and how the `yaml` package is set up to match:
 * - `yes`/`no`/`on`/`off`/`y`/`n` (any of their case forms) are booleans: `suspend: yes` is `true`
 *   (YAML 1.2 would send the string "yes", which the schema rejects);
 * - `010` is octal 8 and `0x1f` hex 31; go-yaml hands integers to Go's `strconv.ParseInt(s, 0, 64)`,
 *   which also reads `0o10`, `0b101` and the upper-case prefixes, so those are integers too;
 * - `<<: *anchor` merges the anchored mapping's keys (`merge: true`);
 * - timestamps stay strings (go-yaml v2 decodes a timestamp-looking scalar into `interface{}` as the
 *   string, "for backward compatibility"), and base-60 numbers such as `1:20` are strings (go-yaml never
 *   supported them): the `yaml` package's 1.1 schema turns both into Date/number, so those tags are dropped.
 * Aliases are bounded: a "billion laughs" document fails with an error rather than eating the memory.
 * Keys are unique, as kubectl's strict decoding wants them, checked in one pass per document
 * ({@link duplicateKeyOffset}): the package's own check compares each key with every earlier one of
 * its mapping (125,000 keys took 160 s).
 */
import { isMap, isScalar, isSeq, type CreateNodeOptions, type Document, type DocumentOptions, type ParseOptions, type Scalar, type SchemaOptions, type ToJSOptions } from 'yaml';

/** Tags of the `yaml` package's YAML 1.1 schema that go-yaml v2 does not resolve on its own. */
const NOT_IN_GO_YAML = (tag: { tag: string; format?: string }): boolean => tag.tag === 'tag:yaml.org,2002:timestamp' || tag.format === 'TIME';

const GO_RADIX: Readonly<Record<string, number>> = { b: 2, o: 8, x: 16 };

/**
 * Integers as Go's ParseInt with base 0 reads them beyond YAML 1.1's own forms: a `0o`/`0O` octal and the
 * upper-case `0B`/`0X` prefixes (lower-case `0b`/`0x` and `0`-octal are in the 1.1 schema already).
 */
const goPrefixedInt = {
  identify: (value: unknown): boolean => Number.isInteger(value),
  default: true,
  tag: 'tag:yaml.org,2002:int',
  format: 'GO',
  test: /^[-+]?0(?:[oO][0-7_]+|B[01_]+|X[0-9a-fA-F_]+)$/,
  resolve: (text: string): number => {
    const negative = text.startsWith('-');
    const digits = text.replace(/^[-+]/, '');
    const value = Number.parseInt(digits.slice(2).replaceAll('_', ''), GO_RADIX[(digits[1] ?? '').toLowerCase()] ?? 10);
    return negative ? -value : value;
  },
};

/** At most this many alias resolutions per document (go-yaml v2 stops "excessive aliasing" likewise). */
export const MAX_ALIAS_COUNT = 100;

/** Parse options: YAML 1.1, merge keys, go-yaml's scalars; duplicate keys are {@link duplicateKeyOffset}'s to find. */
export const KUBECTL_PARSE_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  version: '1.1',
  merge: true,
  uniqueKeys: false,
  prettyErrors: false,
  customTags: (tags) => [...tags.filter((t) => typeof t === 'string' || !NOT_IN_GO_YAML(t as { tag: string; format?: string })), goPrefixedInt],
};

/** Below this many keys a mapping is checked by comparing each key with the ones before it (no Set to build). */
const SMALL_MAP = 16;

/**
 * Where the first key that repeats an earlier key of its mapping is (kubectl's strict decoding refuses
 * the document), or undefined. Scalar keys are equal when their values are (`1` and `"1"` are not);
 * collections as keys never are, as with the package's `uniqueKeys: true`. One pass over the document.
 */
export function duplicateKeyOffset(doc: Document): number | undefined {
  let first: number | undefined;
  const found = (key: Scalar): void => {
    const at = key.range?.[0] ?? 0;
    if (first === undefined || at < first) first = at;
  };
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isSeq(node)) {
      // One push each: spreading a list of 100,000 items would pass the call's argument limit.
      for (const item of node.items) stack.push(item);
    } else if (isMap(node)) {
      const keys: Scalar[] = [];
      for (const { key, value } of node.items) {
        if (isScalar(key)) keys.push(key);
        else stack.push(key);
        stack.push(value);
      }
      if (keys.length < SMALL_MAP) {
        for (let i = 1; i < keys.length; i++) {
          for (let j = 0; j < i; j++) {
            if (keys[j]!.value === keys[i]!.value) {
              found(keys[i]!);
              break;
            }
          }
        }
      } else {
        const seen = new Set<unknown>();
        for (const key of keys) {
          if (seen.has(key.value)) found(key);
          seen.add(key.value);
        }
      }
    }
  }
  return first;
}

/** toJS options: aliases bounded. */
export const KUBECTL_TO_JS_OPTIONS: ToJSOptions = { maxAliasCount: MAX_ALIAS_COUNT };

/**
 * Options to write YAML that kubectl reads back as written: the standard YAML 1.1 schema, so a string
 * that 1.1 would read as something else (`on`, `no`, `010`, `1:20`, `2024-01-01`) is quoted. A claim or
 * PVC may well be named `on` or `no`: unquoted, kubectl would send a boolean.
 */
export const KUBECTL_WRITE_OPTIONS: DocumentOptions & SchemaOptions & CreateNodeOptions = { version: '1.1' };
