/**
 * `backup verify` of an encrypted backup file (`.age`). Without the identity only what the bytes prove:
 * their SHA-256 against the `.sha256` sidecar (the bytes the runner wrote and checked are the bytes on
 * disk). With `--identity` the same pass decrypts (age: header MAC, every chunk's tag, the final chunk),
 * decompresses and checks the content as the runner did before encrypting: an etcd snapshot's trailer,
 * bbolt meta pages and bucket walk (from a scratch file in TMPDIR, removed afterwards), or every tar header.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BackupName } from './backup-names.ts';
import { ageDecryptStream } from './pipeline/age-stream.ts';
import { decompressor } from './pipeline/compression.ts';
import { sha256Pass } from './pipeline/sha256-pass.ts';
import { tarChecker } from './pipeline/tar-check.ts';
import { verifySnapshot } from './snapshot-verify.ts';

/** What an encrypted file's check found; `content` says whether the plaintext was checked. */
export interface EncryptedCheck {
  readonly sha256: string;
  readonly content: 'checked' | 'not checked: encrypted, no --identity';
  /** Why the content is not valid (decryption, decompression or format), when it was checked. */
  readonly problem?: string;
  readonly revision?: number;
  readonly totalKeys?: number;
  readonly entries?: number;
}

/** Reads `path` once: its SHA-256 always; with `identities`, the decrypted content checked too. */
export async function checkEncryptedFile(path: string, name: BackupName, identities: readonly string[] | undefined): Promise<EncryptedCheck> {
  const hash = sha256Pass();
  const drain = (): Writable => new Writable({ write: (_c, _e, done) => done() });
  if (identities === undefined) {
    await pipeline(createReadStream(path), hash.stream, drain());
    return { sha256: hash.hex(), content: 'not checked: encrypted, no --identity' };
  }
  const scratch = name.kind === 'etcd-snapshot' ? await mkdtemp(join(tmpdir(), 'backup-verify-')) : undefined;
  try {
    const check = tarChecker();
    const plain = scratch === undefined ? [check.stream, drain()] : [createWriteStream(join(scratch, 'snapshot.db'), { mode: 0o600 })];
    try {
      await (pipeline as unknown as (...s: unknown[]) => Promise<void>)(createReadStream(path), hash.stream, ageDecryptStream(identities), decompressor(name.compression), ...plain);
    } catch (err) {
      // The hash of what was read so far is not the file's: read the rest for the sidecar comparison.
      const whole = createHash('sha256');
      for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) whole.update(chunk);
      return { sha256: whole.digest('hex'), content: 'checked', problem: (err as Error).message };
    }
    const sha256 = hash.hex();
    if (scratch === undefined) return { sha256, content: 'checked', entries: await check.entries() };
    try {
      const report = await verifySnapshot(join(scratch, 'snapshot.db'));
      return { sha256, content: 'checked', revision: report.revision, totalKeys: report.totalKeys };
    } catch (err) {
      return { sha256, content: 'checked', problem: (err as Error).message };
    }
  } finally {
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  }
}
