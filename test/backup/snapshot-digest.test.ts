import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SnapshotDigest } from '../../src/backup/snapshot-verify.ts';

/** etcd's layout: the database, then SHA-256 of it. */
function snapshot(db: Buffer): Buffer {
  return Buffer.concat([db, createHash('sha256').update(db).digest()]);
}

function digestInPieces(bytes: Buffer, cuts: number[]): ReturnType<SnapshotDigest['digest']> {
  const digest = new SnapshotDigest();
  let at = 0;
  for (const cut of [...cuts.map((c) => c % (bytes.length + 1))].sort((a, b) => a - b).concat(bytes.length)) {
    digest.update(bytes.subarray(at, Math.max(at, cut)));
    at = Math.max(at, cut);
  }
  return digest.digest();
}

describe('SnapshotDigest', () => {
  it('gives the whole file\'s SHA-256 and checks etcd\'s trailer however the stream is cut', () => {
    const file = snapshot(randomBytes(4096 + 480));
    const whole = createHash('sha256').update(file).digest('hex');
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 20 }), (cuts) => {
        expect(digestInPieces(file, cuts)).toEqual({ size: file.length, sha256: whole, trailerMatches: true });
      }),
    );
  });

  it('reports a trailer mismatch for a flipped byte or a missing trailer', () => {
    const file = snapshot(randomBytes(1024));
    const flipped = Buffer.from(file);
    flipped[100] = flipped[100]! ^ 1;
    expect(digestInPieces(flipped, [7, 500]).trailerMatches).toBe(false);
    expect(digestInPieces(file.subarray(0, file.length - 32), [300]).trailerMatches).toBe(false);
    expect(digestInPieces(Buffer.alloc(10), []).trailerMatches).toBe(false);
  });
});
