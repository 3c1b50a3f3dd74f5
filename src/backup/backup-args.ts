/**
 * Command line of the `backup` subcommand (README "Backup container contract"; buildCronJob emits the
 * run form). A mistake is a {@link BackupUsageError} naming the flag and the value; the process exits 2.
 *
 *   backup --source=etcd --etcd-endpoints=<url,url> [--etcd-tls-dir=<dir>] --destination-dir=<dir> <retention>
 *   backup --source=pvc --source-dir=<dir> --destination-dir=<dir> <retention>
 *   (retention: one or more of --keep-last=<N> --keep-daily=<N> --keep-weekly=<N> --keep-monthly=<N>)
 *   backup verify <file>
 *   backup list <dir>
 *   backup --source=… --destination-url=s3://BUCKET[/PREFIX] [s3 flags] [--age-recipient=age1…]… <retention>
 *   backup list s3://BUCKET[/PREFIX] | verify s3://…/NAME [--identity F] | fetch s3://…/NAME --identity F -o OUT
 *   (src/backup/object-store/object-store-args.ts)
 */
import { parseBackupFlags } from './backup-flags.ts';
import { ENV_SCHEDULE_NAME, ENV_SCHEDULE_NAMESPACE } from '../pure/backup-contract.ts';
import type { RetentionPolicy } from './retention.ts';
import { ageRecipientsFrom, compressionFrom, objectStoreTargetFrom, S3_FLAG_OPTIONS, s3OptionsFrom, UPLOAD_FLAG_OPTIONS, type ObjectStoreTarget } from './object-store/object-store-args.ts';
import type { S3Options } from './object-store/s3-options.ts';
import type { Compression } from './pipeline/compression.ts';

/** What a backup run takes from. */
export type BackupSource =
  | { readonly kind: 'etcd'; readonly endpoints: readonly string[]; readonly tlsDir: string | undefined }
  | { readonly kind: 'pvc'; readonly sourceDir: string };

/** A parsed `backup` command line. */
export type BackupCommand =
  | {
      readonly kind: 'run';
      readonly source: BackupSource;
      readonly destinationDir: string;
      /**
       * `--age-recipient` given: the bucket's pipeline into the directory (compression, default zstd,
       * then age), named `<schedule>-<stamp>.<db|tar>[.zst|.gz].age`. Unset: `.db` / `.tar.gz` as ever.
       */
      readonly encryption?: DirectoryEncryption;
      /** Which backups to keep (at least one rule set): the planner's policy. */
      readonly retention: RetentionPolicy;
      /** The owning BackupSchedule's name (env BACKUP_SCHEDULE_NAME): prefix of every file. */
      readonly schedule: string;
      /** Its namespace (env BACKUP_SCHEDULE_NAMESPACE), for the logs. */
      readonly namespace: string | undefined;
    }
  | {
      /** A run to an object store (`--destination-url=s3://…`): src/backup/object-store/s3-run.ts. */
      readonly kind: 'upload';
      readonly source: BackupSource;
      readonly target: ObjectStoreTarget;
      readonly retention: RetentionPolicy;
      readonly schedule: string;
      readonly namespace: string | undefined;
    }
  | { readonly kind: 's3-list'; readonly url: string; readonly s3: S3Options }
  | { readonly kind: 's3-verify'; readonly url: string; readonly s3: S3Options; readonly identityFile: string | undefined }
  | { readonly kind: 's3-fetch'; readonly url: string; readonly s3: S3Options; readonly identityFile: string | undefined; readonly output: string }
  | { readonly kind: 'verify'; readonly file: string; readonly identityFile?: string }
  | { readonly kind: 'list'; readonly dir: string }
  | { readonly kind: 'help' };

/** How a run to a directory encrypts (`--age-recipient`, `--compression`). */
export interface DirectoryEncryption {
  /** age recipients (`age1…`), at least one. */
  readonly ageRecipients: readonly string[];
  readonly compression: Compression;
}

/** A command-line mistake; exit code 2. */
export class BackupUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupUsageError';
  }
}

