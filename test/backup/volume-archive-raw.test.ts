/**
 * The archive writer's plain-tar output (`output: 'tar'`), what the bucket and encrypted-directory
 * pipelines compress themselves: no gzip framing, the same archive GNU tar reads, the same metadata
 * digest the strict reader recomputes.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { TarReader } from '../../src/backup/tar-reader.ts';
import { archiveDirectory } from '../../src/backup/volume-archive.ts';
import { silentLogger } from '../../src/runtime/logger.ts';
import { removeTempDirsAfterEach, tempDir } from './temp-dirs.ts';

removeTempDirsAfterEach();

async function collect(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe('archiveDirectory output', () => {
  it("'tar' streams the plain archive: the gzip output's content byte for byte, readable by GNU tar", async () => {
    const source = tempDir('raw-src-');
    mkdirSync(join(source, 'sub'));
    writeFileSync(join(source, 'a.txt'), 'hello\n');
    writeFileSync(join(source, 'sub', 'b.bin'), Buffer.alloc(100_000, 9));
    const raw = archiveDirectory({ sourceDir: source, logger: silentLogger, output: 'tar' });
    const tar = await collect(raw.stream);
    const result = await raw.result;
    // Not gzip (1f 8b): a ustar header block, whole 512-byte blocks.
    expect(tar.subarray(257, 262).toString()).toBe('ustar');
    expect(tar.length % 512).toBe(0);
    const gz = archiveDirectory({ sourceDir: source, logger: silentLogger });
    expect(gunzipSync(await collect(gz.stream)).equals(tar)).toBe(true);
    const reader = new TarReader();
    reader.push(tar);
    expect(reader.finish().metadataSha256).toBe(result.metadataSha256);
    const out = tempDir('raw-out-');
    writeFileSync(join(out, 'x.tar'), tar);
    expect(execFileSync('tar', ['-tf', join(out, 'x.tar')], { encoding: 'utf8' }).split('\n').filter(Boolean).sort()).toEqual(['a.txt', 'sub/', 'sub/b.bin']);
  });
});
