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
 * Everything else (metadata, status, the other spec fields, fields unknown to both) is passed through.
 * The annotation key is reserved: conversion owns it in both directions.
 */
import {
  GROUP_VERSION,
  GROUP_VERSION_V1,
  KIND,
  RETENTION_ANNOTATION,
  RETENTION_REJECTED_ANNOTATION,
  RETENTION_RULES,
  retentionAnnotationProblems,
  SOURCE_TYPES,
  type BackupSchedule,
  type v1,
} from '../api/index.ts';

export { RETENTION_ANNOTATION, RETENTION_REJECTED_ANNOTATION };

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

function specToV1alpha1(spec: Json): { spec: Json; annotation: string | undefined } {
  let out = spec;
  const source = spec['source'];
  if (isObject(source) && 'type' in source) out = withKey(out, 'source', withKey(source, 'type', undefined));
  const retention = spec['retention'];
  if (!isObject(retention) || !hasGfsRules(retention)) return { spec: out, annotation: undefined };
  return { spec: withKey(out, 'retention', { keepLast: projectedKeepLast(retention) }), annotation: JSON.stringify(retention) };
}

/** What the annotation going up amounts to: a retention to restore, a rejection to report, or nothing (absent or stale). */
type Carried = { readonly retention: Json } | { readonly rejected: string } | undefined;

/** The {@link RETENTION_REJECTED_ANNOTATION} value for `text` and its problems: bounded whatever the input's size. */
function rejection(text: string, problems: readonly string[]): string {
  const shown = problems.slice(0, REJECTED_PROBLEMS_MAX).map((p) => (p.length > 200 ? `${p.slice(0, 200)}…` : p));
  const more = problems.length - shown.length;
  const reason = `${RETENTION_ANNOTATION} is not a valid v1 retention, so v1 uses v1alpha1's spec.retention: ${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
  const rejected = text.length > REJECTED_TEXT_MAX ? `${text.slice(0, REJECTED_TEXT_MAX)}… (${text.length} characters)` : text;
  return JSON.stringify({ rejected, reason });
}

/**
 * The v1 retention the annotation carries, if it is a valid v1 retention and keepLast still reads what
 * conversion wrote; a rejection when it is not a valid v1 retention (whatever keepLast reads: the key is
 * reserved, and what sits there is wrong).
 */
function carriedRetention(annotation: unknown, alphaRetention: unknown): Carried {
  if (typeof annotation !== 'string') return undefined;
  const problems = retentionAnnotationProblems(annotation);
  if (problems.length > 0) return { rejected: rejection(annotation, problems) };
  const carried = JSON.parse(annotation) as Json;
  if (!isObject(alphaRetention) || projectedKeepLast(carried) !== alphaRetention['keepLast'] || Object.keys(alphaRetention).length !== 1) return undefined;
  return { retention: carried };
}

/** The v1 discriminator of a v1alpha1 source: the first member present, in schema order. */
function sourceType(source: Json): string | undefined {
  for (const [member, type] of Object.entries(SOURCE_TYPES)) if (source[member] !== undefined) return type;
  return undefined;
}

function specToV1(spec: Json, carried: Carried): Json {
  let out = spec;
  const source = spec['source'];
  const type = isObject(source) ? sourceType(source) : undefined;
  if (isObject(source) && type !== undefined) out = withKey(out, 'source', { type, ...source });
  return carried !== undefined && 'retention' in carried ? withKey(out, 'retention', carried.retention) : out;
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
    const down = isObject(spec) ? specToV1alpha1(spec) : { spec, annotation: undefined };
    return withAnnotations(withKey(withKey(object, 'apiVersion', GROUP_VERSION), 'spec', down.spec), { [RETENTION_ANNOTATION]: down.annotation });
  }
  const metadata = isObject(object['metadata']) ? object['metadata'] : {};
  const annotation = isObject(metadata['annotations']) ? metadata['annotations'][RETENTION_ANNOTATION] : undefined;
  const carried = carriedRetention(annotation, isObject(spec) ? spec['retention'] : undefined);
  const up = isObject(spec) ? specToV1(spec, carried) : spec;
  // The report stays until the annotation is rejected again (new text), restored (fixed) or removed by a client.
  const report = carried === undefined ? KEEP : 'rejected' in carried ? carried.rejected : undefined;
  return withAnnotations(withKey(withKey(object, 'apiVersion', GROUP_VERSION_V1), 'spec', up), { [RETENTION_ANNOTATION]: undefined, [RETENTION_REJECTED_ANNOTATION]: report });
}
