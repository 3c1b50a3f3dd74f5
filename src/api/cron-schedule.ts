import { goParseDurationError } from './go-duration.ts';
import { goStrconvQuote } from './go-quote.ts';
import { loadLocationError } from './time-zone.ts';

/**
 * The schedule grammar the CronJob API accepts: kube-apiserver validates `spec.schedule` with
 * `cron.ParseStandard` of github.com/robfig/cron/v3 (pkg/apis/batch/validation validateScheduleFormat),
 * so this is that parser, rule for rule, with its error texts:
 * - five fields split on Go whitespace (`strings.Fields`: Unicode White_Space), or a descriptor
 *   (`@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`, `@every <Go duration>`);
 * - a field is a comma list (empty items are skipped, so `1,,2` and `,` parse) of `*`, `?`, `N`, `N-M`,
 *   each optionally `/step`; `N/step` means `N-max/step`; after `*` or `?` a `-…` part is ignored;
 * - numbers are Go `strconv.Atoi` (a leading `+` is allowed, `-` is a negative number and an error),
 *   months and weekdays also take three-letter names, case-insensitively;
 * - bounds: minute 0-59, hour 0-23, day of month 1-31 (any day: `0 0 31 2 *` parses), month 1-12,
 *   day of week 0-6 (7 is an error); no `L`, `W` or `#`;
 * - an optional `TZ=<zone> ` or `CRON_TZ=<zone> ` prefix, its zone loaded like Go's `time.LoadLocation`.
 * Kubernetes rejects any schedule containing `TZ` separately (the CRD carries that rule), so the prefix
 * only matters for the error text here.
 */

interface Bounds {
  readonly min: number;
  readonly max: number;
  readonly names?: ReadonlyMap<string, number>;
}

const names = (list: string): ReadonlyMap<string, number> => new Map(list.split(' ').map((n, i) => [n, i] as const));
const MONTHS = new Map([...names('jan feb mar apr may jun jul aug sep oct nov dec')].map(([n, i]) => [n, i + 1] as const));
const FIELDS: readonly Bounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTHS },
  { min: 0, max: 6, names: names('sun mon tue wed thu fri sat') },
];
const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

/**
 * Go's `unicode.IsSpace` (which `strings.Fields` and `strings.TrimSpace` split and trim on) as the
 * inside of a regex character class: ASCII blanks, NEL and the Unicode separators Zs, Zl and Zp. Written
 * with escapes both JavaScript (u flag) and Go's RE2 read, since the CRD pattern of spec.schedule uses
 * it too; literal NEL or LS characters would be line breaks to the YAML parser of kubectl.
 */
export const GO_SPACE_CLASS = '\\t\\n\\v\\f\\r\\x85\\p{Zs}\\p{Zl}\\p{Zp}';
const GO_FIELDS = new RegExp(`[^${GO_SPACE_CLASS}]+`, 'gu');
const GO_TRIM = new RegExp(`^[${GO_SPACE_CLASS}]+|[${GO_SPACE_CLASS}]+$`, 'gu');

const INT64_MAX = 2n ** 63n - 1n;

/** Thrown inside the parser; its message is robfig's error text. */
class ScheduleError extends Error {}

/** robfig/cron v3 `ParseStandard`'s error for `spec`, or undefined when the API server's parser accepts it. */
export function cronScheduleError(spec: string): string | undefined {
  try {
    parseStandard(spec);
    return undefined;
  } catch (error) {
    if (error instanceof ScheduleError) return error.message;
    throw error;
  }
}

