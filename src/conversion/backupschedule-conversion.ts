/**
 * Lossless conversion of a BackupSchedule between `kubelings.dev/v1alpha1` and `kubelings.dev/v1`
 * (src/api/schema.ts and schema-v1.ts). Pure; inputs are never mutated, and what does not change is
 * shared with the input rather than copied (the webhook serializes the result at once).
 *
 * What differs, and how each direction carries it:
 * - `spec.source.type` (v1's union discriminator) is derived from the member present going up and
 *   dropped going down: nothing to carry.
 * - `spec.retention` rules v1alpha1 lacks (keepDaily, keepWeekly, keepMonthly) travel in the annotation
 *   {@link RETENTION_ANNOTATION} (as Kubernetes' own types carry newer fields through older versions).
 *   v1alpha1's own `keepLast` then reads {@link KEEP_LAST_MAX}, the largest it allows: a reader of the
 *   old version (an old controller during a rolling upgrade) deletes as few backups as it can express.
 *   Going up, the annotation is restored only while keepLast still holds the value conversion wrote;
 *   a client that changed keepLast through v1alpha1 since meant a new policy, and that wins. It is
 *   restored only when it is a valid v1 retention (v1's schema and CEL rule, the checks the API server
 *   would make of a v1 write): anything a v1alpha1 client puts there bypasses v1's admission, so an
 *   invalid one (`{"keepWeekly":-5}`) would be stored in v1 as written, and then fail every later v1
 *   write of the object (the storage migration's among them). A rejected annotation is dropped whole,
 *   never rule by rule (a dropped rule keeps fewer backups than the user asked for): v1 gets v1alpha1's
 *   own retention (keepLast 1000, which deletes the fewest), and what was dropped and why goes to
 *   {@link RETENTION_REJECTED_ANNOTATION}. Conversion cannot fail instead: a Failure answer makes the
 *   object unreadable in every version, for everyone. `backupschedule validate` and the construct report
 *   the same problems as errors of the v1alpha1 object (validateBackupSchedule).
 * - `spec.destination` of type ObjectStore travels the same way, in {@link DESTINATION_ANNOTATION}; v1alpha1
 *   then reads `destination: {}` (no claim), which v1alpha1 itself refuses: an old reader stops rather
 *   than back up elsewhere, and a v1alpha1 client cannot write the object back without choosing a claim.
 *   Going up it is restored only while v1alpha1's destination still has no claim (a claim set since wins).
 *   A claim destination's `type` is dropped going down and derived going up, like the source's.
 * - `spec.encryption` travels in {@link ENCRYPTION_ANNOTATION} and is restored whenever valid. A rejected
 *   one fails closed: v1 gets `suspend: true` (and the report), since running the schedule would write
 *   backups unencrypted that its author asked to be encrypted.
 * Every carried annotation is checked the same way as the retention one (carriedFieldProblems: v1's schema
 * and CEL rules), and a rejection is reported in `<key>-rejected` (rejectedAnnotationOf).
 * Everything else (metadata, status, the other spec fields, fields unknown to both) is passed through.
 * The annotation keys are reserved: conversion owns them in both directions.
 */
import {
  CARRIED_FIELDS,
  type CarriedField,
  carriedFieldProblems,
  DESTINATION_ANNOTATION,
  DESTINATION_TYPES,
  ENCRYPTION_ANNOTATION,
  GROUP_VERSION,
  GROUP_VERSION_V1,
  KIND,
  RETENTION_ANNOTATION,
  RETENTION_REJECTED_ANNOTATION,
  rejectedAnnotationOf,
  RETENTION_RULES,
  SOURCE_TYPES,
  type BackupSchedule,
  type v1,
} from '../api/index.ts';

export { DESTINATION_ANNOTATION, ENCRYPTION_ANNOTATION, RETENTION_ANNOTATION, RETENTION_REJECTED_ANNOTATION };

/** How much of a rejected annotation {@link RETENTION_REJECTED_ANNOTATION} keeps: the copy must not push the object past the API server's 256 KiB of annotations. */
export const REJECTED_TEXT_MAX = 1024;
/** How many problems {@link RETENTION_REJECTED_ANNOTATION} names before "and N more". */
const REJECTED_PROBLEMS_MAX = 5;

/** v1alpha1's keepLast while the annotation carries a grandfather-father-son policy: its schema maximum. */
export const KEEP_LAST_MAX = 1000;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** An object whose apiVersion or kind conversion does not handle, named in the message. */
export class ConversionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConversionError';
  }
}

/** `object` with `key` set to `value` (or removed when undefined), keeping the key's position. */
function withKey(object: Json, key: string, value: unknown): Json {
  const out: Json = {};
  let placed = false;
  for (const [k, v] of Object.entries(object)) {
    if (k !== key) out[k] = v;
    else if (value !== undefined) {
      out[k] = value;
      placed = true;
    } else placed = true;
  }
  if (!placed && value !== undefined) out[key] = value;
  return out;
}

/** Marks an annotation conversion leaves as it is. */
const KEEP = Symbol('keep');

