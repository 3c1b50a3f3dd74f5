/**
 * The CronJob schedule check kube-apiserver runs: `cron.ParseStandard` of github.com/robfig/cron/v3
 * (5 fields, names for months and weekdays, `*`/`?`, ranges, steps, lists, `@hourly`-style
 * descriptors, `@every <duration>`, an optional `TZ=`/`CRON_TZ=` prefix), returning its error text or
 * undefined. A hand port because the messages are the API: cron-parser accepts a different grammar
 * (6 fields, `L`, `#`) and words its errors differently.
 */

interface Bounds {
  readonly min: number;
  readonly max: number;
  readonly names?: Readonly<Record<string, number>>;
}

const minutes: Bounds = { min: 0, max: 59 };
const hours: Bounds = { min: 0, max: 23 };
const dom: Bounds = { min: 1, max: 31 };
const months: Bounds = {
  min: 1,
  max: 12,
  names: { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 },
};
const dow: Bounds = { min: 0, max: 6, names: { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 } };

const descriptors = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

class CronError extends Error {}

/** robfig's `ParseStandard` error for `spec`, or undefined when it parses. */
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
    const eq = spec.indexOf('=');
    const zone = space < 0 ? spec.slice(eq + 1) : spec.slice(eq + 1, space);
    const err = loadLocationError(zone);
    if (err) throw new CronError(`provided bad location ${zone}: ${err}`);
    spec = space < 0 ? '' : spec.slice(space).trim();
  }
  if (spec.startsWith('@')) {
    parseDescriptor(spec);
    return;
  }
  const fields = spec.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5) {
    // Go prints the []string with %s: "[a b c]".
    throw new CronError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  }
  const ranges = [minutes, hours, dom, months, dow];
  fields.forEach((field, i) => getField(field, ranges[i] ?? minutes));
}

function parseDescriptor(spec: string): void {
  if (descriptors.has(spec)) return;
  const every = '@every ';
  if (spec.startsWith(every)) {
    const duration = spec.slice(every.length);
    if (!/^([+-]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/.test(duration) && duration !== '0') {
      throw new CronError(`failed to parse duration ${spec}: time: invalid duration ${JSON.stringify(duration)}`);
    }
    return;
  }
  throw new CronError(`unrecognized descriptor: ${spec}`);
}

function getField(field: string, r: Bounds): void {
  for (const expr of field.split(',')) getRange(expr, r);
}

function getRange(expr: string, r: Bounds): void {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = (rangeAndStep[0] ?? '').split('-');
  const low = lowAndHigh[0] ?? '';
  let start: number;
  let end: number;
  if (low === '*' || low === '?') {
    start = r.min;
    end = r.max;
  } else {
    start = parseIntOrName(low, r.names);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseIntOrName(lowAndHigh[1] ?? '', r.names);
    else throw new CronError(`too many hyphens: ${expr}`);
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = mustParseInt(rangeAndStep[1] ?? '');
    // "N/step" means "N-max/step".
    if (lowAndHigh.length === 1) end = r.max;
  } else if (rangeAndStep.length > 2) {
    throw new CronError(`too many slashes: ${expr}`);
  }
  if (start < r.min) throw new CronError(`beginning of range (${start}) below minimum (${r.min}): ${expr}`);
  if (end > r.max) throw new CronError(`end of range (${end}) above maximum (${r.max}): ${expr}`);
  if (start > end) throw new CronError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new CronError(`step of range should be a positive number: ${expr}`);
}

function parseIntOrName(expr: string, names: Bounds['names']): number {
  const named = names?.[expr.toLowerCase()];
  return named ?? mustParseInt(expr);
}

/** Go `strconv.Atoi` plus robfig's negative check. */
function mustParseInt(expr: string): number {
  if (!/^[+-]?\d+$/.test(expr)) throw new CronError(`failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: invalid syntax`);
  const num = Number(expr);
  if (!Number.isSafeInteger(num)) throw new CronError(`failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: value out of range`);
  if (num < 0) throw new CronError(`negative number (${num}) not allowed: ${expr}`);
  return num;
}

/** Go `time.LoadLocation`'s error for a zone name, via the ICU time zone database. */
export function loadLocationError(zone: string): string | undefined {
  if (zone === '' || zone === 'UTC' || zone === 'Local') return undefined;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return undefined;
  } catch {
    return `unknown time zone ${zone}`;
  }
}
