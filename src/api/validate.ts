import type { ErrorObject, ValidateFunction } from 'ajv';
import { validateSchema as validateV1Schema } from '../../imports/backupschedule-v1-validator.js';
import { validateSchema } from '../../imports/backupschedule-validator.js';
import { validateSchema as validateRestoreSchema } from '../../imports/restore-validator.js';
import { CEL_RULES, CEL_RULES_V1, type CelRule } from './cel-rules.ts';
import { RESTORE_CEL_RULES, RESTORE_TRANSITION_RULES } from './restore-cel-rules.ts';
import { BACKUP_NAME_PATTERN, RESTORE_KIND } from './restore-schema.ts';
import type { AnyBackupSchedule, v1 } from './index.ts';
import { DESTINATION_ANNOTATION, ENCRYPTION_ANNOTATION, GROUP_VERSION, GROUP_VERSION_V1, KIND, RETENTION_ANNOTATION } from './constants.ts';
import { cronScheduleError } from './cron-schedule.ts';
import { enumProblem, quantityHint, timeZoneHint, unknownFieldHint } from './error-hints.ts';
import { quantityProblem, resourcesErrors } from './resources.ts';
import { DNS1123_SUBDOMAIN, ENDPOINT_PATTERN, QUANTITY_PATTERN, SCHEDULE_PATTERN, TIME_ZONE_PATTERN } from './schema.ts';
import { timeZoneError } from './time-zone.ts';
import { ageRecipientProblem } from './age-recipient.ts';
import { AGE_RECIPIENT_PATTERN, BUCKET_PATTERN, PREFIX_PATTERN, REGION_PATTERN, S3_ENDPOINT_PATTERN } from './schema-v1.ts';

/** One problem with a BackupSchedule: the field (dotted path, e.g. `spec.retention.keepLast`) and what is wrong. */
export interface FieldError {
  /** Dotted path of the offending field, e.g. `spec.retention.keepLast`. */
  readonly field: string;
  /** What is wrong, starting with the field's path, e.g. `spec.retention.keepLast: must be <= 1000`. */
  readonly message: string;
}

function pointerToField(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`))
    .join('')
    .replace(/^\./, '');
}

function fromAjv(error: ErrorObject, groupVersion: string): FieldError {
  let field = pointerToField(error.instancePath);
  const params = error.params as Record<string, unknown>;
  let message = error.message ?? 'is invalid';
  if (error.keyword === 'required') {
    field = field === '' ? String(params['missingProperty']) : `${field}.${String(params['missingProperty'])}`;
    message = 'is required';
  } else if (error.keyword === 'additionalProperties') {
    field = `${field}.${String(params['additionalProperty'])}`;
    // verbose: the object's schema comes with the error, so the names it does know are at hand.
    const known = Object.keys((error.parentSchema?.['properties'] as Record<string, unknown> | undefined) ?? {});
    message = `is not a known field${unknownFieldHint(field, known, groupVersion)}`;
  } else if (error.keyword === 'enum') {
    message = enumProblem(error.data, params['allowedValues'] as unknown[]);
  } else if (error.keyword === 'pattern') {
    message = patternProblem(String(params['pattern']), error.data) ?? message;
  }
  return { field: field === '' ? '(root)' : field, message: `${field === '' ? '(root)' : field}: ${message}` };
}

/** Words for the patterns whose regex tells a user little ("must match pattern ^\\+?(([0-9]+…"). */
function patternProblem(pattern: string, value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  switch (pattern) {
    case SCHEDULE_PATTERN:
      return scheduleProblems(value).join('; ') || undefined;
    case QUANTITY_PATTERN:
      return `${quantityProblem(value) ?? `must be a non-negative quantity written with digits, got ${JSON.stringify(value)}`}${quantityHint(value)}`;
    case TIME_ZONE_PATTERN:
      return `${timeZoneError(value) ?? `unknown time zone ${value}`}${timeZoneHint(value)}`;
    // Also spec.destination.persistentVolumeClaim.path's pattern (the same text).
    case PREFIX_PATTERN:
      return `must be relative: "/"-separated segments of A-Z, a-z, 0-9, ".", "_" and "-", with no leading, trailing or double "/", got ${JSON.stringify(value)}`;
    case REGION_PATTERN:
      return `must be a region name of a-z, 0-9 and "-", e.g. "eu-central-1", got ${JSON.stringify(value)}`;
    case BUCKET_PATTERN:
      return `must be an S3 bucket name: 3-63 of a-z, 0-9, "." and "-", starting and ending with a letter or digit, got ${JSON.stringify(value)}`;
    case AGE_RECIPIENT_PATTERN:
      // Never echo the value: it may be a secret key pasted by mistake.
      return value.startsWith('AGE-SECRET-KEY-') ? (ageRecipientProblem(value) ?? 'is an age identity') : 'must be an age X25519 recipient: "age1" and 58 bech32 characters, as age-keygen prints it ("Public key: age1…")';
    case S3_ENDPOINT_PATTERN:
      return `must be an http:// or https:// URL of a single host (DNS name, IPv4 or [IPv6]) with an optional port and no path, e.g. "https://minio.storage:9000", got ${JSON.stringify(value)}`;
    case BACKUP_NAME_PATTERN:
      return `must be latest or a backup's file or object name, <schedule>-<yyyymmddThhmmssZ>.<db|tar.gz> (an object: .db or .tar, then .zst or .gz, then .age), e.g. "nightly-20261130T020007Z.tar.gz", got ${JSON.stringify(value)}`;
    case ENDPOINT_PATTERN:
      return `must be one http:// or https:// URL of a single host (DNS name, IPv4 or [IPv6]) with an optional port, e.g. "https://etcd-0.etcd:2379", got ${JSON.stringify(value)}`;
    default:
      return undefined;
  }
}

