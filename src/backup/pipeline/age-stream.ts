/**
 * age (https://age-encryption.org/v1) encryption and decryption as Node streams, readable by the stock
 * `age` CLI (`age -d -i key.txt`) and written by it.
 *
 * Split of work, and why: the header — the random file key wrapped for each recipient (X25519 or the
 * post-quantum hybrid), its HKDF-derived MAC — comes from `age-encryption`, the reference TypeScript
 * implementation; nothing of that is written here. The payload is age's STREAM (ChaCha20-Poly1305 over
 * 64 KiB chunks, a big-endian chunk counter in the nonce, last-chunk flag) keyed with
 * HKDF-SHA256(file key, 16-byte nonce, "payload"). `age-encryption` runs that cipher in JavaScript:
 * 117 MB/s with V8's optimizing compilers and 5 MB/s under the runner's `--no-opt --no-maglev`
 * (src/backup/v8-flags.ts), slower than the upload; OpenSSL's ChaCha20-Poly1305 in node:crypto runs at
 * 1.4-1.6 GB/s on the same machine. So the payload goes through node:crypto, with the file key the
 * reference implementation generated (handed over through its documented `Recipient` interface) and the
 * file key it unwrapped (`Decrypter.decryptHeader`). The tests decrypt with the `age` CLI and with
 * `age-encryption` itself.
 */
import { createCipheriv, createDecipheriv, hkdfSync } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { Decrypter, Encrypter, type Recipient, type Stanza } from 'age-encryption';

import { AGE_CHUNK, AGE_MAGIC, AGE_NONCE as NONCE, AGE_TAG as TAG } from './age-format.ts';

export { AGE_CHUNK, AGE_MAGIC } from './age-format.ts';
const MAGIC = AGE_MAGIC.toString();
/** A header larger than this is refused (a few hundred bytes per recipient). */
const MAX_HEADER = 1 << 20;

/** The payload key of a file key and the payload nonce (age's HKDF step). */
function payloadKey(fileKey: Uint8Array, nonce: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', fileKey, nonce, 'payload', 32));
}

/** STREAM nonce of chunk `counter`: 11-byte big-endian counter, then the last-chunk flag. */
function chunkNonce(counter: number, last: boolean): Buffer {
  const nonce = Buffer.alloc(12);
  nonce.writeUIntBE(counter, 5, 6);
  nonce[11] = last ? 1 : 0;
  return nonce;
}

/**
 * The header and payload nonce of a new age file for `recipients` (`age1…` strings), and the file key
 * they wrap: the reference implementation encrypts an empty file; its output is the header, the
 * 16-byte nonce and one empty final chunk (its 16-byte tag), which is dropped.
 * @throws Error naming the recipient that is not an age recipient.
 */
export async function newAgeHeader(recipients: readonly string[]): Promise<{ readonly prefix: Buffer; readonly key: Buffer }> {
  const encrypter = new Encrypter();
  for (const r of recipients) {
    try {
      encrypter.addRecipient(r);
    } catch (err) {
      throw new Error(`--age-recipient: ${JSON.stringify(r)} is not an age recipient (${(err as Error).message})`, { cause: err });
    }
  }
  let fileKey: Uint8Array | undefined;
  // Adds no stanza: only hears the file key the encrypter drew for the recipients above.
  const capture: Recipient = { wrapFileKey: (key: Uint8Array): Stanza[] => ((fileKey = key), []) };
  encrypter.addRecipient(capture);
  const empty = Buffer.from(await encrypter.encrypt(new Uint8Array(0)));
  if (fileKey === undefined || !empty.subarray(0, MAGIC.length).equals(Buffer.from(MAGIC)) || empty.length < MAGIC.length + NONCE + TAG) {
    throw new Error('age: unexpected output of age-encryption');
  }
  const prefix = empty.subarray(0, empty.length - TAG);
  return { prefix, key: payloadKey(fileKey, prefix.subarray(prefix.length - NONCE)) };
}

/**
 * A Transform that age-encrypts its input with `header` (from {@link newAgeHeader}). Full 64 KiB chunks
 * of the input are sealed in place (no copy); only a chunk split across inputs is gathered first. The
 * last chunk (possibly empty) is sealed at the end with the last-chunk flag, so a full chunk is sealed
 * only once more input shows it is not the last.
 */
