import { goQuote, goStrconvQuote } from '../../../src/api/go-quote.ts';
import { existsSync, readFileSync } from 'node:fs';
import { TIME_ZONE_NAMES } from '../../../src/api/time-zone-names.ts';

/**
 * The CronJob schedule check kube-apiserver runs: `cron.ParseStandard` of github.com/robfig/cron/v3
 * (5 fields, names for months and weekdays, `*`/`?`, ranges, steps, lists, `@hourly`-style
 * descriptors, `@every <duration>`, an optional `TZ=`/`CRON_TZ=` prefix), returning its error text or
 * undefined. A hand port, kept apart from src/api/cron-schedule.ts on purpose: the property test in
 * test/api compares the two. cron-parser accepts a different grammar (6 fields, `L`, `#`).
 */

interface Bounds {
  readonly min: number;
  readonly max: number;
  readonly names?: ReadonlyMap<string, number>;
}

const minutes: Bounds = { min: 0, max: 59 };
const hours: Bounds = { min: 0, max: 23 };
const dom: Bounds = { min: 1, max: 31 };
const months: Bounds = {
  min: 1,
  max: 12,
  names: new Map(Object.entries({ jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 })),
};
const dow: Bounds = { min: 0, max: 6, names: new Map(Object.entries({ sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 })) };

const descriptors = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

/** Go's `unicode.IsSpace` is exactly Unicode's White_Space property. */
const goSpace = /\p{White_Space}+/u;

class CronError extends Error {}

/** Thrown where robfig/cron v3.0.1 panics (`TZ=` with no space after it); kube-apiserver answers 500. */
export class CronPanic extends Error {}

/** robfig's `ParseStandard` error for `spec`, or undefined when it parses; throws CronPanic where Go panics. */
export function cronParseError(spec: string): string | undefined {
  try {
    parseStandard(spec);
    return undefined;
  } catch (err) {
    if (err instanceof CronError) return err.message;
    throw err;
  }
}

function parseStandard(input: string): void {
  let spec = input;
  if (spec.length === 0) throw new CronError('empty spec string');
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const space = spec.indexOf(' ');
    if (space < 0) throw new CronPanic(`runtime error: slice bounds out of range [:-1] parsing schedule ${JSON.stringify(spec)}`);
    const zone = spec.slice(spec.indexOf('=') + 1, space);
    const err = loadLocationError(zone);
    if (err) throw new CronError(`provided bad location ${zone}: ${err}`);
    spec = goTrimSpace(spec.slice(space));
  }
  if (spec.startsWith('@')) {
    parseDescriptor(spec);
    return;
  }
  const fields = spec.split(goSpace).filter((f) => f !== '');
  if (fields.length !== 5) {
    // Go prints the []string with %s: "[a b c]".
    throw new CronError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  }
  const ranges = [minutes, hours, dom, months, dow];
  fields.forEach((field, i) => getField(field, ranges[i] ?? minutes));
}

function goTrimSpace(s: string): string {
  const chars = [...s];
  while (chars.length > 0 && goSpace.test(chars[0] ?? '')) chars.shift();
  while (chars.length > 0 && goSpace.test(chars[chars.length - 1] ?? '')) chars.pop();
  return chars.join('');
}

function parseDescriptor(spec: string): void {
  if (descriptors.has(spec)) return;
  const every = '@every ';
  if (spec.startsWith(every)) {
    const err = goDurationError(spec.slice(every.length));
    if (err) throw new CronError(`failed to parse duration ${spec}: ${err}`);
    return;
  }
  throw new CronError(`unrecognized descriptor: ${spec}`);
}

const UNIT_NANOS: Readonly<Record<string, bigint>> = { ns: 1n, us: 1000n, 'µs': 1000n, 'μs': 1000n, ms: 10n ** 6n, s: 10n ** 9n, m: 60n * 10n ** 9n, h: 3600n * 10n ** 9n };

/**
 * Go `time.ParseDuration`'s error, or undefined: `[-+]?` then terms `<digits>[.<digits>]<unit>` (a
 * digit before or after the point), or "0"; the sum must fit int64 nanoseconds (2^63 only negative).
 */
