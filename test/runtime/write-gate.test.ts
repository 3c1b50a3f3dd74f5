import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/runtime/clock.ts';
import { LeaderElector } from '../../src/runtime/leader-elector.ts';
import { openWriteGate, WriteGateClosedError, type WriteGate } from '../../src/runtime/write-gate.ts';
import { FakeLeaseLock, FakeLeaseServer, flush } from './fake-lease-lock.ts';

describe('WriteGate', () => {
  it('openWriteGate lets every write through', () => {
    expect(openWriteGate.isOpen()).toBe(true);
    expect(() => openWriteGate.check('update cronjobs ns/a')).not.toThrow();
  });

  it('a closed elector gate refuses with a WriteGateClosedError naming the write and the lease', () => {
    const clock = new FakeClock();
    const lock = new FakeLeaseLock(new FakeLeaseServer(clock), clock);
    const gate: WriteGate = new LeaderElector({ lock, identity: 'pod-1', clock }).gate;
    expect(gate.isOpen()).toBe(false);
    let thrown: unknown;
    try {
      gate.check('patch backupschedules/status ns/a');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(WriteGateClosedError);
    expect(thrown).toMatchObject({
      name: 'WriteGateClosedError',
      message: 'refusing to patch backupschedules/status ns/a: pod-1 does not hold Lease test/lease (or cannot prove it still does)',
    });
  });

  it('the elector gate opens on acquisition and closes again on release', async () => {
    const clock = new FakeClock();
    const lock = new FakeLeaseLock(new FakeLeaseServer(clock), clock);
    const elector = new LeaderElector({ lock, identity: 'pod-1', clock });
    const controller = new AbortController();
    const running = elector.run(controller.signal);
    await flush();
    expect(elector.gate.isOpen()).toBe(true);
    expect(() => elector.gate.check('create cronjobs ns/a')).not.toThrow();
    await elector.release();
    expect(elector.gate.isOpen()).toBe(false);
    await running;
    expect(lock.unexpected).toEqual([]);
  });
});
