import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, type Clock } from '../../src/runtime/clock.ts';
import { LeaderElector, type LeaderElectorOptions } from '../../src/runtime/leader-elector.ts';
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import { createLeaseLock, formatMicroTime, LeaseNotFoundError, type LeaderElectionRecord } from '../../src/runtime/lease-lock.ts';
import { WriteGateClosedError } from '../../src/runtime/write-gate.ts';
import { FakeLeaseLock, FakeLeaseServer, flush, type LinkMode } from './fake-lease-lock.ts';

const locks: FakeLeaseLock[] = [];
afterEach(() => {
  for (const lock of locks.splice(0)) expect(lock.unexpected).toEqual([]);
});

function setup(clock: Clock = new FakeClock()) {
  const server = new FakeLeaseServer(clock);
  const newLock = (): FakeLeaseLock => {
    const lock = new FakeLeaseLock(server, clock);
    locks.push(lock);
    return lock;
  };
  return { server, newLock };
}

function elector(lock: FakeLeaseLock, clock: Clock, identity: string, extra: Partial<LeaderElectorOptions> = {}) {
  const events: string[] = [];
  const e = new LeaderElector({
    lock,
    identity,
    clock,
    random: () => 0,
    onStartedLeading: () => events.push(`started@${clock.now()}`),
    onStoppedLeading: () => events.push(`stopped@${clock.now()}`),
    onNewLeader: (id) => events.push(`leader ${id}`),
    metrics: { setLeader: (on) => events.push(`metric ${on}`) },
    ...extra,
  });
  const controller = new AbortController();
  let finished = false;
  const running = e.run(controller.signal).then(() => void (finished = true));
  return { e, events, controller, running, finished: () => finished };
}

async function advance(clock: FakeClock, ms: number, each?: () => void): Promise<void> {
  await flush();
  for (let i = 0; i < ms; i++) {
    clock.step(1);
    each?.();
    await flush();
    each?.();
  }
}

const held = (holder: string, at: number, extra: Partial<LeaderElectionRecord> = {}): LeaderElectionRecord => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: formatMicroTime(at),
  renewTime: formatMicroTime(at),
  leaseTransitions: 3,
  ...extra,
});

