/**
 * Backups that pass retention's cheap checks (src/backup/retention-candidates.ts) without a real etcd or
 * a real run: a bbolt file with valid meta pages plus etcd's trailer, a minimal tar.gz, each with its
 * `.sha256` sidecar. Tests that need older backups for the runner to prune write these.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { SIDECAR_SUFFIX } from '../../src/backup/backup-names.ts';
import { formatSidecar } from '../../src/backup/sidecar.ts';

/** FNV-1a 64, bbolt's meta checksum. */
function fnv64a(bytes: Uint8Array): bigint {
  let hash = 0xcbf29ce484222325n;
  for (const byte of bytes) hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * 0x100000001b3n);
  return hash;
}

/** A bbolt file of `pages` 4 KiB pages whose two meta pages are valid (count `metaPages`), plus etcd's 32-byte trailer. */
export function snapshotBytes(pages = 4, metaPages = pages): Buffer {
  const pageSize = 4096;
  const db = Buffer.alloc(pages * pageSize);
  for (const [index, txid] of [[0, 2n], [1, 1n]] as const) {
    const at = index * pageSize;
    db.writeBigUInt64LE(BigInt(index), at);
    db.writeUInt16LE(0x04, at + 8);
    const body = at + 16;
    db.writeUInt32LE(0xed0cdaed, body);
    db.writeUInt32LE(2, body + 4);
    db.writeUInt32LE(pageSize, body + 8);
    db.writeBigUInt64LE(3n, body + 16);
    db.writeBigUInt64LE(2n, body + 32);
    db.writeBigUInt64LE(BigInt(metaPages), body + 40);
    db.writeBigUInt64LE(txid, body + 48);
    db.writeBigUInt64LE(fnv64a(db.subarray(body, body + 56)), body + 56);
  }
  return Buffer.concat([db, createHash('sha256').update(db).digest()]);
}

/** A tar.gz of one 3-byte file `a.txt` (a ustar header, one data block, 1024 zero bytes of end), which `backup verify` reads too. */
export function archiveBytes(): Buffer {
  const tar = Buffer.alloc(2048);
  const field = (offset: number, text: string): void => void tar.write(text, offset, 'latin1');
  field(0, 'a.txt');
  field(100, '0000644\0');
  field(108, '0000000\0');
  field(116, '0000000\0');
  field(124, '00000000003\0');
  field(136, '15000000000\0');
  field(148, '        ');
  field(156, '0');
  field(257, 'ustar\0');
  field(263, '00');
  let sum = 0;
  for (const byte of tar.subarray(0, 512)) sum += byte;
  field(148, `${sum.toString(8).padStart(6, '0')}\0 `);
  field(512, 'abc');
  return gzipSync(tar);
}

/** Writes `bytes` as `file` in `dir` with a sidecar that matches (or `sidecar: false` for none). */
export function putVerified(dir: string, file: string, bytes: Buffer, sidecar = true): void {
  writeFileSync(join(dir, file), bytes);
  if (sidecar) writeFileSync(join(dir, file + SIDECAR_SUFFIX), formatSidecar(createHash('sha256').update(bytes).digest('hex'), file));
}

