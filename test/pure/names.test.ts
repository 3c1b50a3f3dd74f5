import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { childNameFor, labelValueFor, MAX_CHILD_NAME_LENGTH, truncateWithHash } from '../../src/pure/index.ts';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const segment = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
const objectName = fc.array(segment, { minLength: 1, maxLength: 8 }).map((s) => s.join('.')).filter((n) => n.length <= 253);

describe('childNameFor', () => {
  it('keeps names of up to 52 characters unchanged', () => {
    const name = 'a'.repeat(52);
    expect(childNameFor(name)).toBe(name);
  });

  it('shortens a 53-character name to 52 with a 10-character sha256 suffix', () => {
    const name = `${'a'.repeat(52)}b`;
    const hash = createHash('sha256').update(name).digest('hex').slice(0, 10);
    expect(childNameFor(name)).toBe(`${'a'.repeat(41)}-${hash}`);
  });

  it('gives two long names with the same prefix different children', () => {
    const prefix = 'x'.repeat(60);
    expect(childNameFor(`${prefix}-one`)).not.toBe(childNameFor(`${prefix}-two`));
  });

  it('never ends the prefix on a dash or dot before the hash', () => {
    expect(childNameFor(`${'a'.repeat(40)}.${'b'.repeat(30)}`)).toMatch(/^a{40}-[0-9a-f]{10}$/);
  });

  it('replaces dots and adds a hash so that a.b and a-b get different children', () => {
    expect(childNameFor('db.prod')).toMatch(/^db-prod-[0-9a-f]{10}$/);
    expect(childNameFor('db.prod')).not.toBe(childNameFor('db-prod'));
    expect(childNameFor('db-prod')).toBe('db-prod');
  });

  it('returns a DNS-1123 label, stable, as CronJob name of at most 52 characters for any object name', () => {
    fc.assert(
      fc.property(objectName, (name) => {
        const child = childNameFor(name);
        expect(child.length).toBeLessThanOrEqual(MAX_CHILD_NAME_LENGTH);
        expect(child).toMatch(DNS1123_LABEL);
        expect(childNameFor(name)).toBe(child);
      }),
    );
  });
});

describe('labelValueFor', () => {
  it('returns a valid label value of at most 63 characters for any object name', () => {
    fc.assert(
      fc.property(objectName, (name) => {
        const value = labelValueFor(name);
        expect(value.length).toBeLessThanOrEqual(63);
        expect(value).toMatch(LABEL_VALUE);
        expect(name.length <= 63 ? value === name : value !== name).toBe(true);
      }),
    );
  });
});

describe('truncateWithHash', () => {
  it.each([
    ['short', 10, 'short'],
    ['exactly-ten', 11, 'exactly-ten'],
  ])('leaves %s (max %i) alone', (value, max, expected) => {
    expect(truncateWithHash(value, max)).toBe(expected);
  });
});