describe('LeaderElector', () => {
  it('acquires an empty lease at once, writing its identity, 15 s and transition 0', async () => {
    const clock = new FakeClock();
    const { server, newLock } = setup(clock);
    const lock = newLock();
    const a = elector(lock, clock, 'a');
    await flush();
    expect(a.e.isLeader()).toBe(true);
    expect(a.e.gate.isOpen()).toBe(true);
    expect(lock.ops()).toEqual(['get', 'update']);
    expect(server.record).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: '2026-01-01T00:00:00.000000Z',
      renewTime: '2026-01-01T00:00:00.000000Z',
      leaseTransitions: 0,
    });
    expect(a.events).toEqual(['leader a', 'metric true', `started@${clock.now()}`]);
    a.controller.abort();
    await a.running;
  });

  it('does not take a lease another holder keeps renewing, and never writes to it', async () => {
    const clock = new FakeClock();
    const { server, newLock } = setup(clock);
    server.externalWrite(held('b', clock.now()));
    const lock = newLock();
    lock.allow.update = false;
    const a = elector(lock, clock, 'a');
    for (let t = 0; t < 60_000; t += 5_000) {
      await advance(clock, 5_000);
      server.externalWrite(held('b', clock.now()));
    }
    expect(a.e.isLeader()).toBe(false);
    expect(a.e.gate.isOpen()).toBe(false);
    expect(new Set(lock.ops())).toEqual(new Set(['get']));
    expect(a.events).toEqual(['leader b']);
    a.controller.abort();
    await a.running;
    expect(a.events).toEqual(['leader b']);
  });

  it.each([
    ['in the past', Date.UTC(2000, 0, 1)],
    ['far in the future (clock skew)', Date.UTC(2031, 0, 1)],
  ])('takes an abandoned lease only leaseDuration after it first saw it, whatever its renewTime (%s)', async (_, renewTime) => {
    const clock = new FakeClock();
    const { server, newLock } = setup(clock);
    server.externalWrite(held('b', renewTime));
    const lock = newLock();
    const a = elector(lock, clock, 'a');
    const start = clock.now();
    let acquiredAt = -1;
    await advance(clock, 20_000, () => {
      if (acquiredAt < 0 && a.e.isLeader()) acquiredAt = clock.now() - start;
    });
    // Attempts run every 2 s (no jitter here); the first after 15 s of no change is at 16 s.
    expect(acquiredAt).toBe(16_000);
    expect(server.record).toMatchObject({ holderIdentity: 'a', leaseTransitions: 4 });
    a.controller.abort();
    await a.running;
  });

  it('restarts its expiry clock whenever it sees the record change', async () => {
    const clock = new FakeClock();
    const { server, newLock } = setup(clock);
    server.externalWrite(held('b', 0));
    const a = elector(newLock(), clock, 'a');
    await advance(clock, 11_000);
    server.externalWrite(held('b', 0, { renewTime: formatMicroTime(1) }));
    let acquiredAt = -1;
    const start = clock.now() - 11_000;
    await advance(clock, 20_000, () => {
      if (acquiredAt < 0 && a.e.isLeader()) acquiredAt = clock.now() - start;
    });
    // Seen changed at the 12 s attempt → expires after 27 s → taken at the 28 s attempt.
    expect(acquiredAt).toBe(28_000);
    a.controller.abort();
    await a.running;
  });

  it('renews every retryPeriod with a blind update and keeps its gate open', async () => {
    const clock = new FakeClock();
    const { server, newLock } = setup(clock);
    const lock = newLock();
    const a = elector(lock, clock, 'a');
    let closedAt = -1;
    await advance(clock, 30_000, () => {
      if (closedAt < 0 && !a.e.gate.isOpen()) closedAt = clock.now();
    });
    expect(closedAt).toBe(-1);
    expect(lock.ops()).toEqual(['get', ...Array<string>(16).fill('update')]);
    expect(lock.calls.slice(2).map((c) => c.at - lock.calls[1]!.at)).toEqual(Array.from({ length: 15 }, (_, i) => 2000 * (i + 1)));
    expect(server.record?.acquireTime).toBe('2026-01-01T00:00:00.000000Z');
    expect(server.record?.renewTime).toBe(formatMicroTime(clock.now()));
    expect(a.e.healthy()).toBe(true);
    a.controller.abort();
    await a.running;
  });

  it.each<[LinkMode]>([['refused'], ['hang'], ['lost-responses']])(
    'with the link %s, closes the gate exactly renewDeadline after the last successful renew was sent, then stops leading',
    async (mode) => {
      const clock = new FakeClock();
      const { newLock } = setup(clock);
      const lock = newLock();
      const a = elector(lock, clock, 'a');
      await advance(clock, 4_000);
      const lastRenewSentAt = lock.calls.at(-1)!.at;
      lock.mode = mode;
      let closedAt = -1;
      await advance(clock, 12_000, () => {
        if (closedAt < 0 && !a.e.gate.isOpen()) closedAt = clock.now();
      });
      expect(closedAt).toBe(lastRenewSentAt + 10_000);
      expect(a.e.isLeader()).toBe(false);
      expect(a.e.healthy()).toBe(false);
      expect(a.finished()).toBe(true);
      expect(a.events.slice(-2)).toEqual(['metric false', `stopped@${lastRenewSentAt + 10_000}`]);
      expect(() => a.e.gate.check('update cronjobs ns/x')).toThrow(WriteGateClosedError);
      const callsAtLoss = lock.calls.length;
      await advance(clock, 10_000);
      expect(lock.calls.length).toBe(callsAtLoss);
    },
  );

  it('measures the deadline from when the renew was sent, not when its slow reply came back', async () => {
    const clock = new FakeClock();
    const { newLock } = setup(clock);
    const lock = newLock();
    const a = elector(lock, clock, 'a');
    await advance(clock, 100);
    lock.latencyMs = 3_000;
    await advance(clock, 1_900);
    const sentAt = lock.calls.at(-1)!.at;
    lock.mode = 'refused';
    lock.latencyMs = 0;
    let closedAt = -1;
    await advance(clock, 12_000, () => {
      if (closedAt < 0 && !a.e.gate.isOpen()) closedAt = clock.now();
    });
    expect(closedAt).toBe(sentAt + 10_000);
  });

  it('closes its gate on time by reading the clock, even when no timer gets to run', async () => {
    const fake = new FakeClock();
    let skipped = 0;
    // The event loop is blocked: time passes, but no timer callback runs.
    const stalled: Clock = { now: () => fake.now() + skipped, setTimeout: (fn, ms) => fake.setTimeout(fn, ms), clearTimeout: (h) => fake.clearTimeout(h), sleep: (ms, s) => fake.sleep(ms, s) };
    const { newLock } = setup(stalled);
    const a = elector(newLock(), stalled, 'a');
    await flush();
    skipped = 9_999;
    expect(a.e.gate.isOpen()).toBe(true);
    expect(() => a.e.gate.check('create cronjobs ns/x')).not.toThrow();
    skipped = 10_000;
    expect(a.e.gate.isOpen()).toBe(false);
    expect(() => a.e.gate.check('create cronjobs ns/x')).toThrow(/refusing to create cronjobs ns\/x: a does not hold Lease test\/lease/);
    expect(a.e.healthy()).toBe(false);
    a.controller.abort();
    await a.running;
  });

  it('treats a conflict as a lost race: no leadership, and the next attempt reads again', async () => {
    const clock = new FakeClock();
    const { server, newLock } = setup(clock);
    const lock = newLock();
    let raced = false;
    lock.onUpdate = () => {
      if (raced) return;
      raced = true;
      server.externalWrite(held('b', clock.now()));
    };
    const a = elector(lock, clock, 'a');
    await advance(clock, 2_000);
    expect(a.e.isLeader()).toBe(false);
    expect(lock.ops()).toEqual(['get', 'update', 'get']);
    expect(server.record?.holderIdentity).toBe('b');
    a.controller.abort();
    await a.running;
  });

  /** Elector `a` leads, then a read shows `b` holding the lease. */
  async function leaderThatLost() {
    const clock = new FakeClock();
    const { server, newLock } = setup(clock);
    const lock = newLock();
    const a = elector(lock, clock, 'a');
    await flush();
    server.externalWrite(held('b', clock.now()));
    await advance(clock, 2_000);
    return { clock, lock, a };
  }

  it('stops leading at once when a read shows another holder', async () => {
    const { lock, a } = await leaderThatLost();
    expect(a.e.isLeader()).toBe(false);
    expect(a.e.gate.isOpen()).toBe(false);
    expect(a.finished()).toBe(true);
    expect(lock.ops()).toEqual(['get', 'update', 'update', 'get']);
  });

  it('campaigns again when run() is called after a loss, and leads once the other holder lets the lease expire', async () => {
    const { clock, a } = await leaderThatLost();
    await a.running;
    expect(a.e.isLeader()).toBe(false);
    const again = a.e.run(a.controller.signal);
    await advance(clock, 10_000);
    expect(a.e.isLeader()).toBe(false);
    expect(a.e.gate.isOpen()).toBe(false);
    // b stopped renewing when it wrote; 15 s after a saw that record, the lease is free to take.
    await advance(clock, 6_000);
    expect(a.e.isLeader()).toBe(true);
    expect(a.e.gate.isOpen()).toBe(true);
    a.controller.abort();
    await again;
  });

  it('refuses a second run() while the first still campaigns', async () => {
    const clock = new FakeClock();
    const { newLock } = setup(clock);
    const a = elector(newLock(), clock, 'a');
    await flush();
    await expect(a.e.run(new AbortController().signal)).rejects.toThrow('LeaderElector.run may be called again only after leadership was lost');
    a.controller.abort();
    await a.running;
  });

  it('on abort closes the gate before writing an empty holder, and the other candidate takes over at its next retry', async () => {
    const clock = new FakeClock();
    const { server, newLock } = setup(clock);
    const lockA = newLock();
    const a = elector(lockA, clock, 'a');
    await flush();
    await advance(clock, 500);
    const b = elector(newLock(), clock, 'b');
    await advance(clock, 3_000);
    expect(b.e.isLeader()).toBe(false);
    const gateDuringRelease: boolean[] = [];
    lockA.onUpdate = (record) => {
      if (record.holderIdentity === '') gateDuringRelease.push(a.e.gate.isOpen());
    };
    const releasedAt = clock.now();
    a.controller.abort();
    expect(a.e.gate.isOpen()).toBe(false);
    await a.running;
    expect(gateDuringRelease).toEqual([false]);
    expect(server.record).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 0 });
    expect(a.events.slice(-2)).toEqual(['metric false', `stopped@${releasedAt}`]);
    let bAt = -1;
    await advance(clock, 2_000, () => {
      if (bAt < 0 && b.e.isLeader()) bAt = clock.now();
    });
    // b last tried at 3 500 (started at 500, retries every 2 s): its next try at 4 500 takes the lease.
    expect(bAt).toBe(releasedAt + 1_000);
    expect(server.record).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    expect(lockA.calls.at(-1)?.op).toBe('update');
    b.controller.abort();
    await b.running;
  });

  it('keeps retrying with a clear warning while the Lease does not exist, and never creates it', async () => {
    const clock = new FakeClock();
    const calls: string[] = [];
    const warnings: { obj: object; msg: string | undefined }[] = [];
    const lock = createLeaseLock({
      namespace: 'ops',
      name: 'op-leader',
      client: {
        get: async (namespace, name) => {
          calls.push('get');
          throw new ApiStatusError(statusErrors.notFound({ group: 'coordination.k8s.io', resource: 'leases' }, name), { cause: namespace });
        },
        update: async () => {
          calls.push('update');
          throw new Error('unexpected update');
        },
      },
    });
    const e = new LeaderElector({ lock, identity: 'a', clock, random: () => 0, logger: { info: () => {}, warn: (obj, msg) => void warnings.push({ obj, msg }) } });
    const controller = new AbortController();
    const running = e.run(controller.signal);
    await advance(clock, 6_000);
    expect(calls).toEqual(['get', 'get', 'get', 'get']);
    expect(warnings).toHaveLength(4);
    expect(warnings[0]!.msg).toBe('failed to read leader lease');
    expect((warnings[0]!.obj as { err: unknown }).err).toBeInstanceOf(LeaseNotFoundError);
    expect(e.isLeader()).toBe(false);
    expect(e.leaseProblem()).toMatch(/^cannot read Lease ops\/op-leader: Lease ops\/op-leader not found/);
    controller.abort();
    await running;
  });

  it('reports the Lease unreachable as soon as a renewal gets no answer, while the read that follows still hangs', async () => {
    const clock = new FakeClock();
    let reachable = true;
    let lease = { metadata: { name: 'op-leader', namespace: 'ops', resourceVersion: '1' }, spec: {} as Record<string, unknown> };
    const lock = createLeaseLock({
      namespace: 'ops',
      name: 'op-leader',
      client: {
        // Once the API server stops answering, reads hang (as against a paused server) and writes time out.
        get: async () => (reachable ? structuredClone(lease) : new Promise<never>(() => {})),
        update: async (next) => {
          if (!reachable) throw new Error('PUT /apis/coordination.k8s.io/v1/namespaces/ops/leases/op-leader: timed out after 5000 ms');
          lease = { ...next, metadata: { ...next.metadata, resourceVersion: String(Number(next.metadata.resourceVersion) + 1) } } as typeof lease;
          return structuredClone(lease);
        },
      },
    });
    const e = new LeaderElector({ lock, identity: 'a', clock, random: () => 0 });
    const controller = new AbortController();
    const running = e.run(controller.signal);
    await advance(clock, 100);
    expect(e.isLeader()).toBe(true);
    expect(e.leaseProblem()).toBeUndefined();
    reachable = false;
    await advance(clock, 2_100);
    expect(e.leaseProblem()).toMatch(/^cannot renew Lease ops\/op-leader: .*timed out after 5000 ms/);
    controller.abort();
    reachable = true;
    await running;
  });

  it('release() during an abort waits for the same release write to finish', async () => {
    const clock = new FakeClock();
    const { server, newLock } = setup(clock);
    const lock = newLock();
    const a = elector(lock, clock, 'a');
    await flush();
    lock.latencyMs = 200;
    a.controller.abort();
    let released = false;
    const release = a.e.release().then(() => (released = true));
    await advance(clock, 199);
    expect(released).toBe(false);
    await advance(clock, 1);
    await release;
    expect(server.record?.holderIdentity).toBe('');
    expect(lock.ops()).toEqual(['get', 'update', 'update']);
    await a.running;
  });

  it('release() on a candidate writes nothing and ends run()', async () => {
    const clock = new FakeClock();
    const { server, newLock } = setup(clock);
    server.externalWrite(held('b', clock.now()));
    const lock = newLock();
    lock.allow.update = false;
    const a = elector(lock, clock, 'a');
    await flush();
    await a.e.release();
    await a.running;
    expect(a.events).toEqual(['leader b']);
  });

  it.each<[Partial<LeaderElectorOptions>, RegExp]>([
    [{ identity: '' }, /identity/],
    [{ leaseDurationMs: 1500 }, /leaseDurationMs/],
    [{ leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }, /renewDeadlineMs .*less than leaseDurationMs/],
    [{ retryPeriodMs: 0 }, /retryPeriodMs/],
    [{ jitterFactor: -1 }, /jitterFactor/],
    [{ renewDeadlineMs: 2_000, retryPeriodMs: 2_000, jitterFactor: 1.2 }, /renewDeadlineMs must be greater than jitterFactor × retryPeriodMs/],
    [{ renewDeadlineMs: Number.NaN }, /renewDeadlineMs/],
  ])('rejects %o naming the field', (bad, message) => {
    const clock = new FakeClock();
    const lock = new FakeLeaseLock(new FakeLeaseServer(clock), clock);
    expect(() => new LeaderElector({ lock, identity: 'a', clock, ...bad })).toThrow(message);
  });

  it('waits between retryPeriod and retryPeriod·(1+jitterFactor) between acquire attempts', async () => {
    const clock = new FakeClock();
    const { server, newLock } = setup(clock);
    server.externalWrite(held('b', clock.now()));
    const lock = newLock();
    lock.allow.update = false;
    const randoms = [0.5, 0, 0.999];
    const a = elector(lock, clock, 'a', { random: () => randoms.shift() ?? 0 });
    await advance(clock, 10_000);
    const gaps = lock.calls.slice(1, 4).map((c, i) => c.at - lock.calls[i]!.at);
    expect(gaps[0]).toBe(2_000 + 0.5 * 1.2 * 2_000);
    expect(gaps[1]).toBe(2_000);
    expect(gaps[2]).toBeCloseTo(2_000 + 0.999 * 1.2 * 2_000, -1);
    a.controller.abort();
    await a.running;
  });
});

