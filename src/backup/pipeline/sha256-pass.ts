/**
 * A pass-through stage that hashes what flows through it (SHA-256): the verify and fetch tools hash
 * the stored bytes in the same pass that decrypts, decompresses and checks them.
 */
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/** The stage and, once it has ended, the hex SHA-256 of everything that passed. */
export interface Sha256Pass {
  readonly stream: Transform;
  /** The digest so far; call once, after the stream ended. */
  readonly hex: () => string;
}

/** A fresh hashing pass-through; `onBytes` hears of every chunk (the runner's scavenger). */
export function sha256Pass(onBytes?: (bytes: number) => void): Sha256Pass {
  const hash = createHash('sha256');
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      hash.update(chunk);
      onBytes?.(chunk.length);
      done(null, chunk);
    },
  });
  return { stream, hex: () => hash.digest('hex') };
}
