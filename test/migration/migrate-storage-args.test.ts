import { describe, expect, it } from 'vitest';
import { MigrateStorageUsageError, migrateStorageUsage, parseMigrateStorageArgs } from '../../src/migration/index.ts';

const DEFAULT = 'backupschedules.kubelings.dev';

describe('parseMigrateStorageArgs', () => {
  it('applies the defaults: in-cluster, the default CRD, 16 in flight, pages of 500, no force', () => {
    expect(parseMigrateStorageArgs([], DEFAULT)).toEqual({ kind: 'run', options: { kubeconfig: undefined, crdName: DEFAULT, concurrency: 16, pageSize: 500, force: false } });
  });

  it('reads every flag', () => {
    expect(parseMigrateStorageArgs(['--kubeconfig', '/k', '--crd=gizmos.example.com', '--concurrency', '64', '--page-size=100', '--force'], DEFAULT)).toEqual({
      kind: 'run', options: { kubeconfig: '/k', crdName: 'gizmos.example.com', concurrency: 64, pageSize: 100, force: true },
    });
    expect(parseMigrateStorageArgs(['--help'], DEFAULT)).toEqual({ kind: 'help' });
    expect(migrateStorageUsage(DEFAULT)).toContain(`--crd <name>            the CustomResourceDefinition (default: ${DEFAULT})`);
  });

  it.each<[string[], string]>([
    [['--concurrency', '0'], '--concurrency: expected an integer from 1 to 256, got "0"'],
    [['--concurrency', 'lots'], '--concurrency: expected an integer from 1 to 256, got "lots"'],
    [['--page-size', '20000'], '--page-size: expected an integer from 1 to 10000, got "20000"'],
    [['--crd', 'BackupSchedules'], '--crd: "BackupSchedules" is not a CRD name (<plural>.<group>, lower case, e.g. backupschedules.kubelings.dev)'],
    [['--crd', 'gizmos'], '--crd: "gizmos" is not a CRD name (<plural>.<group>, lower case, e.g. backupschedules.kubelings.dev)'],
    [['--kubeconfig='], '--kubeconfig: must not be empty'],
    [['--dry-run'], "Unknown option '--dry-run'"],
    [['now'], "Unexpected argument 'now'"],
  ])('refuses %j naming the flag', (argv, message) => {
    expect(() => parseMigrateStorageArgs(argv, DEFAULT)).toThrow(MigrateStorageUsageError);
    expect(() => parseMigrateStorageArgs(argv, DEFAULT)).toThrow(message);
  });
});