export function ageEncryptStream(header: { readonly prefix: Buffer; readonly key: Buffer }): Transform {
  let counter = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let headerSent = false;
  const seal = (plain: Buffer, last: boolean, out: Buffer[]): void => {
    const cipher = createCipheriv('chacha20-poly1305', header.key, chunkNonce(counter++, last), { authTagLength: TAG });
    out.push(cipher.update(plain), cipher.final(), cipher.getAuthTag());
  };
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      const out: Buffer[] = [];
      if (!headerSent) {
        headerSent = true;
        out.push(header.prefix);
      }
      let offset = 0;
      while (offset < chunk.length) {
        if (pendingBytes === AGE_CHUNK) {
          // More input follows: the gathered chunk is not the last.
          seal(pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes), false, out);
          pending = [];
          pendingBytes = 0;
        }
        if (pendingBytes === 0 && chunk.length - offset > AGE_CHUNK) {
          seal(chunk.subarray(offset, offset + AGE_CHUNK), false, out);
          offset += AGE_CHUNK;
          continue;
        }
        const take = Math.min(AGE_CHUNK - pendingBytes, chunk.length - offset);
        pending.push(chunk.subarray(offset, offset + take));
        pendingBytes += take;
        offset += take;
      }
      if (out.length > 0) this.push(out.length === 1 ? out[0] : Buffer.concat(out));
      done();
    },
    flush(done: TransformCallback) {
      const out: Buffer[] = headerSent ? [] : [header.prefix];
      seal(Buffer.concat(pending, pendingBytes), true, out);
      this.push(Buffer.concat(out));
      done();
    },
  });
}

/** The ciphertext is not an age file for these identities, or it was damaged. */
export class AgeDecryptError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(`age: ${message}`, options);
    this.name = 'AgeDecryptError';
  }
}

/**
 * A Transform that decrypts an age file with `identities` (`AGE-SECRET-KEY-1…` lines): the header is
 * checked by `age-encryption` (recipient match, header MAC), each chunk's Poly1305 tag here; a
 * truncated or reordered stream fails (no final chunk, or a chunk under the wrong counter).
 */
export function ageDecryptStream(identities: readonly string[]): Transform {
  const decrypter = new Decrypter();
  for (const identity of identities) decrypter.addIdentity(identity);
  let head: Buffer | undefined = Buffer.alloc(0);
  let key: Buffer | undefined;
  let held: Buffer = Buffer.alloc(0);
  let counter = 0;
  const open = (sealed: Buffer, last: boolean): Buffer => {
    if (sealed.length < TAG) throw new AgeDecryptError('truncated: the last chunk is shorter than its tag');
    const decipher = createDecipheriv('chacha20-poly1305', key!, chunkNonce(counter++, last), { authTagLength: TAG });
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG));
    try {
      return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG)), decipher.final()]);
    } catch (err) {
      throw new AgeDecryptError(`chunk ${counter - 1} failed authentication: the file is damaged, truncated or not this file's`, { cause: err });
    }
  };
  const SEALED = AGE_CHUNK + TAG;
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      void (async () => {
        let data = chunk;
        if (key === undefined) {
          head = Buffer.concat([head!, chunk]);
          const macLine = head.indexOf('\n---');
          const end = macLine < 0 ? -1 : head.indexOf('\n', macLine + 1);
          if (end < 0 || head.length < end + 1 + NONCE) {
            if (head.length > MAX_HEADER) throw new AgeDecryptError('no age header in the first MiB');
            return;
          }
          if (!head.subarray(0, MAGIC.length).equals(Buffer.from(MAGIC))) throw new AgeDecryptError('not an age file (no "age-encryption.org/v1" header)');
          let fileKey: Uint8Array;
          try {
            fileKey = await decrypter.decryptHeader(head.subarray(0, end + 1));
          } catch (err) {
            throw new AgeDecryptError(`${(err as Error).message} (wrong --identity?)`, { cause: err });
          }
          key = payloadKey(fileKey, head.subarray(end + 1, end + 1 + NONCE));
          data = head.subarray(end + 1 + NONCE);
          head = undefined;
        }
        held = held.length === 0 ? data : Buffer.concat([held, data]);
        const out: Buffer[] = [];
        let offset = 0;
        // A full sealed chunk is only known not to be the last once more bytes follow it.
        while (held.length - offset > SEALED) {
          out.push(open(held.subarray(offset, offset + SEALED), false));
          offset += SEALED;
        }
        held = held.subarray(offset);
        if (out.length > 0) this.push(Buffer.concat(out));
      })().then(() => done(), (err: unknown) => done(err as Error));
    },
    flush(done: TransformCallback) {
      try {
        if (key === undefined) throw new AgeDecryptError('truncated: the file ends inside its header');
        const plain = open(held, true);
        if (plain.length === 0 && counter > 1) throw new AgeDecryptError('the final chunk is empty after a full one (not a valid age file)');
        this.push(plain);
        done();
      } catch (err) {
        done(err as Error);
      }
    },
  });
}
