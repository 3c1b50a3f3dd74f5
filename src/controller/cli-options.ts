/**
 * Command-line flags of the controller (the Deployment in dist/ passes them), parsed with
 * `node:util` `parseArgs` and validated where they enter: a bad flag is a {@link UsageError} naming the
 * flag and the value, and the process exits 2.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_BACKUP_IMAGE } from '../pure/index.ts';
import { ALLOWED_ENDPOINTS_FLAG, endpointPatternProblem } from '../pure/endpoint-policy.ts';
import { ALLOWED_IMAGES_FLAG, imagePatternProblem } from '../pure/image-policy.ts';
import { parseBindAddress, type BindAddress } from '../runtime/http-server.ts';
import { LOG_LEVELS, type LogLevel } from '../runtime/logger.ts';

/** The parsed flags. */
export interface ControllerOptions {
  /** `--kubeconfig`: kubeconfig file; in-cluster config when absent. @default in-cluster */
  readonly kubeconfig: string | undefined;
  /** `--namespace` (repeatable): namespaces to watch. @default [] = all namespaces */
  readonly namespaces: readonly string[];
  /** `--leader-elect`: take the Lease before any write. @default false */
  readonly leaderElect: boolean;
  /** `--lease-name`. @default 'backupschedule-operator-leader' */
  readonly leaseName: string;
  /** `--lease-namespace`. @default the pod's namespace in-cluster, else 'backupschedule-system' */
  readonly leaseNamespace: string | undefined;
  /** `--leader-election-id`: this replica's identity in the Lease. @default `<hostname>_<random>` */
  readonly identity: string | undefined;
  /** `--metrics-bind-address`; `0` disables. @default ':8080' */
  readonly metricsAddress: BindAddress | undefined;
  /** `--health-probe-bind-address`; `0` disables. @default ':8081' */
  readonly healthAddress: BindAddress | undefined;
  /** `--concurrency`: reconcile workers. @default 2 */
  readonly concurrency: number;
  /** `--log-level`. @default 'info' */
  readonly logLevel: LogLevel;
  /** `--log-format`: `json` or `text`. @default 'json' */
  readonly logFormat: 'json' | 'text';
  /** `--backup-image`: image of the backup Jobs when a spec sets none. @default DEFAULT_BACKUP_IMAGE */
  readonly backupImage: string;
  /**
   * `--allowed-backup-images` (repeatable, comma-separated): image patterns `spec.image` may name besides
   * `--backup-image` (`*` matches any characters). @default [] (only `--backup-image`)
   */
  readonly allowedBackupImages: readonly string[];
  /**
   * `--allowed-backup-endpoints` (repeatable, comma-separated): object store endpoints
   * `spec.destination.objectStore.endpoint` may name (`*` matches any characters but `/`, a lone `*`
   * all). @default [] (only AWS S3: no endpoint)
   */
  readonly allowedBackupEndpoints: readonly string[];
  /** `--shutdown-timeout`: seconds in-flight reconciles get at SIGTERM. @default 10 */
  readonly shutdownTimeoutSeconds: number;
  /** `--conversion-webhook-bind-address`: the conversion webhook's HTTPS port; `0` disables. @default undefined ('0') */
  readonly conversionWebhookAddress: BindAddress | undefined;
  /** `--conversion-webhook-service-name`: the Service the certificate is issued for. @default 'backupschedule-operator-webhook' */
  readonly conversionWebhookServiceName: string;
  /** `--conversion-webhook-secret-name`: the Secret holding the CA and serving certificate. @default 'backupschedule-operator-webhook-tls' */
  readonly conversionWebhookSecretName: string;
  /**
   * `--conversion-webhook-cert-dir`: read the webhook's `tls.crt`/`tls.key` from this directory (a mounted
   * Secret cert-manager keeps) instead of keeping them in the Secret; excludes `--conversion-webhook-secret-name`.
   * @default undefined (the controller keeps the Secret)
   */
  readonly conversionWebhookCertDir: string | undefined;
  /**
   * `--sync-period`: every BackupSchedule is reconciled again this often, ±10 % (controller-runtime's
   * SyncPeriod): what no watch event reports (a change while no replica watched) is repaired within it.
   * `0` turns it off. @default 36_000_000 (10h)
   */
  readonly syncPeriodMs: number;
}