function at(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const name of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[name];
  }
  return current;
}

// Compiled once: no flags, so test() keeps no state between calls.
const DNS1123_SUBDOMAIN_RE = new RegExp(DNS1123_SUBDOMAIN);

const fieldError = (field: string, problem: string): FieldError => ({ field, message: `${field}: ${problem}` });

/**
 * Checks a BackupSchedule the way the API server does with the CRD (the JSON Schema, including bounds,
 * patterns and enums, and the CEL cross-field rules) plus what the CronJob API would reject later: the
 * schedule (robfig/cron's grammar), the time zone (Go's tz names), and the resource quantities
 * (non-negative, requests within limits). Unknown fields are reported too. Returns every problem found;
 * an empty array means valid.
 */
export function validateBackupSchedule(obj: unknown): FieldError[] {
  return [...validateVersion(obj, V1ALPHA1), ...carriedAnnotationErrors(obj)];
}

/** What one API version validates with: its precompiled schema check, its CEL rules, its apiVersion. */
interface VersionRules {
  readonly validateSchema: ValidateFunction;
  readonly celRules: readonly CelRule[];
  readonly groupVersion: string;
  readonly kind: string;
}

const V1ALPHA1: VersionRules = { validateSchema, celRules: CEL_RULES, groupVersion: GROUP_VERSION, kind: KIND };
const V1: VersionRules = { validateSchema: validateV1Schema, celRules: CEL_RULES_V1, groupVersion: GROUP_VERSION_V1, kind: KIND };
const RESTORE_V1: VersionRules = { validateSchema: validateRestoreSchema, celRules: RESTORE_CEL_RULES, groupVersion: GROUP_VERSION_V1, kind: RESTORE_KIND };

/**
 * Checks a `kubelings.dev/v1` Restore (src/api/restore-schema.ts) as the API server does on create:
 * the same checks and field-naming errors as {@link validateBackupScheduleV1}, with the Restore's
 * schema and CEL rules. With `old` (the stored object) it is an update, and the transition rules
 * (an immutable spec) apply too.
 */
export function validateRestore(obj: unknown, old?: unknown): FieldError[] {
  const errors = validateVersion(obj, RESTORE_V1);
  if (old === undefined) return errors;
  for (const rule of RESTORE_TRANSITION_RULES) {
    const self = at(obj, rule.path);
    const oldSelf = at(old, rule.path);
    if (self !== undefined && oldSelf !== undefined && !rule.check(self, oldSelf)) errors.push(fieldError(rule.path.join('.'), rule.message));
  }
  return errors;
}

/**
 * {@link validateBackupSchedule} for a `kubelings.dev/v1` BackupSchedule (src/api/schema-v1.ts): the
 * same checks and the same field-naming errors, with v1's schema and CEL rules (source discriminator,
 * at least one retention rule).
 */
export function validateBackupScheduleV1(obj: unknown): FieldError[] {
  return validateVersion(obj, V1);
}

/** Whether a BackupSchedule is written in `kubelings.dev/v1` (otherwise it is read as v1alpha1, the first version). */
export function isV1(schedule: AnyBackupSchedule): schedule is v1.BackupSchedule {
  return schedule.apiVersion === GROUP_VERSION_V1;
}

/**
 * Validates a BackupSchedule in the served version its `apiVersion` names: {@link validateBackupScheduleV1}
 * for `kubelings.dev/v1`, {@link validateBackupSchedule} otherwise (so v1alpha1 YAML, and YAML without an
 * apiVersion, is checked as before). Any other apiVersion is reported with both served versions.
 */
