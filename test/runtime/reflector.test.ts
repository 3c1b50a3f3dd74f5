import { afterEach, describe, expect, it } from 'vitest';
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import { ResponseTooLargeError } from '../../src/kube/kube-client.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { Reflector, type ReflectorOptions, type ReflectorSink } from '../../src/runtime/reflector.ts';
import { errorEvent, FakeListWatch, obj, page } from './fake-list-watch.ts';

/** Lets promise chains run (no real time passes). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

class RecordingSink implements ReflectorSink<KubeObject> {
  readonly calls: string[] = [];
  replace(items: KubeObject[], rv: string): void {
    this.calls.push(`replace(${items.map((o) => o.metadata.name).join(',')})@${rv}`);
  }
  added(o: KubeObject): void {
    this.calls.push(`added ${o.metadata.name}@${o.metadata.resourceVersion}`);
  }
  modified(o: KubeObject): void {
    this.calls.push(`modified ${o.metadata.name}@${o.metadata.resourceVersion}`);
  }
  deleted(o: KubeObject): void {
    this.calls.push(`deleted ${o.metadata.name}@${o.metadata.resourceVersion}`);
  }
}

const running: Reflector<KubeObject>[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop()));
});

function setup(extra: Partial<ReflectorOptions<KubeObject>> = {}) {
  const clock = new FakeClock();
  const source = new FakeListWatch();
  const sink = new RecordingSink();
  const reflector = new Reflector<KubeObject>({ name: 'configmaps', source, sink, clock, random: () => 0, ...extra });
  running.push(reflector);
  return { clock, source, sink, reflector };
}

describe('Reflector', () => {
  it('lists every page with limit 500, then watches from the list resourceVersion with bookmarks', async () => {
    const { source, sink, reflector } = setup({ random: () => 0.5 });
    source.expectList(page([obj('a', '1')], '10', 'token-1')).expectList(page([obj('b', '2')], '10'));
    const watch = source.expectWatch();
    reflector.start();
    await settle();
    expect(source.listCalls.map((c) => [c.limit, c.continue])).toEqual([[500, undefined], [500, 'token-1']]);
    expect(sink.calls).toEqual(['replace(a,b)@10']);
    expect(reflector.hasSynced()).toBe(true);
    expect(source.watchCalls).toEqual([{ resourceVersion: '10', allowWatchBookmarks: true, timeoutSeconds: 450 }]);
    watch.push({ type: 'ADDED', object: obj('c', '11') }).push({ type: 'MODIFIED', object: obj('a', '12') }).push({ type: 'DELETED', object: obj('b', '13') });
    await settle();
    expect(sink.calls.slice(1)).toEqual(['added c@11', 'modified a@12', 'deleted b@13']);
    expect(source.unexpected).toEqual([]);
  });

  it('reads the LIST again from its first page, still paged, when a continue token expired (410), dropping the pages read', async () => {
    // Not client-go's unpaged full LIST: one response of every object (190 MB of a tenant's CronJobs, issue 30) would be held whole.
    const { source, sink, reflector } = setup();
    const expired = new ApiStatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Expired', code: 410, message: 'The provided continue parameter is too old to display a consistent list result.' });
    source.expectList(page([obj('a', '1')], '10', 'token-1')).expectList(expired).expectList(page([obj('a', '1')], '12', 'token-2')).expectList(page([obj('b', '12')], '12'));
    source.expectWatch();
    reflector.start();
    await settle();
    expect(source.listCalls.map((c) => [c.limit, c.continue])).toEqual([[500, undefined], [500, 'token-1'], [500, undefined], [500, 'token-2']]);
    expect(sink.calls).toEqual(['replace(a,b)@12']);
    expect(source.watchCalls.map((w) => w.resourceVersion)).toEqual(['12']);
    expect(source.unexpected).toEqual([]);
  });

  it('doubles the pages after the first up to the growth limit, each grown page capped in bytes, the first page uncapped', async () => {
    const { source, sink, reflector } = setup({ pageSize: 20, pageGrowth: { maxPageSize: 100, maxPageBytes: 4096 } });
    const names = ['a', 'b', 'c', 'd', 'e'];
    names.forEach((name, i) => source.expectList(page([obj(name, String(i + 1))], '10', i < names.length - 1 ? `token-${i + 1}` : undefined)));
    source.expectWatch();
    reflector.start();
    await settle();
    expect(source.listCalls.map((c) => [c.limit, c.continue, c.maxBytes])).toEqual([
      [20, undefined, undefined],
      [40, 'token-1', 4096],
      [80, 'token-2', 4096],
      [100, 'token-3', 4096],
      [100, 'token-4', 4096],
    ]);
    expect(sink.calls).toEqual(['replace(a,b,c,d,e)@10']);
    expect(source.unexpected).toEqual([]);
  });

  it('asks a grown page that passed its byte cap again at the first size, and grows no more in that LIST', async () => {
    const { source, sink, reflector } = setup({ pageSize: 20, pageGrowth: { maxPageSize: 500, maxPageBytes: 4096 } });
    source.expectList(page([obj('a', '1')], '10', 'token-1')).expectList(new ResponseTooLargeError('GET /api/v1/configmaps', 4096));
    source.expectList(page([obj('b', '2')], '10', 'token-2')).expectList(page([obj('c', '3')], '10'));
    source.expectWatch();
    reflector.start();
    await settle();
    expect(source.listCalls.map((c) => [c.limit, c.continue, c.maxBytes])).toEqual([
      [20, undefined, undefined],
      [40, 'token-1', 4096],
      [20, 'token-1', undefined],
      [20, 'token-2', undefined],
    ]);
    expect(sink.calls).toEqual(['replace(a,b,c)@10']);
    expect(reflector.hasSynced()).toBe(true);
    expect(source.unexpected).toEqual([]);
  });

  it('fails the LIST (the reflector relists) when the continue token of the second reading expires too: never an unpaged LIST', async () => {
    const { source, reflector } = setup();
    const expired = () => new ApiStatusError(statusErrors.expired('The provided continue parameter is too old to display a consistent list result.'));
    source.expectList(page([obj('a', '1')], '10', 'token-1')).expectList(expired()).expectList(page([obj('a', '1')], '12', 'token-2')).expectList(expired());
    source.expectList(page([obj('a', '1')], '13'));
    source.expectWatch();
    reflector.start();
    await settle();
    expect(source.listCalls.map((c) => [c.limit, c.continue])).toEqual([[500, undefined], [500, 'token-1'], [500, undefined], [500, 'token-2'], [500, undefined]]);
    expect(source.listCalls.every((c) => c.limit === 500)).toBe(true);
    expect(source.unexpected).toEqual([]);
  });

  it('asks a page that failed transiently again with its continue token (Retry-After honoured), before failing the LIST', async () => {
    const { clock, source, sink, reflector } = setup();
    const internal = new ApiStatusError(statusErrors.internalError('etcd leader changed'));
    const throttled = new ApiStatusError(statusErrors.tooManyRequests(2));
    source.expectList(page([obj('a', '1')], '10', 'token-1')).expectList(internal).expectList(throttled).expectList(page([obj('b', '2')], '10'));
    source.expectWatch();
    reflector.start();
    await settle();
    expect(source.listCalls).toHaveLength(2);
    clock.step(200); // 100 ms × 2 after the 500
    await settle();
    expect(source.listCalls).toHaveLength(3);
    clock.step(1_999); // the 429's Retry-After: 2 s
    await settle();
    expect(source.listCalls).toHaveLength(3);
    clock.step(1);
    await settle();
    expect(source.listCalls.map((c) => [c.limit, c.continue])).toEqual([[500, undefined], [500, 'token-1'], [500, 'token-1'], [500, 'token-1']]);
    expect(sink.calls).toEqual(['replace(a,b)@10']);
    expect(source.unexpected).toEqual([]);
  });

  it('fails the LIST after three retries of a page, and on an error that asking again cannot fix', async () => {
    const { clock, source, reflector } = setup();
    const internal = (): ApiStatusError => new ApiStatusError(statusErrors.internalError('boom'));
    source.expectList(page([obj('a', '1')], '10', 'token-1')).expectList(internal()).expectList(internal()).expectList(internal()).expectList(internal());
    source.expectList(page([obj('a', '1')], '11', 'token-2')).expectList(new ApiStatusError(statusErrors.forbidden('someone', 'list', { group: '', resource: 'configmaps' }, 'ns')));
    reflector.start();
    await settle();
    for (const ms of [200, 400, 800]) {
      clock.step(ms);
      await settle();
    }
    expect(source.listCalls).toHaveLength(5);
    expect(reflector.phase.phase).toBe('backoff');
    clock.step(800); // the reflector's own backoff, then a LIST whose second page is refused: no retry
    await settle();
    expect(source.listCalls.map((c) => c.continue)).toEqual([undefined, 'token-1', 'token-1', 'token-1', 'token-1', undefined, 'token-2']);
    expect(reflector.phase.phase).toBe('backoff');
    expect(source.unexpected).toEqual([]);
  });

  it('strips managedFields before the sink sees an object, unless a transform replaces the default', async () => {
    const seen: KubeObject[] = [];
    const clock = new FakeClock();
    const source = new FakeListWatch();
    const sink: ReflectorSink<KubeObject> = { replace: (items) => seen.push(...items), added: (o) => seen.push(o), modified: () => {}, deleted: () => {} };
    const reflector = new Reflector<KubeObject>({ name: 'x', source, sink, clock });
    running.push(reflector);
    const withFields = (name: string, rv: string): KubeObject => ({ metadata: { name, resourceVersion: rv, managedFields: [{ manager: 'kubectl' }] } });
    source.expectList(page([withFields('a', '1')], '1'));
    source.expectWatch().push({ type: 'ADDED', object: withFields('b', '2') });
    reflector.start();
    await settle();
    expect(seen.map((o) => [o.metadata.name, o.metadata.managedFields])).toEqual([['a', undefined], ['b', undefined]]);
  });

  it('restarts a cleanly closed watch at once from the last resourceVersion, bookmarks included', async () => {
    const { clock, source, sink, reflector } = setup();
    source.expectList(page([], '5'));
    const first = source.expectWatch();
    const second = source.expectWatch();
    reflector.start();
    await settle();
    clock.step(2_000);
    first.push({ type: 'ADDED', object: obj('a', '6') }).push({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } }).end();
    await settle();
    expect(source.watchCalls.map((c) => c.resourceVersion)).toEqual(['5', '9']);
    expect(sink.calls).toEqual(['replace()@5', 'added a@6']);
    second.push({ type: 'MODIFIED', object: obj('a', '10') });
    await settle();
    expect(sink.calls.at(-1)).toBe('modified a@10');
  });

  it('backs off exponentially from 0.8 s to at most 30 s between failed attempts, never giving up', async () => {
    const { clock, source, reflector } = setup();
    for (let i = 0; i < 8; i++) source.expectList(new ApiStatusError(statusErrors.internalError('etcd down')));
    source.expectList(page([], '1'));
    source.expectWatch();
    reflector.start();
    await settle();
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      const phase = reflector.phase;
      if (phase.phase !== 'backoff') throw new Error(`expected backoff, got ${phase.phase}`);
      delays.push(phase.untilMs - clock.now());
      expect(source.listCalls).toHaveLength(i + 1);
      clock.step(delays[i]! - 1);
      await settle();
      expect(source.listCalls).toHaveLength(i + 1);
      clock.step(1);
      await settle();
    }
    expect(delays).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    expect(reflector.hasSynced()).toBe(true);
    expect(reflector.health().consecutiveFailures).toBe(0);
  });

  it.each([
    ['an HTTP 410 answer to the watch', (w: ReturnType<FakeListWatch['expectWatch']>) => w.fail(new ApiStatusError(statusErrors.expired('too old resource version: 5 (8)')))],
    ['an ERROR event with code 410', (w: ReturnType<FakeListWatch['expectWatch']>) => w.push(errorEvent(statusErrors.expired('too old resource version: 5 (8)')))],
  ])('relists at once after %s', async (_name, expire) => {
    const { source, sink, reflector } = setup();
    source.expectList(page([obj('a', '1')], '5'));
    const watch = source.expectWatch();
    source.expectList(page([obj('b', '7')], '8'));
    source.expectWatch();
    reflector.start();
    await settle();
    expire(watch);
    await settle();
    expect(sink.calls).toEqual(['replace(a)@5', 'replace(b)@8']);
    expect(source.watchCalls.map((c) => c.resourceVersion)).toEqual(['5', '8']);
    expect(source.unexpected).toEqual([]);
  });

  it('waits for the Retry-After of a 429 on LIST rather than the shorter backoff', async () => {
    const { clock, source, reflector } = setup();
    source.expectList(new ApiStatusError(statusErrors.tooManyRequests(5))).expectList(page([], '1'));
    source.expectWatch();
    reflector.start();
    await settle();
    clock.step(4_999);
    await settle();
    expect(source.listCalls).toHaveLength(1);
    clock.step(1);
    await settle();
    expect(source.listCalls).toHaveLength(2);
    expect(reflector.hasSynced()).toBe(true);
  });

  it('restarts a watch that stays silent past the inactivity timeout, but not one that keeps talking', async () => {
    const { clock, source, reflector } = setup({ inactivityTimeoutMs: 60_000 });
    source.expectList(page([], '1'));
    const quiet = source.expectWatch();
    const next = source.expectWatch();
    reflector.start();
    await settle();
    for (let i = 2; i < 6; i++) {
      clock.step(50_000);
      quiet.push({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(i) } } });
      await settle();
    }
    expect(source.watchCalls).toHaveLength(1);
    clock.step(60_000);
    await settle();
    expect(quiet.closedByClient).toBe(true);
    expect(reflector.health().lastError).toMatch(/no event or bookmark for 60000 ms/);
    const phase = reflector.phase;
    expect(phase.phase).toBe('backoff');
    clock.step(800);
    await settle();
    expect(source.watchCalls.map((c) => c.resourceVersion)).toEqual(['1', '5']);
    expect(next.options?.signal?.aborted).toBe(false);
  });

  it('treats a stream that closes immediately without events as a failure, so it cannot hot-loop', async () => {
    const { clock, source, reflector } = setup();
    source.expectList(page([], '1'));
    source.expectWatch().end();
    source.expectWatch();
    reflector.start();
    await settle();
    expect(reflector.phase.phase).toBe('backoff');
    expect(source.watchCalls).toHaveLength(1);
    clock.step(800);
    await settle();
    expect(source.watchCalls).toHaveLength(2);
  });

  it('reports failures in health until a list or watch event succeeds again', async () => {
    const { clock, source, reflector } = setup();
    source.expectList(page([], '1'));
    source.expectWatch().fail(new Error('connection reset'));
    const watch = source.expectWatch();
    reflector.start();
    await settle();
    expect(reflector.health()).toMatchObject({ synced: true, consecutiveFailures: 1, lastError: 'connection reset', phase: 'backoff' });
    clock.step(800);
    await settle();
    watch.push({ type: 'ADDED', object: obj('a', '2') });
    await settle();
    expect(reflector.health()).toMatchObject({ consecutiveFailures: 0, phase: 'watching', lastWatchEventAt: clock.now() });
  });

  it('closes its watch when stopped', async () => {
    const { source, reflector } = setup();
    source.expectList(page([], '1'));
    const watch = source.expectWatch();
    reflector.start();
    await settle();
    await reflector.stop();
    expect(watch.options?.signal?.aborted).toBe(true);
    expect(reflector.phase.phase).toBe('stopped');
  });
});
