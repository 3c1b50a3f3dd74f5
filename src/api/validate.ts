import type { ErrorObject } from 'ajv';
import { CronExpressionParser } from 'cron-parser';
import { validateSchema } from '../../imports/backupschedule-validator.js';
import { CEL_RULES } from './cel-rules.ts';
import { GROUP_VERSION, KIND } from './constants.ts';
import { DNS1123_SUBDOMAIN } from './schema.ts';

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

function fromAjv(error: ErrorObject): FieldError {
  let field = pointerToField(error.instancePath);
  const params = error.params as Record<string, unknown>;
  let message = error.message ?? 'is invalid';
  if (error.keyword === 'required') {
    field = field === '' ? String(params['missingProperty']) : `${field}.${String(params['missingProperty'])}`;
    message = 'is required';
  } else if (error.keyword === 'additionalProperties') {
    field = `${field}.${String(params['additionalProperty'])}`;
    message = 'is not a known field';
  } else if (error.keyword === 'enum') {
    message = `must be one of ${(params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return { field: field === '' ? '(root)' : field, message: `${field === '' ? '(root)' : field}: ${message}` };
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
 * cron syntax (cron-parser) and the time zone name. Unknown fields are reported too. Returns every
 * problem found; an empty array means valid.
 */
export function validateBackupSchedule(obj: unknown): FieldError[] {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    return [fieldError('(root)', 'must be an object')];
  }
  // The schema check is compiled ahead of time (src/api/schema-validator.ts, `npm run import`).
  const errors: FieldError[] = validateSchema(obj) ? [] : (validateSchema.errors ?? []).map(fromAjv);
  const record = obj as Record<string, unknown>;

  if (record['apiVersion'] !== undefined && record['apiVersion'] !== GROUP_VERSION) {
    errors.push(fieldError('apiVersion', `must be "${GROUP_VERSION}", got ${JSON.stringify(record['apiVersion'])}`));
  }
  if (record['kind'] !== undefined && record['kind'] !== KIND) {
    errors.push(fieldError('kind', `must be "${KIND}", got ${JSON.stringify(record['kind'])}`));
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
  for (const rule of CEL_RULES) {
    const value = at(obj, rule.path);
    const field = rule.path.join('.');
    if (value === undefined || !schemaValid(field)) continue;
    const self = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : { value };
    if (!rule.check(self)) errors.push(fieldError(`${field}${rule.fieldPath ?? ''}`, rule.message));
  }

  const schedule = at(obj, ['spec', 'schedule']);
  if (typeof schedule === 'string' && schemaValid('spec.schedule')) {
    const problem = cronProblems.get(schedule, cronProblem);
    if (problem !== undefined) errors.push(fieldError('spec.schedule', `invalid cron expression ${JSON.stringify(schedule)}: ${problem}`));
  }
  const timeZone = at(obj, ['spec', 'timeZone']);
  if (typeof timeZone === 'string' && schemaValid('spec.timeZone') && !knownTimeZones.get(timeZone, isKnownTimeZone)) {
    errors.push(fieldError('spec.timeZone', `unknown time zone ${JSON.stringify(timeZone)}; use an IANA name such as "Europe/Berlin"`));
  }
  return errors;
}

/** The parser's complaint about a cron expression, or undefined when it parses. */
function cronProblem(schedule: string): string | undefined {
  try {
    // cron-parser lacks @midnight, which robfig/cron (the CronJob controller's parser) accepts as @daily.
    CronExpressionParser.parse(schedule === '@midnight' ? '@daily' : schedule, { strict: false });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

function isKnownTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * A bounded memo of a pure function of a string: the controller validates every schedule on every
 * reconcile, and parsing a cron expression (~100 µs) or building an Intl formatter costs more than the
 * rest of the validation, while thousands of schedules share a handful of expressions and zones. When
 * full, the oldest entry goes (Map keeps insertion order), so arbitrary input cannot grow it.
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
const knownTimeZones = new BoundedMemo<boolean>(1_024);
