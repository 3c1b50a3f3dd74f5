/**
 * Checks a stream of tar bytes on its way through a pipeline with the runner's strict reader
 * (src/backup/tar-reader.ts, what `backup verify` uses on a file): every header checksum and numeric
 * field, pax records, sparse maps, entry lengths, the end of the archive; counts the entries and digests
 * their restored metadata, so the runner can compare it with what it read from the volume. Used on the
 * runner's own archive while it streams to a bucket or an encrypted file, and by `backup verify`/`fetch`
 * on what comes back.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { TarReader } from '../tar-reader.ts';

/** What a checked tar stream held. */
export interface TarCheckReport {
  readonly entries: number;
  /** SHA-256 of the entries' metadata lines (tar-header.ts `metadataLine`), as `verifyArchive` reports it. */
  readonly metadataSha256: string;
}

/** A pass-through Transform that parses the tar bytes flowing through it; `entries()`/`report()` once it ended. */
export function tarChecker(): { readonly stream: Transform; readonly entries: () => Promise<number>; readonly report: () => Promise<TarCheckReport>; readonly bytes: () => number } {
  const reader = new TarReader();
  let bytes = 0;
  let settle!: { resolve: (r: TarCheckReport) => void; reject: (e: Error) => void };
  const finished = new Promise<TarCheckReport>((resolve, reject) => (settle = { resolve, reject }));
  finished.catch(() => undefined);
  const fail = (err: unknown, done: TransformCallback): void => {
    const error = new Error(`not a valid tar archive: ${(err as Error).message}`, { cause: err });
    settle.reject(error);
    done(error);
  };
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      bytes += chunk.length;
      try {
        reader.push(chunk);
      } catch (err) {
        fail(err, done);
        return;
      }
      done(null, chunk);
    },
    flush(done: TransformCallback) {
      try {
        const { metadataSha256 } = reader.finish();
        settle.resolve({ entries: reader.entries, metadataSha256 });
        done();
      } catch (err) {
        fail(err, done);
      }
    },
  });
  return { stream, entries: () => finished.then((r) => r.entries), report: () => finished, bytes: () => bytes };
}
