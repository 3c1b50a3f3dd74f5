/**
 * Kubernetes `resource.Quantity` as kube-apiserver parses it (apimachinery pkg/api/resource
 * ParseQuantity): `<sign><digits>[.<digits>]<suffix>`, suffix one of the binary `Ki Mi Gi Ti Pi Ei`,
 * the decimal `n u m k M G T P E` or none, or a decimal exponent `e<int>`/`E<int>`. Values are exact:
 * the magnitude is not capped (`1e100` is a valid quantity; the exponent must fit an int32), except
 * that a binary-suffixed value is capped at 2^63-1 (`9Ei` reads as `8Ei` - 1); a non-zero value finer
 * than a nano is rounded away from zero to 1n. Comparison is exact, as `Quantity.Cmp` is.
 */

/** A parsed quantity: `mantissa` × 10^`exponent`, the mantissa without trailing zeros (0n for zero). */
export interface Quantity {
  readonly mantissa: bigint;
  readonly exponent: number;
}

/** kube's ErrFormatWrong text. */
const FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const SUFFIX_WRONG = "unable to parse quantity's suffix";
const DECIMAL: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const INT32 = 2 ** 31;
const MAX_BINARY = 2n ** 63n - 1n;
const NANO = -9;

/** The quantity `text` stands for, or kube's reason to reject it. */
export function parseQuantity(text: string): Quantity | { readonly error: string } {
  // parseQuantityString: sign, digits, optional point and digits, then suffix letters, sign, digits.
  const match = /^([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*)([-+]?[0-9]*)$/.exec(text);
  if (text === '' || match === null) return { error: FORMAT_WRONG };
  const [, sign = '', whole = '', fraction = '', letters = '', tail = ''] = match;
  // Go stops at the first non-zero after the sign: "-", "+" and "000" are zero, whatever follows.
  if (/^[+-]?0*$/.test(text)) return { mantissa: 0n, exponent: 0 };
  const suffix = letters + tail;
  let exponent: number;
  let binary = 0;
  if (Object.hasOwn(DECIMAL, suffix)) {
    exponent = DECIMAL[suffix] ?? 0;
  } else if (Object.hasOwn(BINARY, suffix)) {
    exponent = 0;
    binary = BINARY[suffix] ?? 0;
  } else if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E') && /^[+-]?[0-9]+$/.test(suffix.slice(1))) {
    exponent = Number(suffix.slice(1));
    // kube 1.29-1.33 parse it as int64 and truncate to int32, later versions reject: never send one.
    if (!(exponent >= -INT32 && exponent < INT32)) return { error: `${SUFFIX_WRONG}: exponent out of the int32 range` };
  } else {
    return { error: SUFFIX_WRONG };
  }
  let mantissa = BigInt(`${whole}${fraction}` || '0') << BigInt(binary);
  exponent -= fraction.length;
  // Round a non-zero value finer than a nano up to the next nano (inf.RoundUp).
  if (exponent < NANO && mantissa !== 0n) {
    const drop = NANO - exponent;
    const digits = mantissa.toString().length;
    mantissa = drop > digits ? 1n : (mantissa + 10n ** BigInt(drop) - 1n) / 10n ** BigInt(drop);
    exponent = NANO;
  }
  if (binary > 0 && exponent <= 0 && mantissa > MAX_BINARY * 10n ** BigInt(-exponent)) {
    mantissa = MAX_BINARY;
    exponent = 0;
  }
  return normalize(sign === '-' ? -mantissa : mantissa, exponent);
}

function normalize(mantissa: bigint, exponent: number): Quantity {
  if (mantissa === 0n) return { mantissa: 0n, exponent: 0 };
  let m = mantissa;
  let e = exponent;
  while (m % 10n === 0n) {
    m /= 10n;
    e += 1;
  }
  return { mantissa: m, exponent: e };
}

/** -1, 0 or 1 as `a` is less than, equal to or greater than `b` (exact, whatever the exponents). */
export function compareQuantities(a: Quantity, b: Quantity): -1 | 0 | 1 {
  const signA = a.mantissa > 0n ? 1 : a.mantissa < 0n ? -1 : 0;
  const signB = b.mantissa > 0n ? 1 : b.mantissa < 0n ? -1 : 0;
  if (signA !== signB) return signA > signB ? 1 : -1;
  if (signA === 0) return 0;
  const order = compareMagnitudes(signA > 0 ? a.mantissa : -a.mantissa, a.exponent, signB > 0 ? b.mantissa : -b.mantissa, b.exponent);
  return order === 0 ? 0 : signA > 0 ? order : order > 0 ? -1 : 1;
}

function compareMagnitudes(absA: bigint, expA: number, absB: bigint, expB: number): -1 | 0 | 1 {
  // Orders of magnitude first, so 1e2000000000 never becomes a BigInt.
  const magnitudeA = absA.toString().length + expA;
  const magnitudeB = absB.toString().length + expB;
  if (magnitudeA !== magnitudeB) return magnitudeA > magnitudeB ? 1 : -1;
  const left = expA > expB ? absA * 10n ** BigInt(expA - expB) : absA;
  const right = expB > expA ? absB * 10n ** BigInt(expB - expA) : absB;
  return left === right ? 0 : left > right ? 1 : -1;
}

/** Whether the parse result is a quantity rather than an error. */
export function isQuantity(result: Quantity | { readonly error: string }): result is Quantity {
  return !('error' in result);
}