export function validateAnyVersion(obj: unknown): FieldError[] {
  const apiVersion = obj !== null && typeof obj === 'object' ? (obj as Record<string, unknown>)['apiVersion'] : undefined;
  if (apiVersion === GROUP_VERSION_V1) return validateVersion(obj, V1);
  return [...validateVersion(obj, V1ALPHA1), ...carriedAnnotationErrors(obj)].map((e) =>
    e.field === 'apiVersion' ? fieldError('apiVersion', `must be one of "${GROUP_VERSION}", "${GROUP_VERSION_V1}", got ${JSON.stringify(apiVersion)}`) : e,
  );
}

/**
 * The v1 spec fields conversion carries through v1alpha1 in an annotation (src/conversion), each with
 * its key and what a value that is no JSON object is told.
 */
export const CARRIED_FIELDS = {
  retention: { annotation: RETENTION_ANNOTATION, notAnObject: 'must be a JSON object of v1 retention rules' },
  destination: { annotation: DESTINATION_ANNOTATION, notAnObject: 'must be a JSON object: a v1 spec.destination' },
  encryption: { annotation: ENCRYPTION_ANNOTATION, notAnObject: 'must be a JSON object: a v1 spec.encryption' },
} as const;

/** A v1 spec field conversion carries through v1alpha1 in an annotation. */
export type CarriedField = keyof typeof CARRIED_FIELDS;

/**
 * The problems of the text of a carried annotation (see {@link CARRIED_FIELDS}), each `<path>: <problem>`
 * relative to the field (`keepWeekly: must be >= 1`, `objectStore.bucket: …`): not JSON, not an object,
 * or not a valid v1 `spec.<field>` by v1's schema and CEL rules, the checks the API server would make of
 * a v1 write. Empty when conversion may restore it (src/conversion).
 */
export function carriedFieldProblems(field: CarriedField, text: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return [`is not JSON: ${(err as Error).message}`];
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [CARRIED_FIELDS[field].notAnObject];
  // The v1 checks of one node: a v1 object holding only this field, its errors at or below spec.<field>.
  const probe = { apiVersion: GROUP_VERSION_V1, kind: KIND, metadata: { name: field }, spec: { [field]: value } };
  const prefix = `spec.${field}`;
  return validateVersion(probe, V1)
    .filter((e) => e.field === prefix || e.field.startsWith(`${prefix}.`) || e.field.startsWith(`${prefix}[`))
    .map((e) => e.message.slice(e.field === prefix ? prefix.length + 2 : prefix.length + 1));
}

/** {@link carriedFieldProblems} of the {@link RETENTION_ANNOTATION} text. */
export function retentionAnnotationProblems(text: string): string[] {
  return carriedFieldProblems('retention', text);
}

/** A v1alpha1 object's carried annotations that are set and that conversion would reject, as errors naming the key. */
function carriedAnnotationErrors(obj: unknown): FieldError[] {
  return Object.entries(CARRIED_FIELDS).flatMap(([field, { annotation }]) => {
    const text = at(obj, ['metadata', 'annotations', annotation]);
    if (typeof text !== 'string') return [];
    return carriedFieldProblems(field as CarriedField, text).map((problem) => fieldError(`metadata.annotations.${annotation}`, problem));
  });
}

/**
 * The paths of the CEL rules {@link validateAnyVersion} did not evaluate on `obj` because the schema
 * failed at or below the rule's node (`spec`'s "source and destination differ" after a bad
 * `spec.retention`). kube-apiserver skips its rules the same way and then says "some validation rules
 * were not checked because the object was invalid"; this lets a caller say so too, and where.
 */
export function uncheckedRules(obj: unknown): string[] {
  const apiVersion = obj !== null && typeof obj === 'object' ? (obj as Record<string, unknown>)['apiVersion'] : undefined;
  const unchecked: string[] = [];
  validateVersion(obj, apiVersion === GROUP_VERSION_V1 ? V1 : V1ALPHA1, unchecked);
  return [...new Set(unchecked)];
}

