import { describe, expect, it } from 'vitest';
import { ClientShares } from '../../src/runtime/client-shares.ts';

describe('ClientShares', () => {
  it("caps what one client's shares hold together, leaving other clients alone", () => {
    const shares = new ClientShares(100);
    const [a1, a2, b] = [shares.share('10.0.0.1'), shares.share('10.0.0.1'), shares.share('10.0.0.2')];
    expect(a1.tryTake(60)).toBe(true);
    expect(a2.tryTake(41)).toBe(false);
    expect(a2.tryTake(40)).toBe(true);
    expect(b.tryTake(100)).toBe(true);
    expect([shares.heldBy('10.0.0.1'), shares.heldBy('10.0.0.2'), shares.clients]).toEqual([100, 100, 2]);
  });

  it('gives back at most what a share took, all of it on release (once), and forgets a client holding nothing', () => {
    const shares = new ClientShares(100);
    const a = shares.share('a');
    const other = shares.share('a');
    a.tryTake(30);
    other.tryTake(20);
    a.giveBack(50);
    expect(shares.heldBy('a')).toBe(20);
    other.release();
    other.release();
    expect([shares.heldBy('a'), shares.clients]).toEqual([0, 0]);
    expect(other.tryTake(1)).toBe(false);
  });

  it.each([0, -1, 1.5])('refuses a share of %j bytes per client', (bytes) => {
    expect(() => new ClientShares(bytes)).toThrow(`client shares: perClientBytes must be a positive integer, got ${bytes}`);
  });
});
