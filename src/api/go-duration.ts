import { goQuote } from './go-quote.ts';

/**
 * Go's `time.ParseDuration`, which robfig/cron runs on the argument of `@every`: a sign, then one or
 * more `<decimal><unit>` terms (units ns, us, µs, μs, ms, s, m, h), or a bare "0"; the total must fit
 * in an int64 of nanoseconds. Validation needs Go's error text, the expected-interval metric the value.
 */

const UNITS: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['\u00b5s', 1_000n],
  ['\u03bcs', 1_000n],
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);
const LIMIT = 1n << 63n;

/** Go's error for `time.ParseDuration(text)`, or undefined when it parses. */
export function goParseDurationError(text: string): string | undefined {
  const parsed = parseGoDuration(text);
  return typeof parsed === 'string' ? parsed : undefined;
}

/** `time.ParseDuration(text)` in milliseconds, or undefined when Go would refuse it. */
export function goDurationMs(text: string): number | undefined {
  const parsed = parseGoDuration(text);
  return typeof parsed === 'string' ? undefined : Number(parsed) / 1e6;
}

/** The duration in nanoseconds (signed), or Go's error text. */
function parseGoDuration(text: string): bigint | string {
  const invalid = `time: invalid duration ${goQuote(text)}`;
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') return invalid;
  let total = 0n;
  while (rest !== '') {
    const term = /^([0-9]*)(?:\.([0-9]*))?/.exec(rest);
    const whole = term?.[1] ?? '';
    const fraction = term?.[2];
    // Go needs a digit before or after the point: ".5s" and "5.s" parse, "." does not.
    if (whole === '' && (fraction === undefined || fraction === '')) return invalid;
    let value = 0n;
    for (const digit of whole) {
      value = value * 10n + BigInt(digit);
      if (value > LIMIT) return invalid;
    }
    rest = rest.slice(term?.[0].length ?? 0);
    const unitText = /^[^.0-9]*/.exec(rest)?.[0] ?? '';
    if (unitText === '') return `time: missing unit in duration ${goQuote(text)}`;
    rest = rest.slice(unitText.length);
    const unit = UNITS.get(unitText);
    if (unit === undefined) return `time: unknown unit ${goQuote(unitText)} in duration ${goQuote(text)}`;
    if (value > LIMIT / unit) return invalid;
    value *= unit;
    value += fractionNanos(fraction ?? '', unit);
    if (value > LIMIT) return invalid;
    total += value;
    if (total > LIMIT) return invalid;
  }
  if (!negative && total > LIMIT - 1n) return invalid;
  return negative ? -total : total;
}

/** Go's `leadingFraction` and `uint64(float64(f) * (float64(unit) / scale))`: digits past int64 are dropped. */
function fractionNanos(digits: string, unit: bigint): bigint {
  let f = 0n;
  let scale = 1;
  for (const digit of digits) {
    const next = f * 10n + BigInt(digit);
    if (f > (LIMIT - 1n) / 10n || next > LIMIT) break;
    f = next;
    scale *= 10;
  }
  if (f === 0n) return 0n;
  return BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
}

