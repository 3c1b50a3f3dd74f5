import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compactHeap } from '../../src/runtime/heap.ts';
import { StringInterner } from '../../src/runtime/string-interner.ts';

describe('StringInterner', () => {
  it('keeps every value equal while sharing repeated strings between objects', () => {
    const interner = new StringInterner();
    const make = (name: string) => JSON.parse(JSON.stringify({
      metadata: { name, uid: `uid-${name}`, namespace: 'team-a', labels: { app: 'backup' } },
      spec: { schedule: '0 2 * * *', containers: [{ image: 'etcd:3.5', args: ['a', 'b'] }], n: 3, on: true, none: null },
    })) as Record<string, unknown>;
    const a = interner.internDeep(make('a'));
    const b = interner.internDeep(make('b'));
    expect(a).toEqual(make('a'));
    expect(b).toEqual(make('b'));
    // name and uid are skipped (unique per object); namespace, labels, spec strings are remembered.
    expect(interner.size).toBe(['team-a', 'backup', '0 2 * * *', 'etcd:3.5', 'a', 'b'].length);
    expect(interner.intern('0 2 * * *')).toBe('0 2 * * *');
  });

  it('does not remember strings longer than maxLength', () => {
    const interner = new StringInterner({ maxLength: 4 });
    for (const v of ['12345', '12345']) expect(interner.intern(v)).toBe(v);
    expect(interner.size).toBe(0);
  });

  it('starts the string table afresh when maxEntries is reached, and shares new values from then on', () => {
    const interner = new StringInterner({ maxEntries: 3 });
    // Full after value-2: value-3 starts a new table, value-6 and value-9 again.
    for (let i = 0; i < 10; i++) interner.intern(`value-${i}`);
    expect(interner.size).toBe(1);
    interner.intern('value-9');
    expect(interner.size).toBe(1);
    // A value first seen after the table filled is remembered (it used not to be, ever again).
    interner.intern('new-value');
    expect(interner.size).toBe(2);
  });

  it('does not remember condition messages: they name their object and generation, so each status change brings a new one', () => {
    const interner = new StringInterner();
    for (let generation = 1; generation <= 100; generation++) {
      interner.internDeep({ status: { conditions: [{ type: 'Ready', status: 'True', message: `CronJob "x" matches generation ${generation}` }] } });
    }
    expect(interner.size).toBe(['Ready', 'True'].length);
  });
});

describe('compactHeap', () => {
  it('runs a memory-reducing GC without --expose-gc, leaving the global gc unexposed', () => {
    const hadGlobalGc = typeof (globalThis as { gc?: unknown }).gc === 'function';
    let garbage: unknown[] | undefined = Array.from({ length: 200_000 }, (_, i) => ({ i, s: `value-${i}` }));
    const before = process.memoryUsage().heapUsed;
    garbage = undefined;
    compactHeap();
    expect(garbage).toBeUndefined();
    expect(process.memoryUsage().heapUsed).toBeLessThan(before - 5 * 2 ** 20);
    expect(typeof (globalThis as { gc?: unknown }).gc === 'function').toBe(hadGlobalGc);
  });
});

