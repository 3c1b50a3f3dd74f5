import { describe, expect, it } from 'vitest';
import { KubeEventRecorder, type EventWriter } from '../../src/controller/event-recorder.ts';
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { FakeClock } from '../../src/runtime/clock.ts';

const schedule: KubeObject = { apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', metadata: { name: 'nightly-etcd', namespace: 'kubelings', uid: 'u-1', resourceVersion: '7' } };

class FakeEvents implements EventWriter {
  readonly created: KubeObject[] = [];
  readonly patched: { ref: { namespace: string; name: string }; patch: unknown }[] = [];
  missing = false;
  async create(event: KubeObject) { this.created.push(event); return event; }
  async patch(ref: { namespace: string; name: string }, patch: unknown) {
    if (this.missing) throw new ApiStatusError(statusErrors.notFound({ group: '', resource: 'events' }, ref.name));
    this.patched.push({ ref, patch });
    return {};
  }
}

/** The schedule `name` in `namespace`. */
const inNamespace = (namespace: string, name: string): KubeObject => ({ ...schedule, metadata: { ...schedule.metadata, namespace, name, uid: `${namespace}/${name}` } });
const settle = () => new Promise((resolve) => setImmediate(resolve));

function setup() {
  const writer = new FakeEvents();
  const clock = new FakeClock(Date.UTC(2026, 10, 30, 1, 0, 0));
  const errors: unknown[] = [];
  const recorder = new KubeEventRecorder({ writer, clock, instance: 'pod-1', onError: (e) => errors.push(e) });
  return { writer, clock, recorder, errors };
}

describe('KubeEventRecorder', () => {
  it('creates a core/v1 Event naming the involved object', async () => {
    const { writer, recorder } = setup();
    recorder.event(schedule, 'Normal', 'Created', 'Created CronJob "nightly-etcd"');
    await recorder.flush();
    expect(writer.created).toEqual([
      expect.objectContaining({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: expect.stringMatching(/^nightly-etcd\.[0-9a-f]+$/), namespace: 'kubelings' },
        involvedObject: { apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', name: 'nightly-etcd', namespace: 'kubelings', uid: 'u-1', resourceVersion: '7' },
        reason: 'Created',
        message: 'Created CronJob "nightly-etcd"',
        type: 'Normal',
        count: 1,
        firstTimestamp: '2026-11-30T01:00:00Z',
        source: { component: 'backupschedule-controller' },
        reportingInstance: 'pod-1',
      }),
    ]);
  });

  it('aggregates a repeated event by patching count and lastTimestamp instead of creating another', async () => {
    const { writer, clock, recorder } = setup();
    recorder.event(schedule, 'Normal', 'Updated', 'same');
    clock.step(5_000);
    recorder.event(schedule, 'Normal', 'Updated', 'same');
    recorder.event(schedule, 'Normal', 'Updated', 'same');
    await recorder.flush();
    expect(writer.created).toHaveLength(1);
    const name = writer.created[0]!.metadata.name!;
    expect(writer.patched).toEqual([
      { ref: { namespace: 'kubelings', name }, patch: { count: 2, lastTimestamp: '2026-11-30T01:00:05Z' } },
      { ref: { namespace: 'kubelings', name }, patch: { count: 3, lastTimestamp: '2026-11-30T01:00:05Z' } },
    ]);
  });

  it('creates a new Event for a different message', async () => {
    const { writer, recorder } = setup();
    recorder.event(schedule, 'Normal', 'Updated', 'one');
    recorder.event(schedule, 'Normal', 'Updated', 'two');
    await recorder.flush();
    expect(writer.created.map((e) => e['message'])).toEqual(['one', 'two']);
  });

  it('creates a fresh Event when the aggregated one expired', async () => {
    const { writer, recorder } = setup();
    recorder.event(schedule, 'Warning', 'InvalidSpec', 'bad');
    await recorder.flush();
    writer.missing = true;
    recorder.event(schedule, 'Warning', 'InvalidSpec', 'bad');
    await recorder.flush();
    expect(writer.created).toHaveLength(2);
  });

  it('cuts a message to 1024 characters when it is recorded, so a full backlog holds little', async () => {
    const { writer, recorder } = setup();
    recorder.event(schedule, 'Warning', 'ChildRejected', 'x'.repeat(100_000));
    await recorder.flush();
    expect(writer.created[0]!['message']).toBe(`${'x'.repeat(1021)}...`);
  });

  it('keeps Event names within 253 characters for the longest object names', async () => {
    const { writer, recorder } = setup();
    recorder.event({ ...schedule, metadata: { ...schedule.metadata, name: 'a'.repeat(253) } }, 'Normal', 'Created', 'x');
    await recorder.flush();
    expect(writer.created[0]!.metadata.name!.length).toBeLessThanOrEqual(253);
  });

  it('writes one Event at a time, in order', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const order: string[] = [];
    const writer: EventWriter = {
      create: async (event) => {
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        order.push(String(event['message']));
        inFlight--;
        return event;
      },
      patch: async () => ({}),
    };
    const recorder = new KubeEventRecorder({ writer });
    for (const m of ['a', 'b', 'c', 'd']) recorder.event(schedule, 'Normal', 'Created', m);
    await recorder.flush();
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    expect(maxInFlight).toBe(1);
  });

  it('drops Events beyond the backlog and says so, like client-go when its queue is full', async () => {
    const writer = new FakeEvents();
    const dropped: string[] = [];
    const recorder = new KubeEventRecorder({ writer, maxBacklog: 2, onDrop: (e, why) => dropped.push(`${e.message}:${why}`) });
    for (const m of ['1', '2', '3', '4']) recorder.event(schedule, 'Normal', 'Created', m);
    await recorder.flush();
    // The first is taken off the backlog at once; two wait; the fourth finds the backlog full.
    expect(writer.created.map((e) => e['message'])).toEqual(['1', '2', '3']);
    expect(dropped).toEqual(['4:backlog']);
  });

  it('paces Events at the global rate after a burst, dropping none of a namespace within its share', async () => {
    const writer = new FakeEvents();
    const clock = new FakeClock();
    const dropped: string[] = [];
    const recorder = new KubeEventRecorder({ writer, clock, eventsPerSecond: 2, eventBurst: 3, onDrop: (e, why) => dropped.push(`${e.message}:${why}`) });
    for (const m of ['1', '2', '3', '4', '5']) recorder.event(schedule, 'Normal', 'Created', m);
    await settle();
    expect(writer.created.map((e) => e['message'])).toEqual(['1', '2', '3']);
    clock.step(499);
    await settle();
    expect(writer.created).toHaveLength(3);
    clock.step(1);
    await settle();
    expect(writer.created.map((e) => e['message'])).toEqual(['1', '2', '3', '4']);
    clock.step(500);
    await recorder.flush();
    expect(writer.created.map((e) => e['message'])).toEqual(['1', '2', '3', '4', '5']);
    expect(dropped).toEqual([]);
  });

  it('shares the backlog per namespace: a flood fills only its own share, and another namespace\'s Event is written next', async () => {
    const writer = new FakeEvents();
    const clock = new FakeClock();
    const dropped: string[] = [];
    const recorder = new KubeEventRecorder({ writer, clock, eventsPerSecond: 1, eventBurst: 1, namespaceBacklog: 5, onDrop: (e, why) => dropped.push(why) });
    for (let i = 0; i < 600; i++) recorder.event(inNamespace('flood', `s-${i}`), 'Warning', 'ImageNotAllowed', `flood ${i}`);
    recorder.event(inNamespace('quiet', 'mine'), 'Warning', 'ImageNotAllowed', 'quiet');
    // The first flood Event went out at once; 5 wait in the flood's share, the rest are dropped.
    expect(dropped.filter((why) => why === 'budget')).toHaveLength(594);
    for (let i = 0; i < 3; i++) {
      clock.step(1_000);
      await settle();
    }
    // Namespaces take turns in the order their Events came: the flood's next one was there before.
    expect(writer.created.map((e) => e['message'])).toEqual(['flood 0', 'flood 1', 'quiet', 'flood 2']);
  });

  it('makes room in a full backlog by dropping the newest Event of the namespace with the most waiting', async () => {
    const writer = new FakeEvents();
    const clock = new FakeClock();
    const dropped: string[] = [];
    const recorder = new KubeEventRecorder({ writer, clock, eventsPerSecond: 1, eventBurst: 1, maxBacklog: 4, onDrop: (e, why) => dropped.push(`${e.message}:${why}`) });
    // 'a 0' goes out at once; 4 wait: the backlog is full.
    for (let i = 0; i < 5; i++) recorder.event(inNamespace('a', 'x'), 'Normal', 'Created', `a ${i}`);
    recorder.event(inNamespace('b', 'x'), 'Normal', 'Created', 'b 0');
    recorder.event(inNamespace('c', 'x'), 'Normal', 'Created', 'c 0');
    recorder.event(inNamespace('b', 'x'), 'Normal', 'Created', 'b 1');
    // a: 1 waiting, b: 2, c: 1 — now b has the most.
    recorder.event(inNamespace('a', 'x'), 'Normal', 'Created', 'a 5');
    // a: 2, b: 1, c: 1 — a namespace with as many as the most gets nothing more in.
    recorder.event(inNamespace('a', 'x'), 'Normal', 'Created', 'a 6');
    expect(dropped).toEqual(['a 4:backlog', 'a 3:backlog', 'a 2:backlog', 'b 1:backlog', 'a 6:backlog']);
    for (let i = 0; i < 4; i++) {
      clock.step(1_000);
      await settle();
    }
    expect(writer.created.map((e) => e['message'])).toEqual(['a 0', 'a 1', 'b 0', 'c 0', 'a 5']);
  });

  it('stamps an Event with the time it was recorded, not the time its turn came', async () => {
    const writer = new FakeEvents();
    const clock = new FakeClock(Date.UTC(2026, 10, 30, 1, 0, 0));
    const recorder = new KubeEventRecorder({ writer, clock, eventsPerSecond: 1, eventBurst: 1 });
    recorder.event(schedule, 'Normal', 'Created', 'first');
    recorder.event(schedule, 'Normal', 'Created', 'second');
    clock.step(1_000);
    await recorder.flush();
    expect(writer.created.map((e) => e['firstTimestamp'])).toEqual(['2026-11-30T01:00:00Z', '2026-11-30T01:00:00Z']);
  });

  it('lets Events wait while the controller is busy, at most maxDeferMs', async () => {
    const writer = new FakeEvents();
    const clock = new FakeClock();
    let busy = true;
    const recorder = new KubeEventRecorder({ writer, clock, deferWhile: () => busy, maxDeferMs: 1_000, deferPollMs: 50 });

    recorder.event(schedule, 'Normal', 'Created', 'first');
    clock.step(500);
    await settle();
    expect(writer.created).toEqual([]);
    busy = false;
    clock.step(50);
    await settle();
    expect(writer.created.map((e) => e['message'])).toEqual(['first']);

    busy = true;
    recorder.event(schedule, 'Normal', 'Created', 'second');
    for (let t = 0; t < 950; t += 50) {
      clock.step(50);
      await settle();
    }
    expect(writer.created).toHaveLength(1);
    for (let t = 0; t < 100; t += 50) {
      clock.step(50);
      await settle();
    }
    expect(writer.created.map((e) => e['message'])).toEqual(['first', 'second']);
  });

  it('reports a failed write to onError and never throws to the caller', async () => {
    const errors: unknown[] = [];
    const failing = new KubeEventRecorder({ writer: { create: () => Promise.reject(new Error('forbidden')), patch: () => Promise.resolve() }, onError: (e) => errors.push(e) });
    expect(() => failing.event(schedule, 'Normal', 'Created', 'x')).not.toThrow();
    await failing.flush();
    expect(errors).toEqual([new Error('forbidden')]);
  });
});
