/**
 * `backup restore`: picks and verifies a backup (select-backup.ts), then writes it into the target
 * directory. A volume archive is extracted (extractor.ts) into an empty directory (unless overwrite);
 * an etcd snapshot is copied there under its own name, verified again as written, and only then given
 * its final name: the `.db` file `etcdutl snapshot restore` takes.
 *
 * Exit codes: 0 restored; 1 failed while writing (the target may hold part of the backup); 2 usage;
 * 5 refused before anything was written (no such backup or none verifies, the archive is unsafe, the
 * target is not empty).
 */
import { createReadStream } from 'node:fs';
import { link, readdir, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { EXIT_RESTORE_REFUSED } from '../../pure/restore-contract.ts';
import type { Clock } from '../../runtime/clock.ts';
import type { Logger } from '../../runtime/logger.ts';
import { verifyArchive } from '../archive-verify.ts';
import { describeIoError } from '../backup-errors.ts';
import { makeDirectories, syncDirectory, TempFile } from '../durable-file.ts';
import { Progress } from '../progress.ts';
import { TarReader } from '../tar-reader.ts';
import { verifySnapshot } from '../snapshot-verify.ts';
import { EntryPlan, UnsafeEntryError } from './entry-paths.ts';
import { Extractor, type ExtractStats } from './extractor.ts';
import { fetchFromObjectStore, type ObjectStoreSource, type StagedBackup } from './s3-source.ts';
import { RestoreRefusedError, selectBackup, type VerifiedBackup } from './select-backup.ts';

/** Exit code: refused before anything was written (the Job's contract, src/pure/restore-contract.ts). */
export const EXIT_REFUSED = EXIT_RESTORE_REFUSED;

/** A parsed `backup restore` command line. */
export interface RestoreCommand {
  readonly kind: 'restore';
  /** The backup directory, or the object store's `s3://bucket[/prefix]` (then {@link RestoreCommand.objectStore}). */
  readonly from: string;
  /** How to reach the bucket when `from` is an s3:// URL. */
  readonly objectStore?: ObjectStoreSource;
  /** A backup file name or `latest`. */
  readonly backup: string;
  /** Only this schedule's backups count for `latest`. */
  readonly schedule: string | undefined;
  readonly targetDir: string;
  readonly overwrite: boolean;
  readonly allowIncomplete: boolean;
}

/** What a restore did. */
export interface RestoreOutcome {
  readonly exitCode: number;
  readonly message: string;
  readonly backup?: { readonly file: string; readonly time: string; readonly size: number; readonly sha256: string };
  readonly stats?: ExtractStats;
}

/** Dependencies of {@link runRestore}. */
export interface RestoreDeps {
  readonly logger: Logger;
  readonly clock?: Clock;
  /** The environment: object store credentials (AWS_ACCESS_KEY_ID, …). @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Read and inflate size of an extraction. */
const CHUNK = 1 << 20;

/** Names a fresh file system puts in its root: an otherwise empty volume is empty. */
const IGNORED_IN_EMPTY_TARGET = new Set(['lost+found']);

/** Runs a restore; never throws for an expected failure: the outcome says how it ended. */
export async function runRestore(command: RestoreCommand, deps: RestoreDeps): Promise<RestoreOutcome> {
  if (command.objectStore !== undefined) return runObjectStoreRestore(command, command.objectStore, deps);
  const { logger } = deps;
  let backup: VerifiedBackup;
  try {
    backup = await selectBackup(command.from, { backup: command.backup, schedule: command.schedule, allowIncomplete: command.allowIncomplete }, (message) => logger.warn(message));
    logger.info({ backup: backup.name.file, size: backup.size, sha256: backup.sha256 }, 'backup verified');
    await makeDirectories(command.targetDir, 0o700);
    if (backup.name.kind === 'volume-archive' && !command.overwrite) await refuseNonEmpty(command.targetDir);
  } catch (err) {
    return refused(logger, err);
  }
  const summary = { file: backup.name.file, time: new Date(backup.name.time).toISOString(), size: backup.size, sha256: backup.sha256 };
  const progress = new Progress({ logger, what: 'restore', ...(deps.clock ? { clock: deps.clock } : {}) });
  try {
    if (backup.name.kind === 'etcd-snapshot') {
      await restoreSnapshot(backup, command, progress);
      logger.info({ backup: summary, target: command.targetDir }, 'snapshot restored');
      return { exitCode: 0, message: `restored ${backup.name.file} into ${command.targetDir}`, backup: summary };
    }
    const stats = await extractArchive(backup.path, command.targetDir, progress);
    logger.info({ backup: summary, target: command.targetDir, ...stats }, 'archive restored');
    return { exitCode: 0, message: `restored ${backup.name.file} into ${command.targetDir}: ${stats.files} files, ${stats.bytes} bytes`, backup: summary, stats };
  } catch (err) {
    const message = err instanceof UnsafeEntryError ? err.message : describeIoError(`restore of ${backup.name.file} failed (the target may hold part of it)`, err);
    logger.error(message);
    return { exitCode: 1, message, backup: summary };
  } finally {
    progress.stop();
  }
}

function refused(logger: Logger, err: unknown): RestoreOutcome {
  const message = err instanceof RestoreRefusedError ? err.message : describeIoError('restore refused', err);
  logger.error(`${message} (nothing was written)`);
  return { exitCode: EXIT_REFUSED, message };
}

async function refuseNonEmpty(dir: string): Promise<void> {
  const names = (await readdir(dir)).filter((name) => !IGNORED_IN_EMPTY_TARGET.has(name));
  if (names.length > 0) throw new RestoreRefusedError(`--target-dir ${dir} is not empty (${names.length} entries, e.g. ${JSON.stringify(names[0])}): restore into an empty directory, or pass --overwrite (spec.target.overwrite: true)`);
}

/**
 * A restore from an object store: the target is checked first, then the backup is fetched and verified
 * into a hidden staging file in the target directory (the volume sized for it; removed whatever
 * happens), its paths checked like a local archive's, and only then restored.
 */
async function runObjectStoreRestore(command: RestoreCommand, source: ObjectStoreSource, deps: RestoreDeps): Promise<RestoreOutcome> {
  const { logger } = deps;
  let staged: StagedBackup;
  try {
    await makeDirectories(command.targetDir, 0o700);
    if (!command.overwrite) await refuseNonEmpty(command.targetDir);
    staged = await fetchFromObjectStore(source, { backup: command.backup, schedule: command.schedule, allowIncomplete: command.allowIncomplete }, command.targetDir, deps.env ?? process.env, (message) => logger.warn(message));
  } catch (err) {
    return refused(logger, err);
  }
  const summary = { file: staged.object, time: new Date(staged.time).toISOString(), size: staged.size, sha256: staged.sha256 };
  logger.info({ backup: staged.object, size: staged.size, sha256: staged.sha256 }, 'backup verified');
  const progress = new Progress({ logger, what: 'restore', ...(deps.clock ? { clock: deps.clock } : {}) });
  try {
    if (staged.kind === 'volume-archive') {
      try {
        await verifyArchive(staged.path, { sink: new EntryPlan(), gzip: false });
      } catch (err) {
        return refused(logger, err);
      }
      const stats = await extractArchive(staged.path, command.targetDir, progress, false);
      logger.info({ backup: summary, target: command.targetDir, ...stats }, 'archive restored');
      return { exitCode: 0, message: `restored ${staged.object} into ${command.targetDir}: ${stats.files} files, ${stats.bytes} bytes`, backup: summary, stats };
    }
    const final = join(command.targetDir, staged.fileName);
    if (command.overwrite) await unlink(final).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    // link, not rename: an existing file of that name is refused, never replaced.
    await link(staged.path, final).catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'EEXIST' ? new Error(`${final} already exists; refusing to replace it (spec.target.overwrite: true replaces it)`) : err;
    });
    await syncDirectory(command.targetDir);
    logger.info({ backup: summary, target: command.targetDir }, 'snapshot restored');
    return { exitCode: 0, message: `restored ${staged.object} into ${command.targetDir} as ${staged.fileName}`, backup: summary };
  } catch (err) {
    const message = err instanceof UnsafeEntryError ? err.message : describeIoError(`restore of ${staged.object} failed (the target may hold part of it)`, err);
    logger.error(message);
    return { exitCode: 1, message, backup: summary };
  } finally {
    progress.stop();
    await rm(staged.path, { force: true });
  }
}