function goDurationError(text: string): string | undefined {
  const invalid = `time: invalid duration ${goQuote(text)}`;
  const sign = text[0] === '-' || text[0] === '+' ? text[0] : '';
  const body = text.slice(sign.length);
  if (body === '0') return undefined;
  if (body === '') return invalid;
  const max = 2n ** 63n;
  let total = 0n;
  for (const [, int = '', frac, unit = ''] of body.matchAll(/([0-9]*)(\.[0-9]*)?([^0-9.]*)/gy)) {
    if (int === '' && frac === undefined && unit === '') break;
    if (int === '' && (frac ?? '').length <= 1) return invalid;
    const whole = BigInt(int || '0');
    if (whole > max) return invalid;
    if (unit === '') return `time: missing unit in duration ${goQuote(text)}`;
    if (!Object.hasOwn(UNIT_NANOS, unit)) return `time: unknown unit ${goQuote(unit)} in duration ${goQuote(text)}`;
    const nanos = UNIT_NANOS[unit] ?? 0n;
    let term = whole * nanos;
    if (term > max) return invalid;
    // Go keeps the fraction digits that fit an int64 and scales them in float64.
    let kept = '';
    for (const d of (frac ?? '').slice(1)) {
      if (BigInt(kept + d) > max) break;
      kept += d;
    }
    if (kept !== '' && BigInt(kept) > 0n) term += BigInt(Math.trunc(Number(BigInt(kept)) * (Number(nanos) / 10 ** kept.length)));
    if (term > max) return invalid;
    total += term;
    if (total > max) return invalid;
  }
  return sign === '-' || total < max ? undefined : invalid;
}

function getField(field: string, r: Bounds): void {
  // strings.FieldsFunc on ',': empty items are skipped, so "1,,2" and "," parse.
  for (const expr of field.split(',')) if (expr !== '') getRange(expr, r);
}

function getRange(expr: string, r: Bounds): void {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = (rangeAndStep[0] ?? '').split('-');
  const low = lowAndHigh[0] ?? '';
  let start: bigint;
  let end: bigint;
  if (low === '*' || low === '?') {
    start = BigInt(r.min);
    end = BigInt(r.max);
  } else {
    start = parseIntOrName(low, r.names);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseIntOrName(lowAndHigh[1] ?? '', r.names);
    else throw new CronError(`too many hyphens: ${expr}`);
  }
  let step = 1n;
  if (rangeAndStep.length === 2) {
    step = mustParseInt(rangeAndStep[1] ?? '');
    // "N/step" means "N-max/step".
    if (lowAndHigh.length === 1) end = BigInt(r.max);
  } else if (rangeAndStep.length > 2) {
    throw new CronError(`too many slashes: ${expr}`);
  }
  if (start < BigInt(r.min)) throw new CronError(`beginning of range (${start}) below minimum (${r.min}): ${expr}`);
  if (end > BigInt(r.max)) throw new CronError(`end of range (${end}) above maximum (${r.max}): ${expr}`);
  if (start > end) throw new CronError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0n) throw new CronError(`step of range should be a positive number: ${expr}`);
}

function parseIntOrName(expr: string, names: Bounds['names']): bigint {
  // Go's strings.ToLower maps rune by rune (unicode.ToLower: U+0130 → "i", U+212A → "k").
  const lower = [...expr].map((c) => (c === '\u0130' ? 'i' : c === '\u212a' ? 'k' : c.length === 1 && c <= '\u007f' ? c.toLowerCase() : c)).join('');
  const named = names?.get(lower);
  return named === undefined ? mustParseInt(expr) : BigInt(named);
}

/** Go `strconv.Atoi` (int64) plus robfig's negative check. */
function mustParseInt(expr: string): bigint {
  if (!/^[+-]?[0-9]+$/.test(expr)) throw new CronError(`failed to parse int from ${expr}: strconv.Atoi: parsing ${goStrconvQuote(expr)}: invalid syntax`);
  const num = BigInt(expr);
  if (num >= 2n ** 63n || num < -(2n ** 63n)) throw new CronError(`failed to parse int from ${expr}: strconv.Atoi: parsing ${goStrconvQuote(expr)}: value out of range`);
  if (num < 0n) throw new CronError(`negative number (${num}) not allowed: ${expr}`);
  return num;
}

/**
 * Where Go's `time.LoadLocation` looks first on Linux. Reading it makes this port an oracle independent
 * of the validator's committed name list (src/api/time-zone-names.ts), which it falls back to only on a
 * machine without tzdata, as Go falls back to its embedded copy.
 */
const ZONEINFO = '/usr/share/zoneinfo';
const systemZoneinfo = existsSync(`${ZONEINFO}/UTC`);
const embeddedZones = new Set(TIME_ZONE_NAMES);
const zoneCache = new Map<string, boolean>();

/** Whether the tz database has `zone`: a TZif file of that exact (case-sensitive) name. */
function zoneExists(zone: string): boolean {
  if (!systemZoneinfo) return embeddedZones.has(zone);
  let known = zoneCache.get(zone);
  if (known === undefined) {
    try {
      known = readFileSync(`${ZONEINFO}/${zone}`).subarray(0, 4).toString('latin1') === 'TZif';
    } catch {
      known = false;
    }
    zoneCache.set(zone, known);
  }
  return known;
}

/** Go `time.LoadLocation`'s error for a zone name: exact, case-sensitive names of the tz database. */
export function loadLocationError(zone: string): string | undefined {
  if (zone === '' || zone === 'UTC' || zone === 'Local') return undefined;
  if (/\.\./.test(zone) || zone[0] === '/' || zone[0] === '\\') return 'time: invalid location name';
  return zoneExists(zone) ? undefined : `unknown time zone ${zone}`;
}