/** Checks `obj` in `version`; the paths of the CEL rules it skips (see uncheckedRules) go to `unchecked`. */
function validateVersion(obj: unknown, version: VersionRules, unchecked?: string[]): FieldError[] {
  const { validateSchema, celRules, groupVersion } = version;
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    return [fieldError('(root)', 'must be an object')];
  }
  // The schema check is compiled ahead of time (src/api/schema-validator.ts, `npm run import`).
  const errors: FieldError[] = validateSchema(obj) ? [] : (validateSchema.errors ?? []).map((e) => fromAjv(e, groupVersion));
  const record = obj as Record<string, unknown>;

  if (record['apiVersion'] !== undefined && record['apiVersion'] !== groupVersion) {
    errors.push(fieldError('apiVersion', `must be "${groupVersion}", got ${JSON.stringify(record['apiVersion'])}`));
  }
  if (record['kind'] !== undefined && record['kind'] !== version.kind) {
    errors.push(fieldError('kind', `must be "${version.kind}", got ${JSON.stringify(record['kind'])}`));
  }
  const name = at(obj, ['metadata', 'name']);
  if (typeof name !== 'string' || name === '') {
    errors.push(fieldError('metadata.name', 'is required'));
  } else if (name.length > 253 || !DNS1123_SUBDOMAIN_RE.test(name)) {
    errors.push(fieldError('metadata.name', 'must be a DNS-1123 subdomain of at most 253 characters'));
  }

  // Like the API server, evaluate CEL rules only on nodes that passed the schema checks.
  const failed = new Set(errors.map((e) => e.field));
  const schemaValid = (field: string): boolean => ![...failed].some((f) => f === field || f.startsWith(`${field}.`) || f.startsWith(`${field}[`));
  for (const rule of celRules) {
    const value = at(obj, rule.path);
    const field = rule.path.join('.');
    if (value === undefined) continue;
    if (!schemaValid(field)) {
      unchecked?.push(field);
      continue;
    }
    const self = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : { value };
    if (!rule.check(self)) errors.push(fieldError(`${field}${rule.fieldPath ?? ''}`, rule.message));
  }

  // The CRD pattern is a loose superset of the grammar; when it fails, patternProblem words the parser's reason.
  const schedule = at(obj, ['spec', 'schedule']);
  if (typeof schedule === 'string' && schemaValid('spec.schedule')) {
    errors.push(...scheduleProblems(schedule).map((problem) => fieldError('spec.schedule', problem)));
  }
  const timeZone = at(obj, ['spec', 'timeZone']);
  if (typeof timeZone === 'string' && schemaValid('spec.timeZone')) {
    const problem = timeZoneError(timeZone);
    if (problem !== undefined) errors.push(fieldError('spec.timeZone', `${problem}${timeZoneHint(timeZone)}`));
  }
  const resources = at(obj, ['spec', 'resources']);
  if (resources !== undefined && schemaValid('spec.resources')) {
    for (const { field, problem } of resourcesErrors(resources, 'spec.resources')) {
      const text = at(obj, field.split('.'));
      // Only a quantity that does not parse gets the spelling hint; a request above its limit does not.
      errors.push(fieldError(field, typeof text === 'string' && problem.startsWith('invalid quantity') ? `${problem}${quantityHint(text)}` : problem));
    }
  }
  // The pattern checks a recipient's charset and length; its bech32 checksum is what the runner would refuse.
  const recipients = at(obj, ['spec', 'encryption', 'ageRecipients']);
  if (Array.isArray(recipients) && schemaValid('spec.encryption.ageRecipients')) {
    recipients.forEach((recipient: unknown, i) => {
      const problem = typeof recipient === 'string' ? ageRecipientProblem(recipient) : undefined;
      if (problem !== undefined) errors.push(fieldError(`spec.encryption.ageRecipients[${i}]`, problem));
    });
  }
  return errors;
}

/**
 * What the CronJob API says of a schedule: robfig/cron's parse error, and (pkg/apis/batch/validation
 * validateScheduleFormat) no "TZ" anywhere in a new CronJob's schedule.
 */
function scheduleProblems(schedule: string): string[] {
  const problems: string[] = [];
  if (schedule.includes('TZ')) problems.push('cannot use TZ or CRON_TZ in schedule, use spec.timeZone instead');
  const problem = cronProblems.get(schedule, cronScheduleError);
  if (problem !== undefined) problems.push(`invalid cron schedule ${JSON.stringify(schedule)}: ${problem}`);
  return problems;
}

/**
 * A bounded memo of a pure function of a string: the controller validates every schedule on every
 * reconcile, and parsing a cron schedule costs more than the rest of the validation, while thousands of
 * schedules share a handful of expressions. When full, the oldest entry goes (Map keeps insertion
 * order), so arbitrary input cannot grow it.
 */
class BoundedMemo<V> {
  readonly #entries = new Map<string, V>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  get(key: string, compute: (key: string) => V): V {
    if (this.#entries.has(key)) return this.#entries.get(key) as V;
    const value = compute(key);
    if (this.#entries.size >= this.#max) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, value);
    return value;
  }
}

const cronProblems = new BoundedMemo<string | undefined>(1_024);
