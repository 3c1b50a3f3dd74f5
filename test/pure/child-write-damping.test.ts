import { describe, expect, it } from 'vitest';
import { childWriteExpired, decideChildWrite, holdMs, recordChildWrite, rejectedRetryMs, type ChildDriftNow } from '../../src/pure/child-write-damping.ts';

const T = 1_000_000;
const now = (drift: string[], resourceVersion = '10', generation = 1): ChildDriftNow => ({ uid: 'u', generation, resourceVersion, drift });

describe('holdMs', () => {
  it('doubles from 5 s per step and stops at 10 minutes', () => {
    expect([1, 2, 3, 4].map((n) => holdMs(n))).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(holdMs(20)).toBe(600_000);
    expect(holdMs(3, { baseMs: 100, maxMs: 250 })).toBe(250);
  });
});

describe('decideChildWrite', () => {
  it('writes when nothing is remembered', () => {
    expect(decideChildWrite(undefined, now(['spec.schedule']), T)).toEqual({ kind: 'write' });
  });

  it('holds a write the server did not keep while the child is unchanged, until the backoff passes', () => {
    const last = recordChildWrite(undefined, now(['spec.timeZone']), { resourceVersion: '11', drift: ['spec.timeZone'] }, T);
    expect(last).toMatchObject({ notPersisted: ['spec.timeZone'], repeats: 1, resourceVersion: '11' });
    expect(decideChildWrite(last, now(['spec.timeZone'], '11'), T + 1_000)).toEqual({ kind: 'hold', why: 'ChildNotPersisted', fields: ['spec.timeZone'], retryInMs: 4_000 });
    expect(decideChildWrite(last, now(['spec.timeZone'], '11'), T + 5_000)).toEqual({ kind: 'write' });
  });

  it.each([
    ['the child changed (another resourceVersion)', now(['spec.timeZone'], '12')],
    ['the schedule has a new generation', now(['spec.timeZone'], '11', 2)],
    ['other fields drift now', now(['spec.schedule', 'spec.timeZone'], '11')],
  ])('writes at once after a write that was not kept when %s', (_name, current) => {
    const last = recordChildWrite(undefined, now(['spec.timeZone']), { resourceVersion: '11', drift: ['spec.timeZone'] }, T);
    expect(decideChildWrite(last, current, T + 1)).toEqual({ kind: 'write' });
  });

  it('counts a write that still was not kept as a repeat, so the hold doubles', () => {
    const first = recordChildWrite(undefined, now([]), { resourceVersion: '11', drift: ['spec.timeZone'] }, T);
    const second = recordChildWrite(first, now(['spec.timeZone'], '11'), { resourceVersion: '11', drift: ['spec.timeZone'] }, T + 5_000);
    expect(second.repeats).toBe(2);
    expect(decideChildWrite(second, now(['spec.timeZone'], '11'), T + 5_001)).toMatchObject({ kind: 'hold', retryInMs: 9_999 });
  });

  it('holds drift that another writer undid after the third restore in a row, not before', () => {
    let last = undefined;
    let rv = 10;
    for (let i = 1; i <= 3; i++) {
      const current = now(['spec.image'], String(rv++));
      expect(decideChildWrite(last, current, T + i)).toEqual({ kind: 'write' });
      last = recordChildWrite(last, current, { resourceVersion: String(rv++), drift: [] }, T + i);
      expect(last.repeats).toBe(i);
    }
    expect(decideChildWrite(last, now(['spec.image'], String(rv)), T + 10)).toEqual({ kind: 'hold', why: 'DriftRecurring', fields: ['spec.image'], retryInMs: 4_993 });
    // Our own write, seen in the cache, is never "recurring".
    expect(decideChildWrite(last, now(['spec.image'], last!.resourceVersion), T + 10)).toEqual({ kind: 'write' });
  });

  it('forgets writes older than the window', () => {
    const last = recordChildWrite(undefined, now(['spec.timeZone']), { resourceVersion: '11', drift: ['spec.timeZone'] }, T);
    expect(childWriteExpired(last, T + 599_999)).toBe(false);
    expect(childWriteExpired(last, T + 600_000)).toBe(true);
    expect(recordChildWrite(last, now(['spec.timeZone'], '11'), { resourceVersion: '11', drift: ['spec.timeZone'] }, T + 600_000).repeats).toBe(1);
  });
});

describe('rejectedRetryMs', () => {
  it('waits as long as the rejection has lasted, from 30 s to 10 minutes', () => {
    expect(rejectedRetryMs(undefined, T)).toBe(30_000);
    expect(rejectedRetryMs(T - 10_000, T)).toBe(30_000);
    expect(rejectedRetryMs(T - 120_000, T)).toBe(120_000);
    expect(rejectedRetryMs(T - 3_600_000, T)).toBe(600_000);
    expect(rejectedRetryMs(Number.NaN, T)).toBe(30_000);
  });
});
