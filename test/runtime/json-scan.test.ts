import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ArrayElements, locateArray, scanValue, type ValueLimits } from '../../src/runtime/json-scan.ts';

const UNLIMITED: ValueLimits = { maxBytes: Infinity, maxNodes: Infinity, maxDepth: Infinity };
const buf = (text: string): Buffer => Buffer.from(text, 'utf8');

/** The elements of the array at `path` in `text`, as JSON.parse reads each slice. */
function elements(text: string, path: readonly string[] = [], limits = UNLIMITED): unknown[] {
  const b = buf(text);
  const range = locateArray(b, path);
  if (!range) throw new Error('no array');
  const cursor = new ArrayElements(b, range);
  const out: unknown[] = [];
  for (let e = cursor.next(limits); e !== undefined; e = cursor.next(limits)) {
    if (e.kind !== 'value') return [...out, e];
    out.push(JSON.parse(b.toString('utf8', e.start, e.end)));
  }
  return out;
}

describe('scanValue', () => {
  it.each([
    ['"a"', 3, 0, 0],
    ['"a\\"}]" ,', 7, 0, 0],
    ['"\\\\"]', 4, 0, 0],
    ['123.5e3,', 7, 0, 0],
    ['true}', 4, 0, 0],
    ['{"a":[1,{"b":"}]"}]}', 20, 5, 3],
    ['[[], [[]]] tail', 10, 4, 3],
  ])('finds where %j ends, its nodes (objects, arrays, members) and depth', (text, end, nodes, depth) => {
    expect(scanValue(buf(text), 0)).toEqual({ kind: 'value', start: 0, end, nodes, depth });
  });

  it.each(['[}', '{]', '[1,2', '"open', '', ']'])('calls %j malformed', (text) => {
    expect(scanValue(buf(text), 0).kind).toBe('malformed');
  });

  it('stops at the first bound passed, before scanning the rest', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    expect(scanValue(buf(deep), 0, { ...UNLIMITED, maxDepth: 100 })).toEqual({ kind: 'too-deep', start: 0 });
    expect(scanValue(buf(deep), 0, { ...UNLIMITED, maxDepth: 200_000 })).toMatchObject({ kind: 'value', depth: 200_000, nodes: 200_000 });
    expect(scanValue(buf(`[${'{},'.repeat(10)}{}]`), 0, { ...UNLIMITED, maxNodes: 11 })).toEqual({ kind: 'too-many-nodes', start: 0 });
    expect(scanValue(buf(`[${'{},'.repeat(9)}{}]`), 0, { ...UNLIMITED, maxNodes: 11 })).toMatchObject({ kind: 'value', nodes: 11 });
    expect(scanValue(buf('{"a":1,"b":{"c":":"}}'), 0, { ...UNLIMITED, maxNodes: 4 })).toEqual({ kind: 'too-many-nodes', start: 0 });
    expect(scanValue(buf('{"a":1,"b":{"c":":"}}'), 0, { ...UNLIMITED, maxNodes: 5 })).toMatchObject({ kind: 'value', nodes: 5 });
    expect(scanValue(buf(`["${'x'.repeat(100)}"]`), 0, { ...UNLIMITED, maxBytes: 100 })).toEqual({ kind: 'too-large', start: 0 });
    expect(scanValue(buf(`"${'x'.repeat(100)}"`), 0, { ...UNLIMITED, maxBytes: 100 })).toEqual({ kind: 'too-large', start: 0 });
    expect(scanValue(buf(`["${'x'.repeat(96)}"]`), 0, { ...UNLIMITED, maxBytes: 100 })).toMatchObject({ kind: 'value', end: 100 });
  });
});

describe('locateArray', () => {
  it('finds the array at a path of keys, as JSON.parse reads the document', () => {
    const text = '{"kind":"X","request":{"uid":"u","objects":[1,2]}}';
    const range = locateArray(buf(text), ['request', 'objects']);
    expect(text.slice(range!.start, range!.end)).toBe('[1,2]');
  });

  it('reads keys with their escapes decoded, and takes the last of a repeated key (JSON.parse does)', () => {
    expect(elements('{"request":{"objects":[1]},"req\\u0075est":{"objects":[2],"obj\\u0065cts":[3]}}', ['request', 'objects'])).toEqual([3]);
    expect(locateArray(buf('{"request":{"objects":[1]},"request":{"uid":"u"}}'), ['request', 'objects'])).toBeUndefined();
  });

  it.each([
    ['[1]', ['request']],
    ['{"request":{"objects":{}}}', ['request', 'objects']],
    ['{"request":[{"objects":[]}]}', ['request', 'objects']],
    ['{"request":{"objects":[1,2}}', ['request', 'objects']],
    ['{"request" {"objects":[]}}', ['request', 'objects']],
    ['not json', ['request']],
  ])('finds no array in %j at %j', (text, path) => {
    expect(locateArray(buf(text), path)).toBeUndefined();
  });
});

describe('ArrayElements', () => {
  it('returns each element, whitespace around them allowed', () => {
    expect(elements(' [ 1 ,\n"a,]" , {"b":[2]} , null ] ')).toEqual([1, 'a,]', { b: [2] }, null]);
    expect(elements('[]')).toEqual([]);
    expect(elements('[ \n ]')).toEqual([]);
  });

  it.each(['[1 2]', '[1,]', '[,1]', '[1,,2]'])('says what separates the elements of %j is malformed', (text) => {
    expect(elements(text).at(-1)).toMatchObject({ kind: 'malformed' });
  });

  it('bounds each element on its own', () => {
    expect(elements('[[[1]],[[[2]]]]', [], { ...UNLIMITED, maxDepth: 2 })).toEqual([[[1]], { kind: 'too-deep', start: 7 }]);
  });

  it('splits any JSON array into its elements exactly (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue()), fc.constantFrom('', ' ', '\n\t '), (values, space) => {
        const text = `[${space}${values.map((v) => JSON.stringify(v, null, space.length > 1 ? 1 : 0)).join(`${space},${space}`)}${space}]`;
        expect(elements(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });
});