/** Usage text of `backup`. */
export const BACKUP_USAGE = `Usage:
  backup --source=etcd --etcd-endpoints=<url>[,<url>...] [--etcd-tls-dir=<dir>] --destination-dir=<dir> <retention>
  backup --source=pvc --source-dir=<dir> --destination-dir=<dir> <retention>
    either with [--age-recipient=age1…]... [--compression=zstd|gzip|none]: encrypted as in a bucket,
    <schedule>-<yyyymmddThhmmssZ>.<db|tar>[.zst|.gz].age
    <retention>: one or more of --keep-last=<N> --keep-daily=<N> --keep-weekly=<N> --keep-monthly=<N> (N 1-1000;
    restic forget semantics: a backup is kept if it is among the last N, or the newest of one of the N newest
    UTC days / ISO weeks / months that have backups)
  backup verify <file> [--identity=FILE]  check a backup's format and its .sha256 sidecar (exit 0 valid, 1 not); an
                           encrypted one (.age): without --identity only its SHA-256 against the sidecar, with it
                           also decrypted, decompressed and its content checked
  backup list <dir>        list the backups in <dir> with their time, size and verification

  Object store (S3 or compatible; credentials only from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN):
  backup --source=… --destination-url=s3://BUCKET[/PREFIX] [<s3>] [--age-recipient=age1…]... [--compression=zstd|gzip|none]
         [--s3-verify=etag|download] <retention>
    object <PREFIX>/<schedule>-<yyyymmddThhmmssZ>.<db|tar>[.zst|.gz][.age] and <object>.sha256 (sha256sum of its bytes)
  backup list s3://BUCKET[/PREFIX] [<s3>]                    the backups under the prefix, with sizes and sidecars
  backup verify s3://BUCKET[/PREFIX]/NAME [--identity=FILE] [<s3>]  SHA-256 against the sidecar; with the identity
                                                             (or unencrypted) also decompress and check the content
  backup fetch s3://BUCKET[/PREFIX]/NAME [--identity=FILE] -o OUT [<s3>]  download, decrypt, decompress, check:
                                                             OUT is the snapshot etcdctl restores, or the tar archive
    <s3>: [--s3-endpoint=URL] [--s3-region=R] [--s3-force-path-style] [--s3-ca-file=PEM] [--s3-allow-http]

Environment (runs): ${ENV_SCHEDULE_NAME} (required: the file name prefix), ${ENV_SCHEDULE_NAMESPACE}.
Exit codes: 0 written, verified and pruned; 1 failed; 2 usage; 3 volume archive written but incomplete
(files changed while read; older backups not pruned); 4 written and verified, but pruning failed (older
backups kept). 3 and 4 are final: the Job does not retry them.
`;

/** The BackupSchedule name rule (DNS-1123 subdomain): it becomes a file name prefix, never a path. */
const SCHEDULE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function required(flag: string, value: string | undefined): string {
  if (value === undefined || value === '') throw new BackupUsageError(`--${flag} is required`);
  return value;
}

/** Parses the arguments after `backup`; `env` supplies the schedule name. */
export function parseBackupArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): BackupCommand {
  const [first, ...rest] = argv;
  if ((first === 'verify' || first === 'list' || first === 'fetch') && (first === 'fetch' || rest[0]?.startsWith('s3://'))) return parseObjectStoreTool(first, rest);
  if (first === 'verify') {
    const [file, ...flags] = rest;
    if (file === undefined || file === '' || file.startsWith('--')) throw new BackupUsageError('backup verify: expected exactly one file argument (then optionally --identity=FILE)');
    const { identity, ...others } = parseBackupFlags(flags, { identity: { type: 'string' } }, BackupUsageError);
    if (Object.keys(others).length > 0 || identity === '') throw new BackupUsageError(identity === '' ? '--identity: empty' : 'backup verify: expected exactly one file argument (then optionally --identity=FILE)');
    return { kind: 'verify', file, ...(identity === undefined ? {} : { identityFile: identity }) };
  }
  if (first === 'list') {
    if (rest.length !== 1 || rest[0] === '' || rest[0]!.startsWith('--')) throw new BackupUsageError('backup list: expected exactly one directory argument');
    return { kind: 'list', dir: rest[0]! };
  }
  const values = parseBackupFlags(argv, {
    source: { type: 'string' },
    'etcd-endpoints': { type: 'string' },
    'etcd-tls-dir': { type: 'string' },
    'source-dir': { type: 'string' },
    'destination-dir': { type: 'string' },
    ...UPLOAD_FLAG_OPTIONS,
    'keep-last': { type: 'string' },
    'keep-daily': { type: 'string' },
    'keep-weekly': { type: 'string' },
    'keep-monthly': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  }, BackupUsageError);
  if (values.help) return { kind: 'help' };
  const retention = parseRetention(values);
  const toBucket = values['destination-url'] !== undefined;
  if (toBucket && values['destination-dir'] !== undefined) throw new BackupUsageError('--destination-dir and --destination-url: give exactly one');
  let encryption: DirectoryEncryption | undefined;
  if (!toBucket) {
    // spec.encryption applies to any destination: a directory takes the bucket's age and compression flags.
    const directoryFlags = new Set(['destination-url', 'age-recipient', 'compression']);
    const misplaced = Object.keys(UPLOAD_FLAG_OPTIONS).find((flag) => !directoryFlags.has(flag) && values[flag as keyof typeof values] !== undefined);
    if (misplaced) throw new BackupUsageError(`--${misplaced}: only with --destination-url`);
    const ageRecipients = usage(() => ageRecipientsFrom(values));
    // Unencrypted, a directory backup is `.db` or `.tar.gz`, the names every existing tool and run knows.
    if (ageRecipients.length === 0 && values.compression !== undefined) throw new BackupUsageError('--compression: with --destination-dir only together with --age-recipient (an unencrypted directory backup is .db or .tar.gz)');
    if (ageRecipients.length > 0) encryption = { ageRecipients, compression: usage(() => compressionFrom(values)) };
  }
  const destinationDir = toBucket ? '' : required('destination-dir', values['destination-dir']);
  const schedule = env[ENV_SCHEDULE_NAME];
  if (schedule === undefined || !SCHEDULE_NAME.test(schedule) || schedule.length > 253) {
    throw new BackupUsageError(`${ENV_SCHEDULE_NAME}: expected the BackupSchedule's name (a DNS-1123 subdomain), got ${JSON.stringify(schedule ?? '')}`);
  }
  let source: BackupSource;
  switch (values.source) {
    case 'etcd': {
      if (values['source-dir'] !== undefined) throw new BackupUsageError('--source-dir: only with --source=pvc');
      const endpoints = required('etcd-endpoints', values['etcd-endpoints']).split(',');
      for (const endpoint of endpoints) {
        if (!/^https?:\/\/[^\s/]+(:[0-9]{1,5})?\/?$/.test(endpoint)) throw new BackupUsageError(`--etcd-endpoints: ${JSON.stringify(endpoint)} is not an http:// or https:// host[:port] URL`);
      }
      const tlsDir = values['etcd-tls-dir'];
      if (tlsDir === '') throw new BackupUsageError('--etcd-tls-dir: empty');
      source = { kind: 'etcd', endpoints, tlsDir };
      break;
    }
    case 'pvc':
      if (values['etcd-endpoints'] !== undefined || values['etcd-tls-dir'] !== undefined) throw new BackupUsageError('--etcd-endpoints/--etcd-tls-dir: only with --source=etcd');
      source = { kind: 'pvc', sourceDir: required('source-dir', values['source-dir']) };
      break;
    default:
      throw new BackupUsageError(`--source: expected etcd or pvc, got ${JSON.stringify(values.source ?? '')}`);
  }
  if (toBucket) return { kind: 'upload', source, target: usage(() => objectStoreTargetFrom(values)), retention, schedule, namespace: env[ENV_SCHEDULE_NAMESPACE] };
  return { kind: 'run', source, destinationDir, ...(encryption ? { encryption } : {}), retention, schedule, namespace: env[ENV_SCHEDULE_NAMESPACE] };
}

