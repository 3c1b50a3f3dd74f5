/**
 * Checks a stream of tar bytes the way `tar -t` would: every header checksum, every entry's length, and
 * the end of the archive; counts the entries. Used on the runner's own archive while it streams to the
 * bucket, and by `backup verify`/`fetch` on what comes back.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { extract as tarExtract } from 'tar-stream';

/** A pass-through Transform that parses the tar bytes flowing through it; `entries()` once it ended. */
export function tarChecker(): { readonly stream: Transform; readonly entries: () => Promise<number>; readonly bytes: () => number } {
  const extract = tarExtract();
  let count = 0;
  let bytes = 0;
  extract.on('entry', (_header, body, next) => {
    count++;
    body.on('end', () => next());
    body.resume();
  });
  const finished = new Promise<number>((resolve, reject) => {
    extract.on('finish', () => resolve(count));
    extract.on('error', reject);
  });
  finished.catch(() => undefined);
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      bytes += chunk.length;
      // The parser's backpressure is the pipeline's: wait until it took the chunk.
      if (extract.write(chunk)) done(null, chunk);
      else extract.once('drain', () => done(null, chunk));
    },
    flush(done: TransformCallback) {
      (extract as unknown as NodeJS.WritableStream).end();
      finished.then(() => done(), (err: unknown) => done(new Error(`not a valid tar archive: ${(err as Error).message}`)));
    },
  });
  return { stream, entries: () => finished, bytes: () => bytes };
}
