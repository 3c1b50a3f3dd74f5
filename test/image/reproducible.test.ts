/**
 * Two builds of one commit give the same manifest digest: the run's shared image, built in the
 * checkout, and a build of the same files copied to another folder, later, with another umask, time
 * zone and file times, run as `npm run image` there. The copy has no .git: the commit and its time are
 * given as flags, as the Dockerfile gives them. Its node_modules is the checkout's, bind-mounted in a
 * private mount namespace (a symlink would put other paths into the bundle's module comments).
 */
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildStamp } from '../../scripts/image/build-image.ts';
import { blobPath } from '../../scripts/image/oci-layout.ts';
import { sharedImage, type SharedImage } from './shared-image.ts';

const sh = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let image: SharedImage;
let copy: string;

beforeAll(async () => {
  image = await sharedImage();
  copy = mkdtempSync(join(process.env['BKS_TEST_TMP'] ?? '/tmp', 'bks-other-checkout-'));
}, 15 * 60_000);

afterAll(() => {
  if (copy) rmSync(copy, { recursive: true, force: true });
});

describe('the image build', () => {
  it('gives the same manifest digest for the same commit in another folder, at another time, under another umask and time zone', async () => {
    const files = execFileSync('git', ['-C', ROOT, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8' }).split('\0').filter((f) => f !== '');
    const yesterday = new Date(Date.now() - 86_400_000);
    for (const file of files) {
      const target = join(copy, file);
      mkdirSync(dirname(target), { recursive: true });
      try {
        copyFileSync(join(ROOT, file), target);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // deleted in the working tree
        throw err;
      }
      // As a checkout under umask 077 would have them, a day older.
      chmodSync(target, 0o600);
      utimesSync(target, yesterday, yesterday);
    }
    mkdirSync(join(copy, 'node_modules'));
    const { revision, sourceDateEpoch } = buildStamp({});
    const output = join(copy, 'out');
    const script = 'umask 077 && mount --bind "$MODULES" node_modules && exec npm run image -- --output "$OUTPUT" --revision "$REVISION" --source-date-epoch "$EPOCH"';
    const { stdout } = await sh('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script], {
      cwd: copy,
      env: { ...process.env, MODULES: join(ROOT, 'node_modules'), OUTPUT: output, REVISION: revision, EPOCH: String(sourceDateEpoch), TZ: 'Pacific/Chatham', SOURCE_DATE_EPOCH: '' },
      timeout: 600_000,
      maxBuffer: 16 << 20,
    });
    expect(stdout).toContain(image.manifestDigest);
    const index = JSON.parse(readFileSync(join(output, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
    expect(index.manifests[0]!.digest).toBe(image.manifestDigest);
    const manifest = JSON.parse(readFileSync(blobPath(output, image.manifestDigest), 'utf8')) as { config: { digest: string } };
    const config = JSON.parse(readFileSync(blobPath(output, manifest.config.digest), 'utf8')) as { created: string; config: { Labels: Record<string, string> } };
    expect(config.created).toBe(new Date(sourceDateEpoch * 1000).toISOString().replace('.000Z', 'Z'));
    expect(config.config.Labels['org.opencontainers.image.revision']).toBe(revision);
  }, 600_000);
});