/**
 * The annotations of `object` with each key of `changes` set, removed (undefined) or kept ({@link KEEP});
 * an emptied map is dropped, as the API server would.
 */
function withAnnotations(object: Json, changes: Readonly<Record<string, string | undefined | typeof KEEP>>): Json {
  const metadata = isObject(object['metadata']) ? object['metadata'] : {};
  const annotations = isObject(metadata['annotations']) ? metadata['annotations'] : undefined;
  const start: Json = annotations ?? {};
  let next = start;
  for (const [key, value] of Object.entries(changes)) {
    if (value === KEEP || (value === undefined && next[key] === undefined)) continue;
    next = withKey(next, key, value);
  }
  if (next === start) return object;
  return withKey(object, 'metadata', withKey(metadata, 'annotations', Object.keys(next).length === 0 ? undefined : next));
}

/** Whether a v1 retention needs more than v1alpha1's keepLast. */
const hasGfsRules = (retention: Json): boolean => RETENTION_RULES.some((rule) => rule !== 'keepLast' && retention[rule] !== undefined);

/** What v1alpha1's keepLast reads for a v1 retention: its own keepLast, or the maximum when other rules are set. */
function projectedKeepLast(retention: Json): unknown {
  return hasGfsRules(retention) ? KEEP_LAST_MAX : retention['keepLast'];
}

/**
 * How one v1 spec field travels through v1alpha1 in its annotation (CARRIED_FIELDS names the key):
 * `down` gives v1alpha1's value of the field and the v1 value to carry (undefined: nothing to carry);
 * `current` says whether v1alpha1's value is still what `down` wrote for `carried`, i.e. no v1alpha1
 * client has since meant something else; `onRejected` is what v1 gets when the annotation is invalid.
 */
interface Carrier {
  readonly down: (value: unknown) => { readonly alpha: unknown; readonly carried: Json | undefined };
  readonly current: (alpha: unknown, carried: Json) => boolean;
  readonly onRejected?: (spec: Json) => Json;
}

const CARRIERS: Readonly<Record<CarriedField, Carrier>> = {
  retention: {
    down: (retention) => (isObject(retention) && hasGfsRules(retention) ? { alpha: { keepLast: projectedKeepLast(retention) }, carried: retention } : { alpha: retention, carried: undefined }),
    current: (alpha, carried) => isObject(alpha) && Object.keys(alpha).length === 1 && projectedKeepLast(carried) === alpha['keepLast'],
  },
  destination: {
    down: (destination) => {
      if (!isObject(destination)) return { alpha: destination, carried: undefined };
      if (destination['type'] === DESTINATION_TYPES.objectStore || destination['objectStore'] !== undefined) return { alpha: {}, carried: destination };
      return { alpha: 'type' in destination ? withKey(destination, 'type', undefined) : destination, carried: undefined };
    },
    current: (alpha) => !isObject(alpha) || alpha['persistentVolumeClaim'] === undefined,
  },
  encryption: {
    down: (encryption) => ({ alpha: undefined, carried: isObject(encryption) ? encryption : undefined }),
    current: () => true,
    // Fail closed: never run unencrypted a schedule whose author asked for encryption.
    onRejected: (spec) => withKey(spec, 'suspend', true),
  },
};

const CARRIED = Object.keys(CARRIERS) as CarriedField[];

function specToV1alpha1(spec: Json): { spec: Json; annotations: Record<string, string | undefined> } {
  let out = spec;
  const source = spec['source'];
  if (isObject(source) && 'type' in source) out = withKey(out, 'source', withKey(source, 'type', undefined));
  const annotations: Record<string, string | undefined> = {};
  for (const field of CARRIED) {
    const value = spec[field];
    if (value === undefined) {
      annotations[CARRIED_FIELDS[field].annotation] = undefined;
      continue;
    }
    const { alpha, carried } = CARRIERS[field].down(value);
    if (alpha !== value) out = withKey(out, field, alpha);
    annotations[CARRIED_FIELDS[field].annotation] = carried === undefined ? undefined : JSON.stringify(carried);
  }
  return { spec: out, annotations };
}

/** What a carried annotation going up amounts to: a value to restore, a rejection to report, or nothing (absent or stale). */
type Carried = { readonly value: Json } | { readonly rejected: string } | undefined;

