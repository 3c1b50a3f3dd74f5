import { describe, expect, it } from 'vitest';
import { StringInterner } from '../../src/controller/string-interner.ts';

describe('StringInterner', () => {
  it('keeps values equal and structure intact', () => {
    const interner = new StringInterner();
    const obj = { a: 'x', list: ['y', { b: 'x', n: 1, t: true, z: null }] };
    expect(interner.deep(structuredClone(obj))).toEqual(obj);
  });

  it('remembers each distinct short string once', () => {
    const interner = new StringInterner();
    interner.deep({ a: 'same', b: ['same', 'other'], c: { d: 'same' } });
    expect(interner.size).toBe(2);
  });

  it('leaves strings longer than maxLength alone', () => {
    const interner = new StringInterner({ maxLength: 3 });
    interner.deep({ a: 'long string', b: 'ok' });
    expect(interner.size).toBe(1);
  });

  it('starts afresh when the table is full, so unique values cannot accumulate', () => {
    const interner = new StringInterner({ maxEntries: 3 });
    for (const s of ['a', 'b', 'c', 'd', 'e']) interner.string(s);
    expect(interner.size).toBeLessThanOrEqual(3);
  });
});
