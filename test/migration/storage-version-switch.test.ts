import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/runtime/clock.ts';
import { MigrationRefusedError, storageVersionHash, type MigrationTarget } from '../../src/migration/index.ts';
import { awaitStorageVersion, type DiscoveryResources } from '../../src/migration/storage-version-switch.ts';

const target: MigrationTarget = { crdName: 'gadgets.example.com', group: 'example.com', plural: 'gadgets', kind: 'Gadget', namespaced: true, storageVersion: 'v1', storedVersions: ['v1alpha1', 'v1'] };
const OLD = storageVersionHash('example.com', 'v1alpha1', 'Gadget');
const NEW = storageVersionHash('example.com', 'v1', 'Gadget');
const discovery = (hash?: string): DiscoveryResources => ({ resources: [{ name: 'gadgets', ...(hash ? { storageVersionHash: hash } : {}) }, { name: 'gadgets/status' }] });

/** Lets the awaited promise chain run until the next timer is pending (or it settles). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

describe('awaitStorageVersion', () => {
  it('goes ahead at once when discovery already reports the storage version, or reports no hash at all', async () => {
    const clock = new FakeClock();
    expect(await awaitStorageVersion(target, { readDiscovery: async () => discovery(NEW), clock, timeoutMs: 10_000 })).toBe(true);
    expect(await awaitStorageVersion(target, { readDiscovery: async () => discovery(), clock, timeoutMs: 10_000 })).toBe(false);
  });

  it('polls while the server still reports the old storage version, then goes ahead', async () => {
    const clock = new FakeClock();
    const answers = [OLD, OLD, NEW];
    const waiting: string[] = [];
    const done = awaitStorageVersion(target, { readDiscovery: async () => discovery(answers.shift()), clock, timeoutMs: 10_000, onWaiting: (reported, expected) => waiting.push(`${reported} -> ${expected}`) });
    for (let i = 0; i < 2; i++) {
      await settle();
      clock.step(1_000);
    }
    expect(await done).toBe(true);
    expect(waiting).toEqual([`${OLD} -> ${NEW}`]);
  });

  it('refuses once the timeout passes with the old hash still reported, naming both hashes', async () => {
    const clock = new FakeClock();
    const done = awaitStorageVersion(target, { readDiscovery: async () => discovery(OLD), clock, timeoutMs: 3_000 }).catch((e: unknown) => e);
    for (let i = 0; i < 4; i++) {
      await settle();
      clock.step(1_000);
    }
    const err = await done;
    expect(err).toBeInstanceOf(MigrationRefusedError);
    expect((err as Error).message).toBe(`CRD gadgets.example.com: after 3 s the API server still reports storageVersionHash ${OLD} for gadgets, not ${NEW} (v1): it has not switched its storage version, so a rewrite would not migrate anything`);
  });

  it('refuses when discovery does not list the resource', async () => {
    await expect(awaitStorageVersion(target, { readDiscovery: async () => ({ resources: [] }), clock: new FakeClock(), timeoutMs: 1 })).rejects.toThrow('discovery of example.com/v1 does not list gadgets: is the CRD established?');
  });
});
