/**
 * Verifies a `.tar.gz` volume archive by reading it end to end: gzip's CRC-32 and length trailer catch
 * corruption and truncation, the strict tar reader (tar-reader.ts) catches a damaged tar and metadata
 * that would not extract as written (an overflowed mtime/uid/size field, a bad pax record or sparse
 * map). The runner also hands in the digest of the metadata it read from the volume, so an archive
 * whose headers decode to anything else fails. One pass also computes the file's SHA-256.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { TarReader, type TarSink } from './tar-reader.ts';

/** What a verified archive holds. */
export interface ArchiveReport {
  readonly size: number;
  /** SHA-256 of the compressed file, hex. */
  readonly sha256: string;
  /** Tar entries (files, hard links, directories, symlinks). */
  readonly entries: number;
  /** SHA-256 of the entries' restored metadata (tar-header.ts `metadataLine`), hex. */
  readonly metadataSha256: string;
}

/** The file is not a complete, readable `.tar.gz`, or its metadata would not round-trip. */
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
  /** The writer's `metadataSha256`: the headers must decode to exactly that metadata. @default not checked */
  readonly expectedMetadataSha256?: string;
  /** Hears of every entry (a restore checks each path before it writes anything). @default none */
  readonly sink?: TarSink;
  /** The file is gzip-compressed (a `.tar.gz`); false for a plain tar (what an object store fetch leaves). @default true */
  readonly gzip?: boolean;
}

/** Reads `path` through gunzip (unless `gzip: false`) and the tar reader; rejects with {@link ArchiveInvalidError}. */
export async function verifyArchive(path: string, options: VerifyArchiveOptions = {}): Promise<ArchiveReport> {
  const { size } = await stat(path);
  const hash = createHash('sha256');
  const reader = new TarReader(options.sink);
  const hasher = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      options.onBytes?.(chunk.length);
      done(null, chunk);
    },
  });
  const tar = new Writable({
    write(chunk: Buffer, _enc, done) {
      try {
        reader.push(chunk);
        done();
      } catch (err) {
        done(err as Error);
      }
    },
  });
  let metadataSha256: string;
  try {
    await (options.gzip === false ? pipeline(createReadStream(path), hasher, tar) : pipeline(createReadStream(path), hasher, createGunzip(), tar));
    metadataSha256 = reader.finish().metadataSha256;
  } catch (err) {
    throw new ArchiveInvalidError(path, (err as Error).message, { cause: err });
  }
  if (options.expectedMetadataSha256 !== undefined && options.expectedMetadataSha256 !== metadataSha256) {
    throw new ArchiveInvalidError(path, 'its headers decode to other metadata (names, modes, owners, mtimes, sizes, links or sparse maps) than was read from the volume');
  }
  return { size, sha256: hash.digest('hex'), entries: reader.entries, metadataSha256 };
}