/** Extracts `archive` (.tar.gz, or a plain tar) into `targetDir`; the entries' paths are checked again as they come. */
export async function extractArchive(archive: string, targetDir: string, progress?: Progress, compressed = true): Promise<ExtractStats> {
  const extractor = new Extractor({ targetDir, ...(progress ? { onBytes: (n: number) => progress.add(n) } : {}) });
  const reader = new TarReader(extractor);
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      try {
        reader.push(chunk);
      } catch (err) {
        done(err as Error);
        return;
      }
      extractor.drain().then(() => done(), done);
    },
  });
  // Large chunks: each one is a file write and a wait on the queue; 16 KiB ones cost 5x the CPU per byte.
  const read = createReadStream(archive, { highWaterMark: CHUNK });
  await (compressed ? pipeline(read, createGunzip({ chunkSize: CHUNK }), sink) : pipeline(read, sink));
  reader.finish();
  return extractor.finish();
}

/** Copies a verified snapshot into `targetDir` under its name, verifying the copy before naming it. */
async function restoreSnapshot(backup: VerifiedBackup, command: RestoreCommand, progress: Progress): Promise<void> {
  const temp = await TempFile.create(command.targetDir, `.${backup.name.file}.restore-`);
  try {
    await pipeline(createReadStream(backup.path), new Writable({
      write(chunk: Buffer, _enc, done) {
        progress.add(chunk.length);
        temp.handle.write(chunk).then(() => done(), done);
      },
    }));
    const copy = await verifySnapshot(temp.path);
    if (copy.sha256 !== backup.sha256) throw new Error(`the copy's SHA-256 ${copy.sha256} differs from the verified backup's ${backup.sha256}`);
    if (command.overwrite) {
      await unlink(`${command.targetDir}/${backup.name.file}`).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
    }
    await temp.commit(backup.name.file);
  } catch (err) {
    await temp.discard();
    throw err;
  }
}
