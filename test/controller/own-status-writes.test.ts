import { describe, expect, it } from 'vitest';
import { OwnStatusWrites } from '../../src/controller/backupschedule/own-status-writes.ts';

/** A write whose answer the test releases. */
function pending<T>() {
  let resolve!: (value: T) => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

function setup() {
  const foreign: string[] = [];
  const writes = new OwnStatusWrites((key) => foreign.push(key));
  const write = (key: string, rv: string) => writes.track(key, () => Promise.resolve({ rv }), (s) => s.rv);
  return { foreign, writes, write };
}

describe('OwnStatusWrites', () => {
  it('takes its own status write coming back as its own, once: no reconcile for it', async () => {
    const { foreign, writes, write } = setup();
    await write('ns/a', '11');
    expect(writes.isForeign('ns/a', '11')).toBe(false);
    expect(writes.size).toBe(0);
    expect(foreign).toEqual([]);
  });

  it('takes a status-only update with another resourceVersion as someone else\'s (a hand-written Ready=True)', async () => {
    const { writes, write } = setup();
    expect(writes.isForeign('ns/a', '5')).toBe(true);
    await write('ns/a', '11');
    expect(writes.isForeign('ns/a', '12')).toBe(true);
    expect(writes.isForeign('ns/b', '11')).toBe(true);
  });

  it('takes a foreign write after its own as foreign, even when its own was never seen back (a relist skipped it)', async () => {
    const { writes, write } = setup();
    await write('ns/a', '11');
    expect(writes.isForeign('ns/a', '13')).toBe(true);
  });

  it('decides updates that arrive before the write\'s answer when the answer comes: its own is no reconcile', async () => {
    const { foreign, writes } = setup();
    const answer = pending<{ rv: string }>();
    const tracked = writes.track('ns/a', () => answer.promise, (s) => s.rv);
    expect(writes.isForeign('ns/a', '11')).toBe(false);
    answer.resolve({ rv: '11' });
    await tracked;
    expect(foreign).toEqual([]);
    // Seen already: a later update with that version (a relist) is not taken for it again.
    expect(writes.size).toBe(0);
  });

  it('reports a foreign update that arrived while its own write was in flight once the answer shows it was not its own', async () => {
    const { foreign, writes } = setup();
    const answer = pending<{ rv: string }>();
    const tracked = writes.track('ns/a', () => answer.promise, (s) => s.rv);
    expect(writes.isForeign('ns/a', '10')).toBe(false);
    answer.resolve({ rv: '11' });
    await tracked;
    expect(foreign).toEqual(['ns/a']);
    expect(writes.isForeign('ns/a', '11')).toBe(false);
  });

  it('reports what arrived during a write that failed (nothing of its own was stored), and passes the error on', async () => {
    const { foreign, writes } = setup();
    const answer = pending<{ rv: string }>();
    const tracked = writes.track('ns/a', () => answer.promise, (s) => s.rv);
    expect(writes.isForeign('ns/a', '10')).toBe(false);
    answer.reject(new Error('409 Conflict'));
    await expect(tracked).rejects.toThrow('409 Conflict');
    expect(foreign).toEqual(['ns/a']);
    expect(writes.size).toBe(0);
  });

  it('forgets a deleted schedule, so what it keeps is bounded by the schedules that exist', async () => {
    const { writes, write } = setup();
    for (let i = 0; i < 100; i++) await write(`ns/s-${i}`, String(i));
    expect(writes.size).toBe(100);
    for (let i = 0; i < 100; i++) writes.forget(`ns/s-${i}`);
    expect(writes.size).toBe(0);
  });
});