describe('LeaderElector fencing with two replicas on one lease', () => {
  type Event = { at: number; who: 0 | 1; mode: LinkMode; latencyMs: number };
  const event = fc.record({
    at: fc.integer({ min: 0, max: 38_000 }),
    who: fc.constantFrom<0 | 1>(0, 1),
    mode: fc.constantFrom<LinkMode>('up', 'up', 'refused', 'lost-responses', 'hang'),
    latencyMs: fc.integer({ min: 0, max: 2_000 }),
  });

  // Tight margins (3 s lease, renew deadline up to 2 999 ms, replies up to 1.5 s late) so that a gate
  // measured from the wrong instant would be caught.
  const handovers: number[] = [];
  it('never has two gates open, and an open gate always belongs to the lease holder (randomized partitions, every ms)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(event, { minLength: 20, maxLength: 80 }), fc.integer({ min: 1, max: 2 ** 30 }), fc.integer({ min: 700, max: 2_999 }), async (events, seed, renewDeadlineMs) => {
        const clock = new FakeClock();
        const server = new FakeLeaseServer(clock);
        let state = seed;
        const random = (): number => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
        const ids = ['a', 'b'] as const;
        const links = [new FakeLeaseLock(server, clock), new FakeLeaseLock(server, clock)];
        const live: (LeaderElector | undefined)[] = [undefined, undefined];
        const leaderships = [0, 0];
        const start = (who: 0 | 1): void => {
          const e = new LeaderElector({
            lock: links[who]!,
            identity: ids[who],
            clock,
            random,
            leaseDurationMs: 3_000,
            renewDeadlineMs,
            retryPeriodMs: 100,
            onStartedLeading: () => leaderships[who]!++,
          });
          live[who] = e;
          // A replica that lost leadership exits; its replacement starts a second later.
          void e.run(new AbortController().signal).then(() => clock.setTimeout(() => start(who), 1_000));
        };
        start(0);
        start(1);
        const schedule = [...events].sort((x, y) => x.at - y.at);
        const check = (): void => {
          const open = live.map((e) => e?.gate.isOpen() ?? false);
          expect(open[0] && open[1], `both gates open at ${clock.now()}`).toBe(false);
          open.forEach((isOpen, i) => {
            if (isOpen) expect(server.record?.holderIdentity, `gate of ${ids[i]} open at ${clock.now()}`).toBe(ids[i]);
          });
        };
        await flush();
        for (let t = 1; t <= 40_000; t++) {
          while (schedule[0] && schedule[0].at < t) {
            const ev = schedule.shift()!;
            links[ev.who]!.mode = ev.mode;
            links[ev.who]!.latencyMs = ev.latencyMs;
          }
          clock.step(1);
          check();
          await flush();
          check();
        }
        expect(leaderships[0]! + leaderships[1]!).toBeGreaterThan(0);
        handovers.push(leaderships[0]! + leaderships[1]!);
      }),
      // Each run simulates 40 000 steps: report the first counterexample rather than shrink it. Seeded:
      // the same eight scenarios every time, so the check below cannot pass or fail by chance (unseeded,
      // eight mild scenarios in a row happened).
      { numRuns: 8, endOnFailure: true, seed: 20_261_130 },
    );
    // The scenarios are not trivial: leadership changed hands in them.
    expect(Math.max(...handovers)).toBeGreaterThan(2);
  }, 120_000);
});
