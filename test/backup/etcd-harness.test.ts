import { createServer, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { EtcdHarness, freePort, requireEtcd } from './etcd-harness.ts';

describe('EtcdHarness', () => {
  const sockets = new Set<Socket>();
  const taken = createServer((socket) => void sockets.add(socket));
  afterAll(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => taken.close(() => resolve()));
  });

  it('starts etcd again on new ports when a port it picked was taken in between', async () => {
    requireEtcd();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const busy = (taken.address() as { port: number }).port;
    // The first pick is a port another process holds: what freePort's listen-then-close can hand out.
    let picks = 0;
    const harness = new EtcdHarness(() => (picks++ === 0 ? Promise.resolve(busy) : freePort()));
    try {
      const member = await harness.start();
      expect(new URL(member.endpoint).port).not.toBe(String(busy));
      expect(picks).toBeGreaterThanOrEqual(4);
    } finally {
      await harness.stopAll();
    }
  }, 60_000);
});
