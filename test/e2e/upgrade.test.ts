/**
 * Issue 12's upgrade, end to end (test/e2e/upgrade.ts says each step): the previous release with 500
 * v1alpha1 schedules converged, the new dist/ applied, the Deployment rolled with old and new replicas
 * side by side, the storage migrated, and manifests of both versions applied afterwards.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildBundle } from './harness.ts';
import { PREVIOUS_BACKUP_IMAGE, runUpgrade, type UpgradeResult } from './upgrade.ts';

let result: UpgradeResult;

beforeAll(async () => {
  // About the CRD and storage upgrade: the chart's backupImage pinned to 0.1.0's runner, so the roll
  // itself must write no child (unpinned, the new runner rewrites each once: upgrade-0.2.0.test.ts).
  result = await runUpgrade({ bundle: await buildBundle(), schedules: 500, backupImage: PREVIOUS_BACKUP_IMAGE });
}, 240_000);

describe('upgrade from 0.1.0 (v1alpha1) to v1', () => {
  it('writes no child with backupImage pinned: every CronJob keeps its resourceVersion through the roll and the migration', () => {
    expect(result.childWrites).toEqual([]);
    expect(result.changedChildren).toEqual([]);
  });

  it('writes no status either, and needs at most a few conversions retried before the first new replica serves them', () => {
    expect(result.statusWrites).toBe(0);
    // The new replica's own first LISTs, before it is ready and routed (its informers retry).
    expect(result.conversionErrors).toBeLessThanOrEqual(5);
  });

  it('reads in v1alpha1 and v1 agree for every schedule', () => {
    expect(result.disagreements).toEqual([]);
  });

  it('migrates every object to v1 and leaves storedVersions ["v1"]', () => {
    expect(result.migration).toMatchObject({ exitCode: 0, storedVersions: ['v1'], notStoredInV1: 0 });
  });

  it('serves a v1alpha1 manifest applied afterwards (an unchanged GitOps repo), and a v1 one with GFS retention', () => {
    expect(result.afterwards).toEqual([]);
  });
});