/** What the command line asks for. */
export type Command =
  | { readonly kind: 'run'; readonly options: ControllerOptions }
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'backup' }
  | { readonly kind: 'migrate-storage' };

/** A command-line mistake; the message names the flag. Exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The `--help` text. */
export const USAGE = `Usage: controller [flags]
       controller backup ...   (the backup Job runner: see "controller backup --help")
       controller migrate-storage ...   (rewrite stored objects in the CRD's storage version: see "controller migrate-storage --help")

Reconciles BackupSchedules (kubelings.dev/v1, and v1alpha1 through its conversion webhook) into CronJobs.

Flags:
  --kubeconfig <path>                 kubeconfig file (default: in-cluster service account)
  --namespace <ns>                    watch only this namespace; repeatable (default: all namespaces)
  --leader-elect[=true|false]         elect a leader through a Lease before writing (default: false)
  --lease-name <name>                 Lease name (default: backupschedule-operator-leader)
  --lease-namespace <ns>              Lease namespace (default: the pod's namespace, else backupschedule-system)
  --leader-election-id <id>           identity in the Lease (default: <hostname>_<random>)
  --metrics-bind-address <[host]:port> Prometheus /metrics; "0" disables (default: :8080)
  --health-probe-bind-address <[host]:port> /healthz and /readyz; "0" disables (default: :8081)
  --concurrency <n>                   concurrent reconciles, 1-64 (default: 2)
  --log-level <level>                 ${LOG_LEVELS.join('|')} (default: info)
  --log-format <json|text>            log format (default: json)
  --backup-image <image>              image of backup Jobs when a spec sets none (default: ${DEFAULT_BACKUP_IMAGE})
  ${ALLOWED_IMAGES_FLAG} <pattern>[,<pattern>...]
                                      other images spec.image may name; "*" matches any characters,
                                      e.g. registry.example.com/backup/*; repeatable (default: none,
                                      only --backup-image)
  ${ALLOWED_ENDPOINTS_FLAG} <pattern>[,<pattern>...]
                                      object store endpoints spec.destination.objectStore.endpoint may
                                      name, http(s)://host[:port]; "*" matches any characters but "/",
                                      a lone "*" all; repeatable (default: none, only AWS S3)
  --shutdown-timeout <seconds>        time in-flight reconciles get on SIGTERM (default: 10)
  --conversion-webhook-bind-address <[host]:port>
                                      HTTPS conversion webhook (POST /convert), on every replica;
                                      "0" disables (default: 0)
  --conversion-webhook-service-name <name>
                                      Service the webhook certificate names, in the Lease namespace
                                      (default: backupschedule-operator-webhook)
  --conversion-webhook-secret-name <name>
                                      Secret with the webhook's CA and certificate (renewed by the leader;
                                      filled by any replica while it holds nothing servable)
                                      (default: backupschedule-operator-webhook-tls)
  --conversion-webhook-cert-dir <dir>
                                      read the webhook's tls.crt and tls.key from this directory instead
                                      (a mounted Secret kept by cert-manager), again whenever they change;
                                      no Secret written, no caBundle injected. Excludes
                                      --conversion-webhook-secret-name (default: unset)
  --sync-period <duration>            reconcile every BackupSchedule again this often, ±10 %, e.g. 10h,
                                      30m, 1h30m; 0 turns it off (default: 10h)
  --version                           print the release and exit
  --help                              print this help
`;

