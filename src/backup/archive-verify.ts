/**
 * Verifies a `.tar.gz` volume archive by reading it end to end: gzip's CRC-32 and length trailer catch
 * corruption and truncation, tar-stream's header checksums catch a damaged tar. One pass also computes
 * the file's SHA-256 for the sidecar.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract as tarExtract } from 'tar-stream';

/** What a verified archive holds. */
export interface ArchiveReport {
  readonly size: number;
  /** SHA-256 of the compressed file, hex. */
  readonly sha256: string;
  /** Tar entries (files, directories, symlinks). */
  readonly entries: number;
}

/** The file is not a complete, readable `.tar.gz`. */
export class ArchiveInvalidError extends Error {
  constructor(path: string, reason: string, options?: ErrorOptions) {
    super(`${path}: not a valid tar.gz archive: ${reason}`, options);
    this.name = 'ArchiveInvalidError';
  }
}

/** Options of {@link verifyArchive}. */
export interface VerifyArchiveOptions {
  /** Hears of every compressed chunk read (the runner's scavenger). @default none */
  readonly onBytes?: (bytes: number) => void;
}

/** Reads `path` through gunzip and a tar parser; rejects with {@link ArchiveInvalidError}. */
export async function verifyArchive(path: string, options: VerifyArchiveOptions = {}): Promise<ArchiveReport> {
  const { size } = await stat(path);
  const hash = createHash('sha256');
  let entries = 0;
  const extract = tarExtract();
  extract.on('entry', (_header, body, next) => {
    entries++;
    body.on('end', () => next());
    body.resume();
  });
  const hasher = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      options.onBytes?.(chunk.length);
      done(null, chunk);
    },
  });
  try {
    await pipeline(createReadStream(path), hasher, createGunzip(), extract as unknown as NodeJS.WritableStream);
  } catch (err) {
    throw new ArchiveInvalidError(path, (err as Error).message, { cause: err });
  }
  return { size, sha256: hash.digest('hex'), entries };
}
