import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareQuantities, isQuantity, parseQuantity, type Quantity } from '../../src/api/quantity.ts';
import { validateBackupSchedule } from '../../src/api/index.ts';
import { QUANTITY_PATTERN } from '../../src/api/schema.ts';
import { crdPattern } from './crd-regexp.ts';
import { validSchedule } from './invalid-cases.ts';

const q = (text: string): Quantity => {
  const parsed = parseQuantity(text);
  if (!isQuantity(parsed)) throw new Error(`${text}: ${parsed.error}`);
  return parsed;
};

const FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

describe('parseQuantity (apimachinery resource.ParseQuantity)', () => {
  it.each([
    ['0', 0n, 0],
    ['1', 1n, 0],
    ['100m', 1n, -1],
    ['1.5', 15n, -1],
    ['1.', 1n, 0],
    ['.5Gi', 536870912n, 0],
    ['1Ki', 1024n, 0],
    ['1k', 1n, 3],
    ['1e3', 1n, 3],
    ['1E-3', 1n, -3],
    ['1e100', 1n, 100],
    ['+5M', 5n, 6],
    ['-1Gi', -1073741824n, 0],
    ['0.1n', 1n, -9],
    ['1e-20', 1n, -9],
    ['9Ei', 2n ** 63n - 1n, 0],
    ['8Ei', 2n ** 63n - 1n, 0],
    ['000', 0n, 0],
    ['-', 0n, 0],
    ['Ki', 0n, 0],
  ])('reads %j as %s × 10^%s', (text, mantissa, exponent) => {
    const value = q(text);
    expect(compareQuantities(value, { mantissa, exponent })).toBe(0);
  });

  it.each([
    ['', FORMAT],
    ['two', FORMAT],
    ['1e1.5', FORMAT],
    ['1.5.5', FORMAT],
    ['1 Gi', FORMAT],
    ['1ki', "unable to parse quantity's suffix"],
    ['1i', "unable to parse quantity's suffix"],
    ['1e', "unable to parse quantity's suffix"],
    ['1ee5', "unable to parse quantity's suffix"],
    ['1e3000000000', "unable to parse quantity's suffix: exponent out of the int32 range"],
  ])('rejects %j: %s', (text, error) => {
    expect(parseQuantity(text)).toEqual({ error });
  });

  it.each([
    ['1Gi', '1024Mi', 0],
    ['1G', '1Gi', -1],
    ['1001m', '1', 1],
    ['1e2000000000', '1e1999999999', 1],
    ['1e-2000000000', '1n', 0],
    ['0', '-1', 1],
    ['-2', '-1', -1],
    ['0.5', '500m', 0],
    ['1e100', '999999999999999999999999E', 1],
  ])('compares %j with %j exactly: %i', (a, b, order) => {
    expect(compareQuantities(q(a), q(b))).toBe(order);
    expect(compareQuantities(q(b), q(a))).toBe(order === 0 ? 0 : -order);
  });
});

describe('validateBackupSchedule on spec.resources', () => {
  const errorsFor = (resources: unknown) => {
    const input = validSchedule();
    input['spec'].resources = resources;
    return validateBackupSchedule(input);
  };

  it.each([
    [{ requests: { memory: '512Mi' }, limits: { memory: '512Mi' } }],
    [{ requests: { cpu: '0.5' }, limits: { cpu: '500m' } }],
    [{ requests: { memory: '1e100' } }],
    [{ requests: { memory: '1G' }, limits: { memory: '1Gi' } }],
    [{ requests: { 'ephemeral-storage': '9Ei' }, limits: { 'ephemeral-storage': '8Ei' } }],
    [{ limits: { cpu: '+2' } }],
  ])('accepts %j, as kube-apiserver does', (resources) => {
    expect(errorsFor(resources)).toEqual([]);
  });

  it('names the request and the limit when a request is above its limit', () => {
    expect(errorsFor({ requests: { memory: '1Gi' }, limits: { memory: '512Mi' } })).toEqual([
      { field: 'spec.resources.requests.memory', message: 'spec.resources.requests.memory: must be less than or equal to memory limit of 512Mi, got 1Gi' },
    ]);
  });

  it('names a negative quantity (the CRD pattern also refuses the sign)', () => {
    expect(errorsFor({ limits: { memory: '-1Gi' } }).map((e) => e.field)).toEqual(['spec.resources.limits.memory']);
  });

  it('names an exponent out of range with the parser error', () => {
    expect(errorsFor({ limits: { cpu: '1e9999999999' } })).toEqual([
      { field: 'spec.resources.limits.cpu', message: `spec.resources.limits.cpu: invalid quantity "1e9999999999": unable to parse quantity's suffix: exponent out of the int32 range` },
    ]);
  });
});

describe('the CRD pattern of quantities', () => {
  const quantityLike = fc
    .array(fc.constantFrom('+', '-', '0', '1', '5', '9', '.', 'e', 'E', 'i', 'K', 'k', 'M', 'm', 'n', 'u', 'G', 'T', 'P', 'Ei', 'Ki', '3000000000', ' '), { minLength: 1, maxLength: 8 })
    .map((parts) => parts.join(''));

  it('admits only what ParseQuantity reads, and every non-negative quantity with a digit, in JavaScript and RE2 alike', () => {
    const pattern = crdPattern(QUANTITY_PATTERN);
    let admitted = 0;
    fc.assert(
      fc.property(quantityLike, (text) => {
        const matched = pattern(text);
        const parsed = parseQuantity(text);
        const readable = isQuantity(parsed) || parsed.error.includes('int32');
        if (matched) {
          admitted += 1;
          expect(readable, text).toBe(true);
        } else if (isQuantity(parsed) && parsed.mantissa >= 0n && /^\+?\.?[0-9]/.test(text)) {
          expect.fail(`the pattern refuses ${JSON.stringify(text)}, which kube accepts`);
        }
      }),
      { numRuns: 5000 },
    );
    // About 6 % of these strings are quantities (280–350 of 5,000 from run to run); the bound only
    // guards against a run that admitted too few to mean anything.
    expect(admitted).toBeGreaterThan(150);
  });
});
