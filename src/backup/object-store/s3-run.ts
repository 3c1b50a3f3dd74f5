/**
 * One backup run to an object store, start to end: check the bucket is reachable → abort this
 * schedule's stale multipart uploads → stream the backup through compression and age into a multipart
 * upload while it is checked → complete the upload only if the check passed → confirm what the bucket
 * holds (size and ETag, or a full download) → write the `.sha256` sidecar → prune this schedule's
 * oldest backups → one summary log line. A failure at any step aborts the upload or deletes the object
 * this run completed, so the bucket holds only complete, checked backups (each with its sidecar).
 *
 * Exit codes as for a directory (src/backup/run-backup.ts): 0 uploaded, checked and pruned; 1 failed;
 * 3 a volume archive whose files changed while read, kept as `….incomplete.tar…` (s3-incomplete.ts),
 * not counted, older backups not pruned; 4 uploaded and checked, pruning failed.
 */
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { realClock } from '../../runtime/clock.ts';
import { EXIT_INCOMPLETE, EXIT_PRUNE_FAILED } from '../../pure/backup-contract.ts';
import type { BackupCommand } from '../backup-args.ts';
import { BackupFailedError } from '../backup-errors.ts';
import { megabytesPerSecond, Progress } from '../progress.ts';
import { planRetention } from '../retention.ts';
import type { RunDependencies } from '../run-backup.ts';
import { formatSidecar } from '../sidecar.ts';
import { newAgeHeader } from '../pipeline/age-stream.ts';
import { objectBackupName, OBJECT_SIDECAR_SUFFIX } from './object-names.ts';
import { abortStaleUploads, deleteKeys, listBackupObjects } from './s3-bucket.ts';
import { createS3Client } from './s3-client.ts';
import { describeS3Error, isAbort } from './s3-errors.ts';
import { keyOf, urlOf } from './s3-location.ts';
import { MultipartUpload, type SentObject } from './s3-multipart.ts';
import { abortQuietly, uploadArchive, uploadSnapshot, type UploadedBackup } from './s3-produce.ts';
import { keepIncomplete, pruneOlderIncomplete } from './s3-incomplete.ts';

type UploadCommand = Extract<BackupCommand, { kind: 'upload' }>;

/** How long deleting a half-written object may take after a failure or SIGTERM. */
const CLEANUP_TIMEOUT_MS = 20_000;

/** Wraps an S3 call's failure in a one-line {@link BackupFailedError}. */
async function step<T>(what: string, call: () => Promise<T>, context: { bucket: string; endpoint?: string }): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof BackupFailedError) throw err;
    throw new BackupFailedError(isAbort(err) ? `${what}: aborted (the Pod is being stopped)` : describeS3Error(what, err, context), { cause: err });
  }
}

/** Confirms the bucket holds what was sent; throws a worded error when not. */
async function confirmObject(client: S3Client, command: UploadCommand, key: string, sent: SentObject, signal?: AbortSignal): Promise<Record<string, unknown>> {
  const { bucket } = command.target.location;
  const opts = signal ? { abortSignal: signal } : {};
  const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }), opts);
  if (head.ContentLength !== sent.size) throw new BackupFailedError(`the bucket holds ${head.ContentLength} bytes under ${key}, ${sent.size} were sent`);
  if (command.target.verify === 'download') {
    // The whole object comes back: its SHA-256 must be the one of the bytes sent (cost: one full download).
    const { Body } = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }), opts);
    const hash = createHash('sha256');
    for await (const chunk of Body as AsyncIterable<Uint8Array>) hash.update(chunk);
    const got = hash.digest('hex');
    if (got !== sent.sha256) throw new BackupFailedError(`the object read back from the bucket has SHA-256 ${got}, the bytes sent ${sent.sha256}`);
    return { confirmed: 'size and SHA-256 of a full download' };
  }
  if (head.ETag !== sent.expectedEtag) {
    throw new BackupFailedError(`the bucket's ETag ${head.ETag ?? '(none)'} for ${key} differs from the MD5-based ${sent.expectedEtag} of the parts sent (a server encrypting with SSE-KMS/SSE-C computes other ETags: use --s3-verify=download)`);
  }
  return { confirmed: 'size and multipart ETag (MD5 of every part sent)' };
}