/** Parses `[host]:port` or `0` (disabled) with the runtime's parser, as a {@link UsageError}. */
function bindAddress(flag: string, value: string): BindAddress | undefined {
  try {
    return parseBindAddress(value, `--${flag}`);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function integer(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) {
    throw new UsageError(`--${flag}: expected an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return n;
}

/** Longest `--sync-period`: a week. */
const MAX_SYNC_PERIOD_MS = 7 * 24 * 3_600_000;

/** A duration as Go writes one, in whole hours, minutes and seconds (`10h`, `1h30m`, `90s`), or `0`; in ms. */
function duration(flag: string, value: string, minMs: number, maxMs: number): number {
  const match = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(value);
  const ms = value === '0' ? 0 : match && value !== '' ? ((Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0)) * 60 + Number(match[3] ?? 0)) * 1000 : NaN;
  if (!(ms === 0 || (ms >= minMs && ms <= maxMs))) {
    throw new UsageError(`--${flag}: expected 0 or a duration from ${minMs / 1000}s to ${maxMs / 3_600_000}h in hours, minutes and seconds (e.g. 10h, 1h30m, 90s), got ${JSON.stringify(value)}`);
  }
  return ms;
}

function nonEmpty(flag: string, value: string | undefined): string | undefined {
  if (value === '') throw new UsageError(`--${flag}: must not be empty`);
  return value;
}

/** A Service name: an RFC 1035 label (it becomes the first label of the certificate's DNS names). */
function dnsLabel(flag: string, value: string | undefined): string | undefined {
  if (value !== undefined && !/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/.test(value)) {
    throw new UsageError(`--${flag}: ${JSON.stringify(value)} is not a valid Service name (lower-case letters, digits and "-", starting with a letter, at most 63)`);
  }
  return value;
}

/** A Secret name: an RFC 1123 subdomain. */
function dnsSubdomain(flag: string, value: string | undefined): string | undefined {
  if (value !== undefined && (value.length > 253 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(value))) {
    throw new UsageError(`--${flag}: ${JSON.stringify(value)} is not a valid Secret name (lower-case RFC 1123 subdomain, at most 253)`);
  }
  return value;
}

/**
 * Go's flag package (and so every controller-runtime manager) accepts `--flag=true` and `--flag=false`
 * for booleans, and manifests written for those pass `--leader-elect=false`; parseArgs knows only the
 * bare and the `--no-` forms. The last occurrence wins, as in Go.
 */
function goBooleans(argv: readonly string[], flags: readonly string[]): string[] {
  return argv.flatMap((arg) => {
    const match = /^--([^=]+)=(.*)$/.exec(arg);
    if (!match || !flags.includes(match[1]!)) return [arg];
    const [, flag, value] = match;
    if (value === 'true') return [`--${flag}`];
    if (value === 'false') return [`--no-${flag}`];
    throw new UsageError(`--${flag}: expected true or false, got ${JSON.stringify(value)}`);
  });
}

/** Parses the arguments after the script name. Throws {@link UsageError}. */
export function parseCommandLine(argv: readonly string[]): Command {
  // The backup runner (src/pure/backup-contract.ts) and the migration have their own flags: dispatch before parsing ours.
  if (argv[0] === 'backup') return { kind: 'backup' };
  if (argv[0] === 'migrate-storage') return { kind: 'migrate-storage' };
  let parsed;
  try {
    parsed = parseArgs({
      args: goBooleans(argv, ['leader-elect', 'help', 'version']),
      allowPositionals: true,
      allowNegative: true,
      strict: true,
      options: {
        kubeconfig: { type: 'string' },
        namespace: { type: 'string', multiple: true },
        'leader-elect': { type: 'boolean' },
        'lease-name': { type: 'string' },
        'lease-namespace': { type: 'string' },
        'leader-election-id': { type: 'string' },
        'metrics-bind-address': { type: 'string' },
        'health-probe-bind-address': { type: 'string' },
        concurrency: { type: 'string' },
        'log-level': { type: 'string' },
        'log-format': { type: 'string' },
        'backup-image': { type: 'string' },
        'allowed-backup-images': { type: 'string', multiple: true },
        'allowed-backup-endpoints': { type: 'string', multiple: true },
        'shutdown-timeout': { type: 'string' },
        'conversion-webhook-bind-address': { type: 'string' },
        'conversion-webhook-service-name': { type: 'string' },
        'conversion-webhook-secret-name': { type: 'string' },
        'conversion-webhook-cert-dir': { type: 'string' },
        'sync-period': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help' };
  if (values.version) return { kind: 'version' };
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])} (known subcommands: backup, migrate-storage)`);

  const logLevel = values['log-level'] ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new UsageError(`--log-level: expected one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(logLevel)}`);
  }
  const logFormat = values['log-format'] ?? 'json';
  if (logFormat !== 'json' && logFormat !== 'text') {
    throw new UsageError(`--log-format: expected json or text, got ${JSON.stringify(logFormat)}`);
  }
  const namespaces = values.namespace ?? [];
  for (const ns of namespaces) {
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(ns)) throw new UsageError(`--namespace: ${JSON.stringify(ns)} is not a valid namespace name`);
  }
  if (values['conversion-webhook-cert-dir'] !== undefined && values['conversion-webhook-secret-name'] !== undefined) {
    throw new UsageError('--conversion-webhook-cert-dir and --conversion-webhook-secret-name are mutually exclusive: the certificate is read from files kept by someone else (cert-manager), or kept by the controller in the Secret, not both');
  }
  const allowedBackupImages = (values['allowed-backup-images'] ?? []).flatMap((list) => list.split(',')).map((p) => p.trim());
  for (const pattern of allowedBackupImages) {
    const problem = imagePatternProblem(pattern);
    if (problem) throw new UsageError(`${ALLOWED_IMAGES_FLAG}: ${problem}`);
  }
  const allowedBackupEndpoints = (values['allowed-backup-endpoints'] ?? []).flatMap((list) => list.split(',')).map((p) => p.trim());
  for (const pattern of allowedBackupEndpoints) {
    const problem = endpointPatternProblem(pattern);
    if (problem) throw new UsageError(`${ALLOWED_ENDPOINTS_FLAG}: ${problem}`);
  }
  return {
    kind: 'run',
    options: {
      kubeconfig: nonEmpty('kubeconfig', values.kubeconfig),
      namespaces: [...new Set(namespaces)],
      leaderElect: values['leader-elect'] ?? false,
      leaseName: nonEmpty('lease-name', values['lease-name']) ?? 'backupschedule-operator-leader',
      leaseNamespace: nonEmpty('lease-namespace', values['lease-namespace']),
      identity: nonEmpty('leader-election-id', values['leader-election-id']),
      metricsAddress: bindAddress('metrics-bind-address', values['metrics-bind-address'] ?? ':8080'),
      healthAddress: bindAddress('health-probe-bind-address', values['health-probe-bind-address'] ?? ':8081'),
      concurrency: integer('concurrency', values.concurrency ?? '2', 1, 64),
      logLevel: logLevel as LogLevel,
      logFormat,
      backupImage: nonEmpty('backup-image', values['backup-image']) ?? DEFAULT_BACKUP_IMAGE,
      allowedBackupImages: [...new Set(allowedBackupImages)],
      allowedBackupEndpoints: [...new Set(allowedBackupEndpoints)],
      shutdownTimeoutSeconds: integer('shutdown-timeout', values['shutdown-timeout'] ?? '10', 0, 3600),
      conversionWebhookAddress: bindAddress('conversion-webhook-bind-address', values['conversion-webhook-bind-address'] ?? '0'),
      conversionWebhookServiceName: dnsLabel('conversion-webhook-service-name', values['conversion-webhook-service-name']) ?? 'backupschedule-operator-webhook',
      conversionWebhookSecretName: dnsSubdomain('conversion-webhook-secret-name', values['conversion-webhook-secret-name']) ?? 'backupschedule-operator-webhook-tls',
      conversionWebhookCertDir: nonEmpty('conversion-webhook-cert-dir', values['conversion-webhook-cert-dir']),
      syncPeriodMs: duration('sync-period', values['sync-period'] ?? '10h', 1000, MAX_SYNC_PERIOD_MS),
    },
  };
}
