/**
 * The upgrades of test/e2e/upgrade.ts (from 0.1.0) and test/e2e/upgrade-0.2.0.ts (from 0.2.0) on a REAL
 * kube-apiserver, with the same expectations as on the test API server: kube-apiserver converts through
 * the new replicas' webhook with the certificate and CA bundle they keep, its garbage collector and
 * CronJob controller run, the storage migration rewrites etcd.
 *
 * Runs only with `E2E_KUBECONFIG` (`npm run test:real` sets it from `REALK8S`, and `E2E_ETCD` to the
 * plane's etcd so what is stored can be read): each upgrade deletes the cluster's BackupSchedule CRD and
 * every schedule with it first, so it is for a disposable cluster, and `test:real` runs this file alone,
 * after the others. test/real/upgrade-cluster.ts says how the webhook is reached on a plane without Pods.
 */
import { beforeAll, describe } from 'vitest';
import { buildBundle } from '../e2e/harness.ts';
import { PREVIOUS_BACKUP_IMAGE, runUpgrade, type UpgradeResult } from '../e2e/upgrade.ts';
import { runUpgradeFrom020, type Upgrade020Result } from '../e2e/upgrade-0.2.0.ts';
import { itUpgradedFrom010, itUpgradedFrom020 } from '../e2e/upgrade-expectations.ts';
import { realUpgradeCluster } from './upgrade-cluster.ts';

const kubeconfigPath = process.env['E2E_KUBECONFIG'];
const etcdUrl = process.env['E2E_ETCD'];
const suite = kubeconfigPath ? describe : describe.skip;
const needs = kubeconfigPath ? '' : ' (needs E2E_KUBECONFIG: npm run test:real)';
const cluster = () => realUpgradeCluster({ kubeconfigPath: kubeconfigPath!, ...(etcdUrl ? { etcdUrl } : {}) });
const log = (line: string): void => void process.stdout.write(`upgrade: ${line}\n`);

suite(`upgrade from 0.1.0 on a real cluster${needs}`, () => {
  let result: UpgradeResult;
  beforeAll(async () => {
    result = await runUpgrade({ bundle: await buildBundle(), schedules: 300, backupImage: PREVIOUS_BACKUP_IMAGE, cluster: cluster(), log });
  }, 600_000);
  itUpgradedFrom010(() => result, { storageReadable: etcdUrl !== undefined });
});

suite(`upgrade from 0.2.0 on a real cluster${needs}`, () => {
  let result: Upgrade020Result;
  beforeAll(async () => {
    result = await runUpgradeFrom020({ bundle: await buildBundle(), schedules: 60, cluster: cluster(), log });
  }, 600_000);
  itUpgradedFrom020(() => result);
});