function parseStandard(input: string): void {
  if (input === '') throw new ScheduleError('empty spec string');
  let spec = input;
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const space = spec.indexOf(' ');
    // robfig slices spec[eq+1:-1] here and panics (kube-apiserver answers 500); no schedule follows anyway.
    if (space < 0) throw new ScheduleError(`time zone prefix without a schedule: ${spec}`);
    const zone = spec.slice(spec.indexOf('=') + 1, space);
    const zoneError = loadLocationError(zone);
    if (zoneError !== undefined) throw new ScheduleError(`provided bad location ${zone}: ${zoneError}`);
    spec = spec.slice(space).replace(GO_TRIM, '');
  }
  if (spec.startsWith('@')) return parseDescriptor(spec);
  const fields = spec.match(GO_FIELDS) ?? [];
  if (fields.length !== FIELDS.length) {
    throw new ScheduleError(`expected exactly ${FIELDS.length} fields, found ${fields.length}: [${fields.join(' ')}]`);
  }
  fields.forEach((field, i) => {
    for (const expr of field.split(',')) if (expr !== '') parseRange(expr, FIELDS[i] as Bounds);
  });
}

function parseDescriptor(spec: string): void {
  if (DESCRIPTORS.has(spec)) return;
  if (spec.startsWith('@every ')) {
    const problem = goParseDurationError(spec.slice('@every '.length));
    if (problem !== undefined) throw new ScheduleError(`failed to parse duration ${spec}: ${problem}`);
    return;
  }
  throw new ScheduleError(`unrecognized descriptor: ${spec}`);
}

/** One list item: `*`, `?`, `N` or `N-M`, then optionally `/step`. */
function parseRange(expr: string, bounds: Bounds): void {
  const [range = '', ...steps] = expr.split('/');
  const ends = range.split('-');
  const star = ends[0] === '*' || ends[0] === '?';
  let start: bigint;
  let end: bigint;
  if (star) {
    start = BigInt(bounds.min);
    end = BigInt(bounds.max);
  } else {
    start = numberOrName(ends[0] ?? '', bounds.names);
    if (ends.length > 2) throw new ScheduleError(`too many hyphens: ${expr}`);
    end = ends.length === 2 ? numberOrName(ends[1] ?? '', bounds.names) : start;
  }
  if (steps.length > 1) throw new ScheduleError(`too many slashes: ${expr}`);
  const step = steps.length === 1 ? atoi(steps[0] ?? '') : 1n;
  if (steps.length === 1 && ends.length === 1) end = BigInt(bounds.max);
  if (start < bounds.min) throw new ScheduleError(`beginning of range (${start}) below minimum (${bounds.min}): ${expr}`);
  if (end > bounds.max) throw new ScheduleError(`end of range (${end}) above maximum (${bounds.max}): ${expr}`);
  if (start > end) throw new ScheduleError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0n) throw new ScheduleError(`step of range should be a positive number: ${expr}`);
}

function numberOrName(text: string, known: Bounds['names']): bigint {
  const named = known?.get(goToLower(text));
  return named === undefined ? atoi(text) : BigInt(named);
}

/**
 * Go's `strings.ToLower` as far as it can produce an ASCII name: ASCII letters, and the two non-ASCII
 * runes whose lower case is ASCII (U+0130 → i, U+212A Kelvin → k); anything else cannot match a name.
 */
function goToLower(text: string): string {
  return text.replace(/[A-Z\u0130\u212a]/g, (c) => (c === '\u0130' ? 'i' : c === '\u212a' ? 'k' : c.toLowerCase()));
}

/** Go `strconv.Atoi` (base 10, optional sign, int64 range) followed by robfig's check for negatives. */
function atoi(text: string): bigint {
  if (!/^[+-]?[0-9]+$/.test(text)) {
    throw new ScheduleError(`failed to parse int from ${text}: strconv.Atoi: parsing ${goStrconvQuote(text)}: invalid syntax`);
  }
  const value = BigInt(text);
  if (value > INT64_MAX || value < -INT64_MAX - 1n) {
    throw new ScheduleError(`failed to parse int from ${text}: strconv.Atoi: parsing ${goStrconvQuote(text)}: value out of range`);
  }
  if (value < 0n) throw new ScheduleError(`negative number (${value}) not allowed: ${text}`);
  return value;
}