describe('StringInterner subtree sharing', () => {
  const cronJob = (name: string) => JSON.parse(JSON.stringify({
    metadata: { name, labels: { app: 'backup', instance: name } },
    spec: {
      jobTemplate: { metadata: { labels: { app: 'backup', instance: name } } },
      containers: [{ name: 'backup', securityContext: { capabilities: { drop: ['ALL'] } }, volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }] }],
      big: { text: 'x'.repeat(300) },
    },
  })) as { metadata: { labels: object }; spec: { jobTemplate: { metadata: { labels: object } }; containers: { securityContext: object; volumeMounts: object[] }[]; big: object } };

  it('shares equal small subtrees between objects and within one, keeping every value equal', () => {
    const interner = new StringInterner();
    const a = interner.internDeep(cronJob('a'));
    const b = interner.internDeep(cronJob('b'));
    expect(a).toEqual(cronJob('a'));
    expect(b).toEqual(cronJob('b'));
    expect(b.spec.containers[0]?.securityContext).toBe(a.spec.containers[0]?.securityContext);
    expect(b.spec.containers[0]?.volumeMounts).toBe(a.spec.containers[0]?.volumeMounts);
    expect(a.spec.jobTemplate.metadata.labels).toBe(a.metadata.labels);
    expect(b.metadata.labels).not.toBe(a.metadata.labels);
  });

  it.each([
    ['longer than maxTreeLength', {}, 'big'],
    ['when maxTreeLength is 0', { maxTreeLength: 0 }, 'containers'],
  ])('does not share subtrees %s', (_name, options, field) => {
    const interner = new StringInterner(options);
    const a = interner.internDeep(cronJob('a'));
    const b = interner.internDeep(cronJob('a'));
    expect(b.spec[field as 'big' | 'containers']).not.toBe(a.spec[field as 'big' | 'containers']);
    expect(b).toEqual(a);
  });

  it('starts afresh when maxTrees is reached and keeps sharing from then on', () => {
    const interner = new StringInterner({ maxTrees: 3 });
    for (let i = 0; i < 10; i++) interner.internDeep({ n: [i] });
    expect(interner.trees).toBeLessThanOrEqual(3);
    const a = interner.internDeep({ x: { drop: ['ALL'] } });
    const b = interner.internDeep({ x: { drop: ['ALL'] } });
    expect(b.x).toBe(a.x);
  });

  it('shares only equal subtrees: names in the same order, strings apart from numbers, skipped strings by their text', () => {
    const interner = new StringInterner();
    const a = interner.internDeep({ x: { p: 1, q: 2 }, y: { p: '1' }, z: { name: 'a' } });
    const b = interner.internDeep({ x: { q: 2, p: 1 }, y: { p: 1 }, z: { name: 'b' } });
    const c = interner.internDeep({ x: { q: 2, p: 1 }, y: { p: 1 }, z: { name: 'b' } });
    expect(b).toEqual({ x: { q: 2, p: 1 }, y: { p: 1 }, z: { name: 'b' } });
    expect(Object.keys(b.x)).toEqual(['q', 'p']);
    expect([b.x, b.y, b.z]).not.toContain(a.x);
    expect(b.y).not.toBe(a.y);
    expect(b.z).not.toBe(a.z);
    expect([c.x, c.y, c.z]).toEqual([b.x, b.y, b.z]);
    expect(c.x).toBe(b.x);
    expect(c.z).toBe(b.z);
  });

  it('tells apart subtrees whose content hashes collide', () => {
    // "v7pwu" and "ve5fa" have the same 32-bit FNV-1a hash, so these subtrees have the same hash too.
    const interner = new StringInterner();
    const a = interner.internDeep({ x: { k: 'v7pwu' } });
    const b = interner.internDeep({ x: { k: 've5fa' } });
    const c = interner.internDeep({ x: { k: 've5fa' } });
    expect(b.x).toEqual({ k: 've5fa' });
    expect(b.x).not.toBe(a.x);
    expect(c.x).toBe(b.x);
  });

  it('keeps at most 8 subtrees per hash, so that crafted collisions cannot turn a lookup into a scan', () => {
    // Each pair collides from the hash state the pairs before it leave (found by brute force), so any
    // choice of one piece per pair makes the same hash: 2^4 = 16 distinct strings.
    const pairs = [['v7pwu', 've5fa'], ['v11uzx', 'v1c2ad'], ['v76wu', 'vawfa'], ['v11uzx', 'v1c2ad']];
    const colliding = pairs.reduce<string[]>((all, pair) => all.flatMap((s) => pair.map((piece) => s + piece)), ['']);
    expect(new Set(colliding).size).toBe(16);
    const interner = new StringInterner();
    const interned = colliding.map((text) => interner.internDeep({ x: { k: text } }));
    expect(interned.map((o) => o.x.k)).toEqual(colliding);
    // 8 inner subtrees and 8 outer ones: the outer subtrees' hashes collide as well.
    expect(interner.trees).toBe(16);
    expect(interner.internDeep({ x: { k: colliding[0]! } }).x).toBe(interned[0]!.x);
  });

  it('returns a value equal to any JSON value it is given, whatever was interned before (seeded)', () => {
    // Small tables, so that both start afresh often; a few leaves, so that equal subtrees recur.
    const leaf = fc.oneof(fc.constantFrom('a', 'b', '1', 'name', ''), fc.constantFrom(0, 1, -1, 1.5), fc.boolean(), fc.constant(null));
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, leaf, tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 3 }),
      object: fc.dictionary(fc.constantFrom('name', 'p', 'q', '0', 'uid'), tie('value'), { maxKeys: 3 }),
    })).value;
    fc.assert(fc.property(fc.array(json, { minLength: 1, maxLength: 20 }), fc.integer({ min: 1, max: 8 }), (values, maxTrees) => {
      const interner = new StringInterner({ maxTrees, maxEntries: 4, maxTreeLength: 40 });
      for (const value of values) {
        const text = JSON.stringify(value);
        expect(JSON.stringify(interner.internDeep(JSON.parse(text)))).toBe(text);
      }
    }), { seed: 20261130, numRuns: 300 });
  });
});
