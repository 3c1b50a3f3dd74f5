/**
 * `backupschedule validate` and `preview` with Restores: validated by the Restore schema and CEL rules
 * (another operator's Restore is skipped), previewed as the controller's Job, a Restore from a
 * BackupSchedule resolved from that schedule in the input (in either order), or refused naming it.
 */
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import type { ValidateReport } from '../../src/cli/validate-command.ts';
import { cli } from './cli-io.ts';

const restore = (spec: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'kubelings.dev/v1',
  kind: 'Restore',
  metadata: { name: 'db-restore', namespace: 'team-a' },
  spec: { from: { backupScheduleName: 'nightly' }, backup: 'latest', target: { persistentVolumeClaim: { claimName: 'db-data' } }, ...spec },
});
const schedule = {
  apiVersion: 'kubelings.dev/v1',
  kind: 'BackupSchedule',
  metadata: { name: 'nightly', namespace: 'team-a' },
  spec: { schedule: '0 2 * * *', source: { type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'db-data' } }, destination: { persistentVolumeClaim: { claimName: 'backups', path: 'db' } } },
};
const docs = (...objects: unknown[]): string => objects.map((o) => stringify(o)).join('---\n');

describe('backupschedule validate with Restores', () => {
  it('counts a valid Restore, and skips another group\'s Restore', () => {
    const run = cli(['validate', '-'], docs(restore(), { apiVersion: 'velero.io/v1', kind: 'Restore', metadata: { name: 'x' }, spec: { backupName: 'y' } }));
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('0 BackupSchedule(s), 1 Restore(s) in 1 file(s), 1 other object(s) skipped: all valid\n');
  });

  it('reports a Restore\'s errors at their lines', () => {
    const run = cli(['validate', '-o', 'json', '-'], docs(restore({ from: { backupScheduleName: 'a', persistentVolumeClaim: { claimName: 'b' } }, backup: '../etc' })));
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as ValidateReport;
    expect(report).toMatchObject({ valid: false, restores: 1 });
    expect(report.errors.map((e) => `${e.line}: ${e.message}`)).toEqual([
      '7: spec.from: exactly one of backupScheduleName, persistentVolumeClaim, objectStore must be set',
      '11: spec.backup: must be latest or a backup\'s file or object name, <schedule>-<yyyymmddThhmmssZ>.<db|tar.gz> (an object: .db or .tar, then .zst or .gz, then .age), e.g. "nightly-20261130T020007Z.tar.gz", got "../etc"',
    ]);
  });

  it('suggests Restore for a misspelt kind in the group', () => {
    const run = cli(['validate', '-'], docs({ ...restore(), kind: 'Restor' }));
    expect(run.stdout).toContain('kind: "Restor" is not a known kind (the kubelings.dev group has only BackupSchedule and Restore); did you mean "Restore"?');
  });
});

describe('backupschedule preview with Restores', () => {
  it('previews the Job of a Restore from a BackupSchedule given after it, reading its destination', () => {
    const run = cli(['preview', '-'], docs(restore(), schedule));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const [job, cronJob] = parseAllDocuments(run.stdout).map((d) => d.toJS() as Record<string, any>);
    expect(job!['kind']).toBe('Job');
    expect(job!['spec'].template.spec.containers[0].args).toEqual(['backup', 'restore', '--from=/backup/from/db', '--backup=latest', '--target-dir=/backup/target', '--schedule=nightly']);
    expect(job!['spec'].template.spec.volumes[1]).toEqual({ name: 'from', persistentVolumeClaim: { claimName: 'backups', readOnly: true } });
    expect(cronJob!['kind']).toBe('CronJob');
  });

  it('refuses a Restore whose BackupSchedule is not in the input, naming it', () => {
    const run = cli(['preview', '-'], docs(restore()));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^<stdin>:\d+: team-a\/db-restore: spec\.from\.backupScheduleName: BackupSchedule team-a\/nightly is not in the input; give its manifest too\n$/);
  });

  it('previews an explicit source as JSON under restoreJobs', () => {
    const run = cli(['preview', '-o', 'json', '-'], docs(restore({ from: { persistentVolumeClaim: { claimName: 'backups' } }, backup: 'db-20261130T020007Z.tar.gz' })));
    expect(run.code).toBe(0);
    const report = parse(run.stdout) as { items: unknown[]; restoreJobs: { restore: string; job: { metadata: { ownerReferences: { uid: string }[] } } }[] };
    expect(report.items).toEqual([]);
    expect(report.restoreJobs[0]!.restore).toBe('team-a/db-restore');
    expect(report.restoreJobs[0]!.job.metadata.ownerReferences[0]!.uid).toBe('00000000-0000-0000-0000-000000000000');
  });
});
