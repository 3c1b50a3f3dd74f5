/**
 * One backup run, start to end: lock the schedule → write the new backup to a temp file → verify it →
 * rename it into place with its `.sha256` sidecar → prune this schedule's oldest backups → one summary
 * log line. Every failure leaves the destination as it was (older backups untouched, no temp file).
 *
 * Exit codes (README "Backup container contract"): 0 written, verified and pruned; 1 failed; 4 written
 * and verified but pruning failed (the Job must not retry: that adds a backup, prunes nothing); 3 a volume
 * archive was written and verified but files changed while read: it is named `….incomplete.tar.gz`,
 * retention does not count it and it replaces the schedule's older incomplete archive; older backups
 * were kept.
 */
import { readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { EXIT_INCOMPLETE, EXIT_PRUNE_FAILED } from '../pure/backup-contract.ts';
import { realClock, type Clock } from '../runtime/clock.ts';
import type { Logger } from '../runtime/logger.ts';
import type { BackupCommand } from './backup-args.ts';
import { acquireLock, LockBusyError } from './backup-lock.ts';
import { backupFileName, isTempFileOf, lockFileName, SIDECAR_SUFFIX, tempFilePrefix } from './backup-names.ts';
import { makeDirectories, syncDirectory, TempFile, writeFileDurably } from './durable-file.ts';
import { BackupFailedError, describeIoError } from './backup-errors.ts';
import { megabytesPerSecond, Progress } from './progress.ts';
import { planIncompleteCleanup, planRetention } from './retention.ts';
import { directoryRetentionCandidates } from './retention-candidates.ts';
import { backupDirNames, skippedMessage } from './backup-dir.ts';
import { formatSidecar } from './sidecar.ts';
import { produceArchive, produceSnapshot, type Produced } from './producers.ts';
import type { PipelineSettings } from './pipeline/encode-pipeline.ts';

/** Exit codes of a run. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;
// 3 and 4 are final for the Job (its podFailurePolicy): the contract module holds them for buildCronJob too.
export { EXIT_INCOMPLETE, EXIT_PRUNE_FAILED } from '../pure/backup-contract.ts';


/** Dependencies of {@link runBackup}. */
export interface RunDependencies {
  readonly logger: Logger;
  /** @default realClock */
  readonly clock?: Clock;
  /** Aborts the run (SIGTERM from the kubelet at activeDeadlineSeconds or deletion). */
  readonly signal?: AbortSignal;
  /** Interval of progress lines. @default 5000 */
  readonly progressIntervalMs?: number;
  /** Called with every chunk's byte count while copying. @default none */
  readonly onBytesCopied?: (bytes: number) => void;
  /** Hears the run's outcome once, just before it returns (main.ts writes the termination message). */
  readonly onOutcome?: (outcome: RunOutcome) => void;
}

/** How a run ended: the summary line's essentials, for the Pod's termination message. */
export interface RunOutcome {
  readonly exitCode: number;
  /** The summary line's message (on failure: the error). */
  readonly message: string;
  readonly durationSec: number;
  /** The backup written (absent when none was). */
  readonly file?: string;
  readonly size?: number;
  readonly sha256?: string;
}

type RunCommand = Extract<BackupCommand, { kind: 'run' }>;

async function prepareDestination(dir: string): Promise<void> {
  try {
    // The contract's destination is the claim's mount plus spec.destination...path: create the path
    // below the mount like `mkdir -p`. Without the mount the read-only root file system refuses (EROFS).
    await makeDirectories(dir, 0o700).catch((err: NodeJS.ErrnoException) => {
      // mkdir -p reports a file in the way as EEXIST; the stat below words it.
      if (err.code !== 'EEXIST') throw err;
    });
    if (!(await stat(dir)).isDirectory()) throw Object.assign(new Error(`${dir} is not a directory`), { code: 'ENOTDIR', path: dir });
  } catch (err) {
    throw new BackupFailedError(describeIoError(`destination directory ${dir} is not usable`, err), { cause: err });
  }
}

/** Removes temp files a killed run of this schedule left behind (safe: we hold the schedule's lock). */
async function removeLeftovers(dir: string, schedule: string, logger: Logger): Promise<void> {
  for (const name of await readdir(dir)) {
    if (!isTempFileOf(schedule, name)) continue;
    try {
      await unlink(join(dir, name));
      logger.warn({ file: name }, 'removed a temp file left by an interrupted run');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') logger.warn({ file: name, err: describeIoError('cannot remove it', err) }, 'could not remove a temp file left by an interrupted run');
    }
  }
}

/** Deletes `files` (backups and their sidecars) from `dir`; returns the backups deleted, without sidecars. */
async function deleteAll(dir: string, files: readonly string[], logger: Logger, why: string): Promise<string[]> {
  for (const file of files) {
    try {
      await unlink(join(dir, file));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new BackupFailedError(describeIoError(`${why}: cannot delete ${file}`, err), { cause: err });
    }
    logger.info({ file }, `${why}: deleted`);
  }
  if (files.length > 0) await syncDirectory(dir);
  return files.filter((f) => !f.endsWith(SIDECAR_SUFFIX));
}

/** Applies retention to the verified backups (src/backup/retention-candidates.ts); the others are logged, never deleted. */
async function prune(dir: string, command: RunCommand, justWritten: { name: string; time: number }, now: number, logger: Logger): Promise<string[]> {
  const candidates = await directoryRetentionCandidates(dir, await backupDirNames(dir, (e) => logger.warn({ file: e.name }, skippedMessage(e))), command.schedule, justWritten.name);
  const plan = planRetention({ candidates, policy: command.retention, justWritten, now });
  for (const { name, reason } of plan.ignored) {
    logger.warn({ file: name, reason }, `retention: ${name} is not counted and not deleted: ${reason}; check it (backup verify) and delete or fix it by hand`);
  }
  return deleteAll(dir, plan.delete, logger, 'retention');
}

/** Runs one backup; resolves with the exit code after logging one summary line. */
export async function runBackup(command: RunCommand, deps: RunDependencies): Promise<number> {
  const clock = deps.clock ?? realClock;
  const { logger } = deps;
  const dir = command.destinationDir;
  const startedAt = clock.now();
  const kind = command.source.kind === 'etcd' ? 'etcd-snapshot' : 'volume-archive';
  const progress = new Progress({ logger, clock, what: command.source.kind === 'etcd' ? 'etcd snapshot' : 'volume archive', ...(deps.progressIntervalMs === undefined ? {} : { intervalMs: deps.progressIntervalMs }) });
  let lock: Awaited<ReturnType<typeof acquireLock>> | undefined;
  try {
    let settings: PipelineSettings | undefined;
    if (command.encryption) {
      try {
        // Loaded only when encrypting: age-encryption stays out of an unencrypted run's memory.
        const { newAgeHeader } = await import('./pipeline/age-stream.ts');
        settings = { compression: command.encryption.compression, age: await newAgeHeader(command.encryption.ageRecipients) };
      } catch (err) {
        throw new BackupFailedError((err as Error).message, { cause: err });
      }
    }
    await prepareDestination(dir);
    try {
      lock = await acquireLock({ dir, name: lockFileName(command.schedule), clock });
    } catch (err) {
      if (err instanceof LockBusyError) throw new BackupFailedError(err.message, { cause: err });
      throw new BackupFailedError(describeIoError(`cannot create the lock file in ${dir}`, err), { cause: err });
    }
    if (lock.tookOverStale) logger.warn({ previousHolder: lock.tookOverStale }, 'took over a stale lock left by a run that did not finish');
    await removeLeftovers(dir, command.schedule, logger);

    const newTemp = async (): Promise<TempFile> => {
      try {
        return await TempFile.create(dir, tempFilePrefix(command.schedule));
      } catch (err) {
        throw new BackupFailedError(describeIoError(`cannot create a file in ${dir}`, err), { cause: err });
      }
    };
    const producerDeps = { logger, clock, progress, newTemp, ...(deps.signal ? { signal: deps.signal } : {}), ...(deps.onBytesCopied ? { onBytesCopied: deps.onBytesCopied } : {}) };
    let produced: Produced;
    if (settings) {
      const { produceEncryptedArchive, produceEncryptedSnapshot } = await import('./encrypted-producers.ts');
      produced = command.source.kind === 'etcd' ? await produceEncryptedSnapshot(command.source, settings, { ...producerDeps, schedule: command.schedule }) : await produceEncryptedArchive(command.source, settings, producerDeps);
    } else {
      produced = command.source.kind === 'etcd' ? await produceSnapshot(command.source, producerDeps) : await produceArchive(command.source, producerDeps);
    }
    // A torn archive gets a name retention never counts as a backup (README "The backup runner").
    const finalName = backupFileName(command.schedule, startedAt, kind, produced.incomplete !== undefined, settings ? { compression: settings.compression } : undefined);

    let path: string | undefined;
    try {
      path = await produced.temp.commit(finalName);
      await writeFileDurably(dir, finalName + SIDECAR_SUFFIX, formatSidecar(produced.sha256, finalName), tempFilePrefix(command.schedule));
    } catch (err) {
      await produced.temp.discard();
      // Only a file this run committed: a failed commit means the name belongs to someone else.
      if (path !== undefined) await unlink(path).catch(() => undefined);
      throw new BackupFailedError(describeIoError(`cannot write ${finalName}`, err), { cause: err });
    }
    progress.stop();
    const elapsedMs = clock.now() - startedAt;
    // Peak RSS (maxRSS is in KiB) and CPU time of the whole run: the Job's resources, from real runs.
    const usage = process.resourceUsage();
    const maxRssMiB = Math.round(usage.maxRSS / 1024);
    const cpuSec = Math.round((usage.userCPUTime + usage.systemCPUTime) / 1e4) / 100;
    const summary = { file: path, size: produced.size, sha256: produced.sha256, durationSec: Math.round(elapsedMs / 100) / 10, mbPerSec: megabytesPerSecond(produced.size, elapsedMs), maxRssMiB, cpuSec, ...produced.details };
    if (produced.incomplete) {
      // Only the newest incomplete archive stays: on a volume that is always busy every run is torn.
      let removedIncomplete: string[] = [];
      try {
        removedIncomplete = await deleteAll(dir, planIncompleteCleanup(await backupDirNames(dir, () => undefined), command.schedule, finalName), logger, 'older incomplete archive');
      } catch (err) {
        logger.error({ err: err instanceof Error ? err.message : String(err) }, 'could not delete older incomplete archives');
      }
      const message = `backup written and verified but incomplete: ${produced.incomplete}; kept as ${finalName}, not counted by retention; older backups kept`;
      logger.error({ ...summary, removedIncomplete, exitCode: EXIT_INCOMPLETE }, message);
      deps.onOutcome?.({ exitCode: EXIT_INCOMPLETE, message, durationSec: summary.durationSec, file: path, size: summary.size, sha256: summary.sha256 });
      return EXIT_INCOMPLETE;
    }
    let pruned: string[];
    try {
      pruned = await prune(dir, command, { name: finalName, time: startedAt }, clock.now(), logger);
    } catch (err) {
      const message = err instanceof BackupFailedError ? err.message : describeIoError('retention', err);
      logger.error({ ...summary, exitCode: EXIT_PRUNE_FAILED, err: message }, `backup written and verified, but pruning failed: ${message}`);
      deps.onOutcome?.({ exitCode: EXIT_PRUNE_FAILED, message: `backup written and verified, but pruning failed: ${message}`, durationSec: summary.durationSec, file: path, size: summary.size, sha256: summary.sha256 });
      return EXIT_PRUNE_FAILED;
    }
    logger.info({ ...summary, pruned, exitCode: EXIT_OK }, 'backup complete: written, verified and pruned');
    deps.onOutcome?.({ exitCode: EXIT_OK, message: 'backup complete: written, verified and pruned', durationSec: summary.durationSec, file: path, size: summary.size, sha256: summary.sha256 });
    return EXIT_OK;
  } catch (err) {
    progress.stop();
    const message = err instanceof BackupFailedError ? err.message : describeIoError('backup failed', err);
    const durationSec = Math.round((clock.now() - startedAt) / 100) / 10;
    logger.error({ exitCode: EXIT_FAILED, durationSec, err: message }, `backup failed: ${message}`);
    deps.onOutcome?.({ exitCode: EXIT_FAILED, message: `backup failed: ${message}`, durationSec });
    return EXIT_FAILED;
  } finally {
    await lock?.release();
  }
}
