import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKUP_IMAGE } from '../../src/pure/index.ts';
import { parseCommandLine, UsageError } from '../../src/controller/cli-options.ts';

describe('parseCommandLine', () => {
  it('applies the documented defaults', () => {
    expect(parseCommandLine([])).toEqual({
      kind: 'run',
      options: {
        kubeconfig: undefined,
        namespaces: [],
        leaderElect: false,
        leaseName: 'backupschedule-operator-leader',
        leaseNamespace: undefined,
        identity: undefined,
        metricsAddress: { host: '0.0.0.0', port: 8080 },
        healthAddress: { host: '0.0.0.0', port: 8081 },
        concurrency: 2,
        logLevel: 'info',
        logFormat: 'json',
        backupImage: DEFAULT_BACKUP_IMAGE,
        allowedBackupImages: [],
        allowedBackupEndpoints: [],
        shutdownTimeoutSeconds: 10,
        conversionWebhookAddress: undefined,
        conversionWebhookServiceName: 'backupschedule-operator-webhook',
        conversionWebhookSecretName: 'backupschedule-operator-webhook-tls',
        conversionWebhookCertDir: undefined,
        syncPeriodMs: 36_000_000,
      },
    });
  });

  it.each<[string, number]>([['10h', 36_000_000], ['30m', 1_800_000], ['1h30m', 5_400_000], ['90s', 90_000], ['0', 0], ['168h', 604_800_000]])(
    'reads --sync-period=%s (controller-runtime\'s SyncPeriod; 0 turns the resync off)',
    (value, ms) => {
      expect(parseCommandLine([`--sync-period=${value}`])).toMatchObject({ options: { syncPeriodMs: ms } });
    },
  );

  it.each(['', '10', '1d', '-1h', '0.5s', '169h', '0s1m', 'h'])('rejects --sync-period=%j, naming the flag', (value) => {
    expect(() => parseCommandLine([`--sync-period=${value}`])).toThrow(/^--sync-period: expected 0 or a duration from 1s to 168h/);
  });

  it('reads the flags the Deployment in dist/ passes', () => {
    const command = parseCommandLine([
      '--leader-elect', '--lease-name=l', '--lease-namespace=ns', '--metrics-bind-address=:8080', '--health-probe-bind-address=127.0.0.1:0',
      '--concurrency', '4', '--log-level=debug', '--log-format=json', '--namespace', 'a', '--namespace=b', '--backup-image=img:1', '--kubeconfig=/k',
    ]);
    expect(command).toMatchObject({
      kind: 'run',
      options: { leaderElect: true, leaseName: 'l', leaseNamespace: 'ns', healthAddress: { host: '127.0.0.1', port: 0 }, concurrency: 4, logLevel: 'debug', namespaces: ['a', 'b'], backupImage: 'img:1', kubeconfig: '/k' },
    });
  });

  it('reads the conversion webhook flags (off unless a port is given)', () => {
    const command = parseCommandLine(['--conversion-webhook-bind-address=:9443', '--conversion-webhook-service-name=hook', '--conversion-webhook-secret-name=hook-tls.v2']);
    expect(command).toMatchObject({
      options: { conversionWebhookAddress: { host: '0.0.0.0', port: 9443 }, conversionWebhookServiceName: 'hook', conversionWebhookSecretName: 'hook-tls.v2' },
    });
  });

  it('reads --conversion-webhook-cert-dir (the cert-manager variant of dist/), with the Secret name left at its default', () => {
    const command = parseCommandLine(['--conversion-webhook-bind-address=:9443', '--conversion-webhook-cert-dir=/etc/conversion-webhook/tls']);
    expect(command).toMatchObject({ options: { conversionWebhookAddress: { port: 9443 }, conversionWebhookCertDir: '/etc/conversion-webhook/tls' } });
  });

  it.each<[string[], boolean]>([
    [['--leader-elect'], true],
    [['--leader-elect=true'], true],
    [['--leader-elect=false'], false],
    [['--leader-elect', '--leader-elect=false'], false],
  ])('reads the boolean %j as Go flags do', (argv, leaderElect) => {
    expect(parseCommandLine(argv)).toMatchObject({ kind: 'run', options: { leaderElect } });
  });

  it('reads --allowed-backup-images as a repeatable, comma-separated list of patterns', () => {
    const command = parseCommandLine(['--allowed-backup-images=registry.example.com/backup/*, ghcr.io/acme/etcd-backup:1', '--allowed-backup-images', 'quay.io/x/y@sha256:*']);
    expect(command).toMatchObject({ options: { allowedBackupImages: ['registry.example.com/backup/*', 'ghcr.io/acme/etcd-backup:1', 'quay.io/x/y@sha256:*'] } });
  });

  it('reads --allowed-backup-endpoints as a repeatable, comma-separated list; none means AWS S3 only', () => {
    expect(parseCommandLine([])).toMatchObject({ options: { allowedBackupEndpoints: [] } });
    const command = parseCommandLine(['--allowed-backup-endpoints=https://minio.storage:9000, https://*.ceph.internal', '--allowed-backup-endpoints', '*']);
    expect(command).toMatchObject({ options: { allowedBackupEndpoints: ['https://minio.storage:9000', 'https://*.ceph.internal', '*'] } });
  });

  it.each([
    [['--help'], { kind: 'help' }],
    [['-h'], { kind: 'help' }],
    [['--version'], { kind: 'version' }],
    [['--leader-elect', '--version'], { kind: 'version' }],
    [['backup', '--source=etcd'], { kind: 'backup' }],
    [['migrate-storage', '--force'], { kind: 'migrate-storage' }],
  ])('recognises %j', (argv, command) => {
    expect(parseCommandLine(argv)).toEqual(command);
  });

  it.each([
    [['--bogus'], "Unknown option '--bogus'"],
    [['--concurrency=0'], '--concurrency: expected an integer from 1 to 64, got "0"'],
    [['--concurrency=two'], '--concurrency: expected an integer from 1 to 64, got "two"'],
    [['--log-level=loud'], '--log-level: expected one of'],
    [['--log-format=xml'], '--log-format: expected json or text, got "xml"'],
    [['--metrics-bind-address=8080'], '--metrics-bind-address: "8080" is not host:port'],
    [['--namespace=Bad_NS'], '--namespace: "Bad_NS" is not a valid namespace name'],
    [['--lease-name='], '--lease-name: must not be empty'],
    [['--leader-elect=yes'], '--leader-elect: expected true or false, got "yes"'],
    [['frobnicate'], 'unexpected argument "frobnicate" (known subcommands: backup, migrate-storage)'],
    [['--conversion-webhook-bind-address=9443'], '--conversion-webhook-bind-address: "9443" is not host:port'],
    [['--conversion-webhook-bind-address=:99999'], '--conversion-webhook-bind-address: port 99999 of ":99999" is out of range; a port is 0 to 65535'],
    [['--conversion-webhook-service-name=1hook'], '--conversion-webhook-service-name: "1hook" is not a valid Service name'],
    [['--conversion-webhook-secret-name=Hook'], '--conversion-webhook-secret-name: "Hook" is not a valid Secret name'],
    [['--conversion-webhook-cert-dir='], '--conversion-webhook-cert-dir: must not be empty'],
    [['--conversion-webhook-cert-dir=/tls', '--conversion-webhook-secret-name=hook-tls'], '--conversion-webhook-cert-dir and --conversion-webhook-secret-name are mutually exclusive'],
    [['--conversion-webhook-secret-name=hook-tls', '--conversion-webhook-cert-dir', '/tls'], '--conversion-webhook-cert-dir and --conversion-webhook-secret-name are mutually exclusive'],
    [['--allowed-backup-images=a/*,,b'], '--allowed-backup-images: an image pattern must not be empty'],
    [['--allowed-backup-images=a/*\tb'], '--allowed-backup-images: image pattern "a/*\\tb" contains whitespace'],
    [['--allowed-backup-endpoints=minio:9000'], '--allowed-backup-endpoints: endpoint pattern "minio:9000" is not an http(s)://host[:port] URL (or "*")'],
    [['--allowed-backup-endpoints=https://minio/bucket'], '--allowed-backup-endpoints: endpoint pattern "https://minio/bucket" is not an http(s)://host[:port] URL'],
  ])('rejects %j with a message naming the flag', (argv, message) => {
    expect(() => parseCommandLine(argv)).toThrow(UsageError);
    expect(() => parseCommandLine(argv)).toThrow(message);
  });
});