/** The `-rejected` report for `text` and its problems: bounded whatever the input's size. */
function rejection(field: CarriedField, text: string, problems: readonly string[]): string {
  const shown = problems.slice(0, REJECTED_PROBLEMS_MAX).map((p) => (p.length > 200 ? `${p.slice(0, 200)}…` : p));
  const more = problems.length - shown.length;
  const fallback = field === 'encryption' ? 'so v1 has no spec.encryption and is suspended' : `so v1 uses v1alpha1's spec.${field}`;
  const reason = `${CARRIED_FIELDS[field].annotation} is not a valid v1 ${field}, ${fallback}: ${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
  const rejected = text.length > REJECTED_TEXT_MAX ? `${text.slice(0, REJECTED_TEXT_MAX)}… (${text.length} characters)` : text;
  return JSON.stringify({ rejected, reason });
}

/**
 * The v1 value an annotation carries, if it is valid in v1 and v1alpha1's field still reads what
 * conversion wrote; a rejection when it is not valid in v1 (whatever the field reads: the key is
 * reserved, and what sits there is wrong).
 */
function carriedValue(field: CarriedField, annotation: unknown, alpha: unknown): Carried {
  if (typeof annotation !== 'string') return undefined;
  const problems = carriedFieldProblems(field, annotation);
  if (problems.length > 0) return { rejected: rejection(field, annotation, problems) };
  const value = JSON.parse(annotation) as Json;
  return CARRIERS[field].current(alpha, value) ? { value } : undefined;
}

/** The v1 discriminator of a v1alpha1 source: the first member present, in schema order. */
function sourceType(source: Json): string | undefined {
  for (const [member, type] of Object.entries(SOURCE_TYPES)) if (source[member] !== undefined) return type;
  return undefined;
}

function specToV1(spec: Json, carried: Readonly<Partial<Record<CarriedField, Carried>>>): Json {
  let out = spec;
  const source = spec['source'];
  const type = isObject(source) ? sourceType(source) : undefined;
  if (isObject(source) && type !== undefined) out = withKey(out, 'source', { type, ...source });
  const destination = spec['destination'];
  if (isObject(destination) && destination['persistentVolumeClaim'] !== undefined && !('type' in destination)) {
    out = withKey(out, 'destination', { type: DESTINATION_TYPES.persistentVolumeClaim, ...destination });
  }
  for (const field of CARRIED) {
    const c = carried[field];
    if (c === undefined) continue;
    if ('value' in c) out = withKey(out, field, c.value);
    else if (CARRIERS[field].onRejected !== undefined) out = CARRIERS[field].onRejected(out);
  }
  return out;
}

/** A v1 BackupSchedule as v1alpha1, with what v1alpha1 cannot express in {@link RETENTION_ANNOTATION}. */
export function toV1alpha1(object: v1.BackupSchedule): BackupSchedule {
  return convertBackupSchedule(object as unknown as Json, GROUP_VERSION) as unknown as BackupSchedule;
}

/** A v1alpha1 BackupSchedule as v1, restoring what {@link toV1alpha1} carried in the annotation. */
export function toV1(object: BackupSchedule): v1.BackupSchedule {
  return convertBackupSchedule(object as unknown as Json, GROUP_VERSION_V1) as unknown as v1.BackupSchedule;
}

/** The API versions conversion handles. */
export const CONVERTIBLE_VERSIONS: readonly string[] = [GROUP_VERSION, GROUP_VERSION_V1];

/**
 * A BackupSchedule (any served version, as JSON) in `desiredAPIVersion`; unchanged when already there.
 *
 * @throws ConversionError for another kind, or an apiVersion (either side) that is not a served version.
 */
export function convertBackupSchedule(object: Json, desiredAPIVersion: string): Json {
  if (object['kind'] !== KIND) throw new ConversionError(`expected kind ${KIND}, got ${JSON.stringify(object['kind'])}`);
  const from = object['apiVersion'];
  if (typeof from !== 'string' || !CONVERTIBLE_VERSIONS.includes(from)) {
    throw new ConversionError(`unsupported apiVersion ${JSON.stringify(from)} of ${KIND}; expected one of ${CONVERTIBLE_VERSIONS.join(', ')}`);
  }
  if (!CONVERTIBLE_VERSIONS.includes(desiredAPIVersion)) {
    throw new ConversionError(`unsupported desiredAPIVersion ${JSON.stringify(desiredAPIVersion)}; expected one of ${CONVERTIBLE_VERSIONS.join(', ')}`);
  }
  if (from === desiredAPIVersion) return object;
  const spec = object['spec'];
  if (desiredAPIVersion === GROUP_VERSION) {
    const down = isObject(spec) ? specToV1alpha1(spec) : { spec, annotations: {} };
    return withAnnotations(withKey(withKey(object, 'apiVersion', GROUP_VERSION), 'spec', down.spec), down.annotations);
  }
  const metadata = isObject(object['metadata']) ? object['metadata'] : {};
  const annotations = isObject(metadata['annotations']) ? metadata['annotations'] : {};
  const carried: Partial<Record<CarriedField, Carried>> = {};
  const changes: Record<string, string | undefined | typeof KEEP> = {};
  for (const field of CARRIED) {
    const { annotation } = CARRIED_FIELDS[field];
    const c = carriedValue(field, annotations[annotation], isObject(spec) ? spec[field] : undefined);
    carried[field] = c;
    changes[annotation] = undefined;
    // The report stays until the annotation is rejected again (new text), restored (fixed) or removed by a client.
    changes[rejectedAnnotationOf(annotation)] = c === undefined ? KEEP : 'rejected' in c ? c.rejected : undefined;
  }
  const up = isObject(spec) ? specToV1(spec, carried) : spec;
  return withAnnotations(withKey(withKey(object, 'apiVersion', GROUP_VERSION_V1), 'spec', up), changes);
}