/** Runs one backup to the object store; resolves with the exit code after one summary line. */
export async function runObjectStoreBackup(command: UploadCommand, deps: RunDependencies, env: Readonly<Record<string, string | undefined>> = process.env): Promise<number> {
  const clock = deps.clock ?? realClock;
  const { logger, signal } = deps;
  const { target } = command;
  const { location } = target;
  const context = { bucket: location.bucket, ...(target.s3.endpoint ? { endpoint: target.s3.endpoint } : {}) };
  const startedAt = clock.now();
  const progress = new Progress({ logger, clock, what: command.source.kind === 'etcd' ? 'etcd snapshot' : 'volume archive', ...(deps.progressIntervalMs === undefined ? {} : { intervalMs: deps.progressIntervalMs }) });
  const sendOpts = signal ? { abortSignal: signal } : {};
  let client: S3Client | undefined;
  /** Objects this run created that are not (yet) a confirmed backup with its sidecar: deleted on failure. */
  const unconfirmed = new Set<string>();
  let produced: UploadedBackup | undefined;
  let pending: MultipartUpload | undefined;
  try {
    try {
      client = createS3Client(target.s3, env);
    } catch (err) {
      throw new BackupFailedError((err as Error).message, { cause: err });
    }
    const s3 = client;
    const age = target.ageRecipients.length > 0 ? await newAgeHeader(target.ageRecipients) : undefined;
    if (!age) logger.warn({}, 'no --age-recipient: the backup is stored unencrypted (an etcd snapshot holds every Secret of the cluster)');
    // A listing, not HeadBucket: its error answers carry a body (NoSuchBucket, SignatureDoesNotMatch,
    // RequestTimeTooSkewed…) where HEAD has only a status; and retention needs the right to list anyway.
    await step(`bucket ${location.bucket}`, () => s3.send(new ListObjectsV2Command({ Bucket: location.bucket, Prefix: keyOf(location, `${command.schedule}-`), MaxKeys: 1 }), sendOpts), context);
    const stale = await step('aborting stale multipart uploads', () => abortStaleUploads(s3, location, command.schedule, signal), context);
    if (stale.length > 0) logger.warn({ keys: stale }, 'aborted multipart uploads left by interrupted runs of this schedule');

    const kind = command.source.kind === 'etcd' ? 'etcd-snapshot' : 'volume-archive';
    const name = objectBackupName(command.schedule, startedAt, kind, target.compression, age !== undefined);
    const key = keyOf(location, name);
    const exists = await s3.send(new HeadObjectCommand({ Bucket: location.bucket, Key: key }), sendOpts).then(() => true, (err: unknown) => {
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
      throw new BackupFailedError(describeS3Error(`checking ${key}`, err, context), { cause: err });
    });
    if (exists) throw new BackupFailedError(`${urlOf(location, name)} already exists; refusing to replace it`);

    const startUpload = (): Promise<MultipartUpload> => step('starting the multipart upload', () => MultipartUpload.start({ client: s3, bucket: location.bucket, key, ...(signal ? { signal } : {}) }), context);
    const producerDeps = { logger, clock, progress, schedule: command.schedule, settings: { compression: target.compression, age }, startUpload, ...(signal ? { signal } : {}), ...(deps.onBytesCopied ? { onBytesCopied: deps.onBytesCopied } : {}) };
    produced = await step('upload', () => (command.source.kind === 'etcd' ? uploadSnapshot(command.source, producerDeps) : uploadArchive(command.source, producerDeps)), context);
    const { upload, sent } = produced;
    pending = upload;
    if (signal?.aborted) throw new BackupFailedError('aborted (the Pod is being stopped) before the upload was completed');
    await step('completing the multipart upload', async () => {
      try {
        await upload.complete();
      } catch (err) {
        await abortQuietly(upload, logger, 'completion failed');
        throw err;
      }
    }, context);
    pending = undefined;
    unconfirmed.add(key);
    const confirmed = await step('confirming the object', () => confirmObject(s3, command, key, sent, signal), context);
    if (produced.incomplete) {
      const incompleteName = objectBackupName(command.schedule, startedAt, kind, target.compression, age !== undefined, true);
      const kept = await step('keeping the incomplete archive', () => keepIncomplete({ client: s3, location, schedule: command.schedule, from: key, name: incompleteName, sent, verify: target.verify, onCopied: (k) => unconfirmed.add(k), onKept: (k) => unconfirmed.delete(k), ...(signal ? { signal } : {}) }), context);
      unconfirmed.clear();
      progress.stop();
      let removedIncomplete: string[] = [];
      try {
        removedIncomplete = await pruneOlderIncomplete(s3, location, command.schedule, kept, signal);
      } catch (err) {
        logger.error({ err: describeS3Error('deleting older incomplete archives', err, context) }, 'could not delete older incomplete archives');
      }
      const message = `backup uploaded and checked but incomplete: ${produced.incomplete}; kept as ${urlOf(location, incompleteName)}, not counted by retention; older backups kept`;
      logger.error({ object: urlOf(location, incompleteName), size: sent.size, plainSize: produced.plainSize, sha256: sent.sha256, ...confirmed, removedIncomplete, exitCode: EXIT_INCOMPLETE, ...produced.details }, message);
      return EXIT_INCOMPLETE;
    }
    await step('writing the sidecar', () => s3.send(new PutObjectCommand({ Bucket: location.bucket, Key: key + OBJECT_SIDECAR_SUFFIX, Body: formatSidecar(sent.sha256, name), ContentType: 'text/plain' }), sendOpts), context);
    unconfirmed.clear();
    progress.stop();
    const elapsedMs = clock.now() - startedAt;
    const usage = process.resourceUsage();
    const summary = { object: urlOf(location, name), size: sent.size, plainSize: produced.plainSize, sha256: sent.sha256, parts: sent.parts, compression: target.compression, encrypted: age !== undefined, ...confirmed, durationSec: Math.round(elapsedMs / 100) / 10, mbPerSec: megabytesPerSecond(produced.plainSize, elapsedMs), maxRssMiB: Math.round(usage.maxRSS / 1024), cpuSec: Math.round((usage.userCPUTime + usage.systemCPUTime) / 1e4) / 100, ...produced.details };
    let pruned: string[];
    try {
      const objects = await listBackupObjects(s3, location, command.schedule, signal);
      // An incomplete archive is not a backup: counted, torn archives would push complete ones out.
      const candidates = objects.filter((o) => !o.incomplete).map((o) => ({ name: o.key, time: o.time, ...(o.sidecar ? { companions: [o.key + OBJECT_SIDECAR_SUFFIX] } : { problem: 'no .sha256 sidecar (its run did not finish)' }) }));
      const plan = planRetention({ candidates, policy: command.retention, justWritten: { name: key, time: startedAt }, now: clock.now() });
      for (const ignored of plan.ignored) logger.warn(ignored, 'retention: not counted, not deleted');
      await deleteKeys(s3, location.bucket, plan.delete, signal);
      pruned = plan.delete.filter((k) => !k.endsWith(OBJECT_SIDECAR_SUFFIX));
      for (const k of pruned) logger.info({ object: k }, 'retention: deleted');
    } catch (err) {
      const message = describeS3Error('retention', err, context);
      logger.error({ ...summary, exitCode: EXIT_PRUNE_FAILED, err: message }, `backup uploaded and checked, but pruning failed: ${message}`);
      return EXIT_PRUNE_FAILED;
    }
    logger.info({ ...summary, pruned, exitCode: 0 }, 'backup complete: uploaded, checked and pruned');
    return 0;
  } catch (err) {
    progress.stop();
    if (pending) await abortQuietly(pending, logger, 'the run failed');
    for (const key of client ? unconfirmed : []) {
      // Completed but not confirmed or without its sidecar: not a backup; nothing may stay behind.
      await client!.send(new DeleteObjectCommand({ Bucket: location.bucket, Key: key }), { abortSignal: AbortSignal.timeout(CLEANUP_TIMEOUT_MS) }).then(
        () => logger.warn({ object: key }, 'deleted the object this run completed but could not confirm'),
        (e: unknown) => logger.error({ object: key, err: describeS3Error('delete', e, context) }, 'could not delete the object this run completed but could not confirm'),
      );
    }
    const message = err instanceof BackupFailedError ? err.message : describeS3Error('backup failed', err, context);
    logger.error({ exitCode: 1, durationSec: Math.round((clock.now() - startedAt) / 100) / 10, err: message }, `backup failed: ${message}`);
    return 1;
  } finally {
    client?.destroy();
  }
}
