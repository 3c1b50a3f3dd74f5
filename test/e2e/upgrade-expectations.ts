/**
 * What each upgrade must have done, as `it` blocks: the same expectations on the test API server
 * (test/e2e/upgrade*.test.ts) and on a real kube-apiserver (test/real/upgrade.test.ts). Each takes a
 * getter, since the result is made in the caller's `beforeAll`.
 */
import { isDeepStrictEqual } from 'node:util';
import { expect, it } from 'vitest';
import type { KubeObject } from '../../src/kube/object.ts';
import { DEFAULT_BACKUP_IMAGE } from '../../src/pure/index.ts';
import { total, type UpgradeResult } from './upgrade.ts';
import type { Upgrade020Result } from './upgrade-0.2.0.ts';

/** 0.1.0 (v1alpha1 stored) → this release with the chart's backupImage pinned to 0.1.0's runner. */
export function itUpgradedFrom010(result: () => UpgradeResult, options: { storageReadable: boolean } = { storageReadable: true }): void {
  it('writes no child with backupImage pinned: every CronJob keeps its metadata and spec through the roll and the migration', () => {
    expect(result().childWrites).toEqual({});
    expect(result().changedChildren).toEqual([]);
  });

  it('writes no status either, and needs at most a few conversions retried before the first new replica serves them', () => {
    expect(result().statusWrites).toBe(0);
    // The new replica's own first LISTs, before it is ready and routed (its informers retry).
    expect(result().conversionErrors).toBeLessThanOrEqual(5);
  });

  it('reads in v1alpha1 and v1 agree for every schedule', () => {
    expect(result().disagreements).toEqual([]);
  });

  it('migrates every object to v1 and leaves storedVersions ["v1"]', () => {
    expect(result().migration).toMatchObject({ exitCode: 0, storedVersions: ['v1'] });
    if (options.storageReadable) expect(result().migration.notStoredInV1).toBe(0);
  });

  it('serves a v1alpha1 manifest applied afterwards (an unchanged GitOps repo), and a v1 one with GFS retention', () => {
    expect(result().afterwards).toEqual([]);
  });
}

type Child = KubeObject & { spec: Record<string, any> };

/** 0.2.0 (v1 without destination.type) → this release, pinned and then with the default backupImage. */
export function itUpgradedFrom020(result: () => Upgrade020Result): void {
  it("(a) with the chart's backupImage pinned to the old runner, writes no child: every CronJob 0.2.0 made keeps its metadata and spec", () => {
    const { before, pinned, pinnedWrites, schedules } = result();
    expect(pinnedWrites.childWrites).toEqual({});
    expect(pinned.size).toBe(schedules);
    expect([...before].filter(([name, content]) => pinned.get(name) !== content).map(([name]) => name)).toEqual([]);
  });

  it('(b) with the default backupImage, writes each child exactly once, changing only its container image', () => {
    const { before, after, defaultWrites, schedules } = result();
    // As many successful writes as children, and every child changed: each was written exactly once.
    expect(Object.keys(defaultWrites.childWrites).filter((key) => !/ 2\d\d$/.test(key))).toEqual([]);
    expect(total(defaultWrites.childWrites)).toBe(schedules);
    expect(after.size).toBe(schedules);
    const problems: string[] = [];
    for (const [name, content] of before) {
      const old = JSON.parse(content) as Child;
      const now = JSON.parse(after.get(name) ?? 'null') as Child | null;
      const containers = now?.spec['jobTemplate']?.spec?.template?.spec?.containers as { image: string }[] | undefined;
      if (now === null || containers === undefined) {
        problems.push(`${name}: missing after the roll`);
        continue;
      }
      if (containers.some((c) => c.image !== DEFAULT_BACKUP_IMAGE)) problems.push(`${name}: image ${containers.map((c) => c.image).join(', ')}`);
      // The spec with the new image put back to the old one is the old spec, byte for byte.
      const restored = structuredClone(now.spec);
      restored['jobTemplate'].spec.template.spec.containers = containers.map((c, i) => ({ ...c, image: old.spec['jobTemplate'].spec.template.spec.containers[i].image }));
      if (JSON.stringify(restored) !== JSON.stringify(old.spec)) problems.push(`${name}: spec changed beyond the image`);
      for (const field of ['labels', 'annotations', 'ownerReferences'] as const) {
        if (!isDeepStrictEqual(now.metadata[field], old.metadata[field])) problems.push(`${name}: metadata.${field} changed`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('keeps every stored schedule (no destination.type) valid and Ready at its generation', () => {
    expect(result().notReady).toEqual([]);
  });

  it('builds an object store schedule with encryption created afterwards', () => {
    expect(result().objectStore).toEqual([]);
  });

  it("is called by kube-apiserver through the new replicas' webhook: a stored schedule reads in v1alpha1, a v1alpha1 manifest applied afterwards converges", () => {
    expect(result().webhook).toEqual([]);
  });
}
