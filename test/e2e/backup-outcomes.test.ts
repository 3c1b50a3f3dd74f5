/**
 * Know that backups work (issue 31): the controller bundle, with dist/'s RBAC (Jobs: list and watch
 * only), reports the runs of a schedule. The test API server has no CronJob or Job controller and no
 * kubelet, so the test does what they would: it creates each Job the way the CronJob controller does
 * (controlled by the child CronJob, with the Job template's labels) and writes its status through
 * `/status` as the Job controller does: failed by its podFailurePolicy (exit code 3), succeeded,
 * failed past its deadline and its backoff limit. The schedule's status (LastBackupSucceeded,
 * lastSuccessfulTime although the CronJob's status never has it, as on Kubernetes 1.20, lastFailedTime,
 * recentRuns), its Events (BackupFailed, BackupSucceeded) and its series on /metrics follow; the
 * series go with the schedule, and a settled controller writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackupScheduleObject } from '../../src/controller/resources.ts';
import { buildBundle, ControllerProcess, CONTROLLER_USER, sleep, startCluster, waitFor, type Cluster } from './harness.ts';
import { api, failedJobStatus, readyOf, runJob as runJobAs, scheduleManifest, type ChildCronJob } from './scenarios.ts';

const NS = 'outcomes';
let cluster: Cluster;
let controller: ControllerProcess;
let k: ReturnType<typeof api>;
let metricsUrl: string;

beforeAll(async () => {
  let bundle: string;
  [bundle, cluster] = await Promise.all([buildBundle(), startCluster()]);
  k = api(cluster.admin);
  controller = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, '--log-level=info']);
  metricsUrl = String((await controller.waitForLog('the metrics server', (r) => r['msg'] === 'starting'))['metrics']);
  await k.createNamespace(NS);
}, 120_000);

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

function lastBackup(s: BackupScheduleObject): { status: string; reason: string; message: string } | undefined {
  return s.status?.conditions?.find((c) => c.type === 'LastBackupSucceeded');
}

const runJob = (cronJob: ChildCronJob, name: string, status: Record<string, unknown>): Promise<void> => runJobAs(cluster.admin, cronJob, name, status);
const failedStatus = failedJobStatus;

async function metric(name: string, labels: string): Promise<number | undefined> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('backup outcomes', () => {
  it('reports failed and succeeded runs in status, Events and metrics, and forgets the schedule when it goes', async () => {
    await k.schedules.create(scheduleManifest(NS, 'nightly') as never);
    const ready = await k.waitForReady(NS, 'nightly', (s) => readyOf(s)?.status === 'True' && lastBackup(s) !== undefined, 30_000);
    expect(lastBackup(ready)).toMatchObject({ status: 'Unknown', reason: 'NoRunFinished' });
    const cronJob = await k.waitForCronJob(NS, ready.status?.cronJobName ?? '');
    const labels = `namespace="${NS}",name="nightly"`;

    await runJob(cronJob as never, 'nightly-backup-29000000', failedStatus('2026-12-01T01:00:00Z', 'PodFailurePolicy', 'Container backup for pod outcomes/nightly-backup-29000000-abcde failed with exit code 3 matching FailJob rule at index 0'));
    const failing = await k.waitForReady(NS, 'nightly', (s) => lastBackup(s)?.status === 'False', 30_000);
    expect(lastBackup(failing)?.reason).toBe('PodFailurePolicy');
    expect(lastBackup(failing)?.message).toContain('exit code 3 (the volume archive is incomplete');
    expect(failing.status?.lastFailedTime).toBe('2026-12-01T01:00:00Z');
    expect(readyOf(failing)?.status).toBe('True');
    await waitFor('a BackupFailed Event', async () => (await k.events(NS, 'nightly')).some((e) => e.type === 'Warning' && e.reason === 'BackupFailed' && e.message.includes('exit code 3')), 30_000);
    await waitFor('the failure on /metrics', async () => (await metric('backupschedule_last_failure_timestamp_seconds', labels)) === Date.parse('2026-12-01T01:00:00Z') / 1000, 10_000);
    expect(await metric('backupschedule_runs_total', `${labels},result="Failed"`)).toBe(1);
    // scheduleManifest's "0 2 * * *": one day between runs.
    expect(await metric('backupschedule_expected_interval_seconds', labels)).toBe(86_400);

    await runJob(cronJob as never, 'nightly-backup-29001440', { startTime: '2026-12-02T02:00:00Z', completionTime: '2026-12-02T02:03:00Z', succeeded: 1, conditions: [{ type: 'Complete', status: 'True', lastProbeTime: '2026-12-02T02:03:00Z', lastTransitionTime: '2026-12-02T02:03:00Z' }] });
    const recovered = await k.waitForReady(NS, 'nightly', (s) => lastBackup(s)?.status === 'True', 30_000);
    // The CronJob's status never got lastSuccessfulTime here (as on 1.20): it comes from the Job.
    expect((await k.cronJobs.get({ namespace: NS, name: cronJob.metadata.name ?? '' })).status?.lastSuccessfulTime).toBeUndefined();
    expect(recovered.status?.lastSuccessfulTime).toBe('2026-12-02T02:03:00Z');
    await waitFor('a BackupSucceeded Event', async () => (await k.events(NS, 'nightly')).some((e) => e.type === 'Normal' && e.reason === 'BackupSucceeded'), 30_000);
    await waitFor('the success on /metrics', async () => (await metric('backupschedule_last_success_timestamp_seconds', labels)) === Date.parse('2026-12-02T02:03:00Z') / 1000, 10_000);

    await runJob(cronJob as never, 'nightly-backup-29002880', failedStatus('2026-12-03T02:30:00Z', 'DeadlineExceeded', 'Job was active longer than specified deadline'));
    await runJob(cronJob as never, 'nightly-backup-29004320', failedStatus('2026-12-04T02:10:00Z', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'));
    const history = await k.waitForReady(NS, 'nightly', (s) => s.status?.recentRuns?.length === 4, 30_000);
    expect(history.status?.recentRuns?.map((r) => [r.job, r.result, r.reason ?? '', r.exitCode ?? ''])).toEqual([
      ['nightly-backup-29004320', 'Failed', 'BackoffLimitExceeded', ''],
      ['nightly-backup-29002880', 'Failed', 'DeadlineExceeded', ''],
      ['nightly-backup-29001440', 'Succeeded', '', ''],
      ['nightly-backup-29000000', 'Failed', 'PodFailurePolicy', 3],
    ]);
    expect(lastBackup(history)?.reason).toBe('BackoffLimitExceeded');
    await waitFor('3 failed runs counted', async () => (await metric('backupschedule_runs_total', `${labels},result="Failed"`)) === 3, 10_000);

    // Settled: nothing more to write.
    await sleep(1_500);
    const writes = (): number => cluster.server.requestLog.entries().filter((e) => e.user === CONTROLLER_USER && !['get', 'list', 'watch'].includes(e.verb) && e.resource !== 'events' && e.resource !== 'leases').length;
    const settled = writes();
    await sleep(2_000);
    expect(writes()).toBe(settled);

    await k.schedules.delete({ namespace: NS, name: 'nightly' });
    await waitFor('the series to go', async () => (await metric('backupschedule_last_success_timestamp_seconds', labels)) === undefined, 15_000);
    for (const name of ['backupschedule_last_failure_timestamp_seconds', 'backupschedule_expected_interval_seconds']) expect(await metric(name, labels)).toBeUndefined();
    expect(await metric('backupschedule_runs_total', `${labels},result="Failed"`)).toBeUndefined();
  }, 180_000);
});