/** Runs a check that throws plain errors naming a flag; rethrows them as usage errors. */
function usage<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    throw new BackupUsageError((err as Error).message);
  }
}

/** `backup list|verify|fetch s3://…` and their flags. */
function parseObjectStoreTool(tool: 'verify' | 'list' | 'fetch', args: readonly string[]): BackupCommand {
  const [url, ...flags] = args;
  if (url === undefined || !url.startsWith('s3://')) throw new BackupUsageError(`backup ${tool}: expected an s3://BUCKET${tool === 'list' ? '[/PREFIX]' : '[/PREFIX]/NAME'} argument first`);
  const values = parseBackupFlags(flags, { ...S3_FLAG_OPTIONS, ...(tool === 'list' ? {} : { identity: { type: 'string' } }), ...(tool === 'fetch' ? { output: { type: 'string', short: 'o' } } : {}) }, BackupUsageError);
  const s3 = usage(() => s3OptionsFrom(values));
  const identity = (values as { identity?: string }).identity;
  if (identity === '') throw new BackupUsageError('--identity: empty');
  if (tool === 'list') return { kind: 's3-list', url, s3 };
  if (tool === 'verify') return { kind: 's3-verify', url, s3, identityFile: identity };
  return { kind: 's3-fetch', url, s3, identityFile: identity, output: required('output (-o)', (values as { output?: string }).output) };
}

/** The retention flags, in restic's order, with the policy field each sets. */
const RETENTION_FLAGS = [
  ['keep-last', 'keepLast'],
  ['keep-daily', 'keepDaily'],
  ['keep-weekly', 'keepWeekly'],
  ['keep-monthly', 'keepMonthly'],
] as const satisfies readonly (readonly [string, keyof RetentionPolicy])[];

/** The `--keep-*` flags as a policy: each one given is an integer 1-1000, and at least one is given. */
function parseRetention(values: Readonly<Record<string, string | boolean | readonly string[] | undefined>>): RetentionPolicy {
  const policy: { -readonly [K in keyof RetentionPolicy]: number } = {};
  for (const [flag, field] of RETENTION_FLAGS) {
    const text = values[flag];
    if (typeof text !== 'string') continue;
    const count = /^[0-9]{1,4}$/.test(text) ? Number(text) : NaN;
    if (!(count >= 1 && count <= 1000)) throw new BackupUsageError(`--${flag}: expected an integer 1-1000, got ${JSON.stringify(text)}`);
    policy[field] = count;
  }
  // Without any rule every older backup would go: refuse, naming the flag buildCronJob always emits.
  if (Object.keys(policy).length === 0) throw new BackupUsageError('--keep-last is required (or one of --keep-daily, --keep-weekly, --keep-monthly)');
  return policy;
}
