/**
 * `npm run bench:upgrade`: issue 12's upgrade at scale (target: 10,000 schedules upgraded with 0 child
 * writes with the chart's `backupImage` pinned to 0.1.0's runner, the migration at ≥ 1,000 objects/s on
 * the test server). Runs test/e2e/upgrade.ts's scenario:
 * the previous release (test/fixtures/release-0.1.0) converges `--schedules` v1alpha1 schedules, the new
 * dist/ is applied, the Deployment rolls (old and new replicas side by side), `migrate-storage` runs as
 * its own process, and manifests of both versions are applied afterwards. Prints each figure.
 *
 * The server keeps 1,000,000 events of history, so a LIST's continue token outlives the migration as it
 * does against etcd (compacted every 5 minutes).
 *
 *   npm run bench:upgrade -- [--schedules 10000]
 */
import { parseArgs } from 'node:util';
import { buildBundle } from '../test/e2e/harness.ts';
import { PREVIOUS_BACKUP_IMAGE, runUpgrade, testServerUpgradeCluster, total } from '../test/e2e/upgrade.ts';

const { values } = parseArgs({ options: { schedules: { type: 'string', default: '10000' } } });
const schedules = Number(values.schedules);
if (!Number.isInteger(schedules) || schedules < 1) throw new Error(`--schedules: expected a positive integer, got ${values.schedules}`);

const result = await runUpgrade({
  bundle: await buildBundle(),
  schedules,
  cluster: (previous) => testServerUpgradeCluster(previous, { watchHistorySize: 1_000_000 }),
  // The bench measures the CRD and storage upgrade: backupImage pinned to 0.1.0's runner, as a two-step
  // upgrade's first step does, so 0 child writes is the target (unpinned, each child is rewritten once).
  backupImage: PREVIOUS_BACKUP_IMAGE,
  log: (line) => console.log(`  ${line}`),
});
const rows: [string, string][] = [
  ['schedules', String(result.schedules)],
  ['previous release converged them in', `${result.convergedBeforeS.toFixed(1)} s`],
  ['new dist/ applied → a new leader reconciled all', `${result.upgradeS.toFixed(1)} s`],
  ['child writes (roll + migration)', `${total(result.childWrites)} (children changed: ${result.changedChildren.length})`],
  ['status writes', String(result.statusWrites)],
  ['BackupSchedule requests answered 500 (conversion before the webhook had its certificate)', String(result.conversionErrors)],
  ['v1alpha1/v1 reads that disagree', String(result.disagreements.length)],
  ['migration', `${result.migration.seconds.toFixed(2)} s, ${Math.round(result.migration.objectsPerSecond)} objects/s (process start included), exit ${result.migration.exitCode}`],
  ['storedVersions after', JSON.stringify(result.migration.storedVersions)],
  ['objects not stored in v1 after', String(result.migration.notStoredInV1)],
  ['v1alpha1 and v1 manifests afterwards', result.afterwards.length === 0 ? 'both Ready with the right child' : result.afterwards.join('; ')],
];
for (const [what, value] of rows) console.log(`${what.padEnd(90)} ${value}`);
const ok = total(result.childWrites) === 0 && result.changedChildren.length === 0 && result.disagreements.length === 0 && result.migration.notStoredInV1 === 0 && result.afterwards.length === 0 && result.migration.objectsPerSecond >= 1_000;
console.log(ok ? 'PASS' : 'FAIL');
process.exitCode = ok ? 0 : 1;
