/**
 * Issue 12's upgrade, end to end (test/e2e/upgrade.ts says each step): the previous release with 500
 * v1alpha1 schedules converged, the new dist/ applied, the Deployment rolled with old and new replicas
 * side by side, the storage migrated, and manifests of both versions applied afterwards.
 */
import { beforeAll, describe } from 'vitest';
import { buildBundle } from './harness.ts';
import { PREVIOUS_BACKUP_IMAGE, runUpgrade, type UpgradeResult } from './upgrade.ts';
import { itUpgradedFrom010 } from './upgrade-expectations.ts';

let result: UpgradeResult;

beforeAll(async () => {
  // About the CRD and storage upgrade: the chart's backupImage pinned to 0.1.0's runner, so the roll
  // itself must write no child (unpinned, the new runner rewrites each once: upgrade-0.2.0.test.ts).
  result = await runUpgrade({ bundle: await buildBundle(), schedules: 500, backupImage: PREVIOUS_BACKUP_IMAGE });
}, 240_000);

describe('upgrade from 0.1.0 (v1alpha1) to v1', () => {
  itUpgradedFrom010(() => result);
});
