import { afterEach, describe, expect, it } from 'vitest';
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { Informer, type InformerOptions } from '../../src/runtime/informer.ts';
import { FakeListWatch, obj, page } from './fake-list-watch.ts';

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

const running: Informer<KubeObject>[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((i) => i.stop()));
});

function setup(extra: Partial<InformerOptions<KubeObject>> = {}) {
  const clock = new FakeClock();
  const source = new FakeListWatch();
  const informer = new Informer<KubeObject>({ name: 'configmaps', source, clock, random: () => 0.5, ...extra });
  running.push(informer);
  const events: string[] = [];
  informer.addEventHandler({
    onAdd: (o) => events.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}`),
    onUpdate: (a, b) => events.push(`update ${a.metadata.name}@${a.metadata.resourceVersion}->${b.metadata.resourceVersion}`),
    onDelete: (o) => events.push(`delete ${o.metadata.name}@${o.metadata.resourceVersion}`),
  });
  return { clock, source, informer, events };
}

describe('Informer', () => {
  it('caches the list and hands handlers the old and the new object of each watch event', async () => {
    const { source, informer, events } = setup();
    source.expectList(page([obj('a', '1'), obj('b', '2')], '2'));
    const watch = source.expectWatch();
    informer.start();
    await settle();
    expect(informer.hasSynced()).toBe(true);
    watch.push({ type: 'MODIFIED', object: obj('a', '3') }).push({ type: 'DELETED', object: obj('b', '4') }).push({ type: 'ADDED', object: obj('c', '5') });
    await settle();
    expect(events).toEqual(['add a@1', 'add b@2', 'update a@1->3', 'delete b@4', 'add c@5']);
    expect(informer.store.keys().sort()).toEqual(['ns/a', 'ns/c']);
    expect(informer.store.get('ns/a')?.metadata.resourceVersion).toBe('3');
  });

  it('turns a relist after 410 into adds, updates and deletes against the cache, deletes carrying the last known object', async () => {
    const { source, informer, events } = setup();
    source.expectList(page([obj('keep', '1'), obj('change', '2'), obj('gone', '3')], '3'));
    const watch = source.expectWatch();
    source.expectList(page([obj('keep', '1'), obj('change', '7'), obj('new', '8')], '9'));
    source.expectWatch();
    informer.start();
    await settle();
    events.length = 0;
    watch.fail(new ApiStatusError(statusErrors.expired()));
    await settle();
    expect(events).toEqual(['update change@2->7', 'add new@8', 'delete gone@3']);
    expect(informer.store.keys().sort()).toEqual(['ns/change', 'ns/keep', 'ns/new']);
    expect(source.unexpected).toEqual([]);
  });

  it('replays the cache as adds to a handler registered after the sync', async () => {
    const { source, informer } = setup();
    source.expectList(page([obj('a', '1')], '1'));
    source.expectWatch();
    informer.start();
    await settle();
    const late: string[] = [];
    informer.addEventHandler({ onAdd: (o) => late.push(o.metadata.name!) });
    expect(late).toEqual(['a']);
  });

  it('re-delivers every cached object as an update after the jittered resync period', async () => {
    const { clock, source, informer, events } = setup({ resyncPeriodMs: 60_000, random: () => 1 });
    source.expectList(page([obj('a', '1')], '1'));
    source.expectWatch();
    informer.start();
    await settle();
    events.length = 0;
    clock.step(65_999);
    expect(events).toEqual([]);
    clock.step(1);
    expect(events).toEqual(['update a@1->1']);
  });

  it('keeps delivering when a handler throws', async () => {
    const { source, informer, events } = setup();
    informer.addEventHandler({ onAdd: () => { throw new Error('boom'); } });
    source.expectList(page([], '1'));
    source.expectWatch().push({ type: 'ADDED', object: obj('a', '2') }).push({ type: 'ADDED', object: obj('b', '3') });
    informer.start();
    await settle();
    expect(events).toEqual(['add a@2', 'add b@3']);
  });
});
