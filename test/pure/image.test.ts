import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { AnyBackupSchedule } from '../../src/api/index.ts';
import { buildCronJob, DEFAULT_BACKUP_IMAGE, DEFAULT_IMAGE, OPERATOR_VERSION } from '../../src/pure/index.ts';

describe('the release and its images', () => {
  it("tags the operator's image with the package version", () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(OPERATOR_VERSION).toBe(pkg.version);
    expect(DEFAULT_IMAGE).toBe(`ghcr.io/kubelings/backupschedule-operator:${pkg.version}`);
  });

  it('runs backups with the same image repository, at a release no newer than this one', () => {
    const [repository, tag] = DEFAULT_BACKUP_IMAGE.split(':') as [string, string];
    expect(repository).toBe(DEFAULT_IMAGE.split(':')[0]);
    const order = (v: string): number => v.split('.').reduce((n, part) => n * 1000 + Number(part), 0);
    expect(order(tag)).toBeLessThanOrEqual(order(OPERATOR_VERSION));
  });
});

/**
 * The recorded releases (test/fixtures/release-*: the bundle their image runs, the `backup` runner
 * included). The default backup image may name one of them only while its runner still takes what
 * this release's children run; each case below is something this release emits.
 */
const RECORDED = ['0.1.0', '0.2.0'].map((version) => ({
  version,
  image: `ghcr.io/kubelings/backupschedule-operator:${version}`,
  bundle: fileURLToPath(new URL(`../fixtures/release-${version}/controller/controller.mjs`, import.meta.url)),
}));

const objectStoreEncrypted = parse(readFileSync(new URL('../golden/inputs/22-v1-object-store-encrypted.yaml', import.meta.url), 'utf8')) as AnyBackupSchedule;
/** What an object store, encrypted schedule's Job runs: `backup --destination-url=… --age-recipient=…`. */
const objectStoreArgs = (buildCronJob(objectStoreEncrypted).spec?.jobTemplate.spec?.template.spec?.containers[0]?.args ?? []) as string[];

/** Runs a release's bundle with `args` and returns what it printed when it refused them (usage errors exit at once). */
function refusal(bundle: string, args: readonly string[]): string {
  const run = spawnSync(process.execPath, [bundle, ...args], { encoding: 'utf8', timeout: 15_000, env: { PATH: process.env['PATH'] ?? '' } });
  return run.status === 2 || run.status === 1 ? `${run.stderr}` : '';
}

describe("the default backup image's runner takes what this release's Jobs run", () => {
  it.each(RECORDED)('release $version refuses an object store, encrypted backup and has no restore, so it is not the default', ({ image, bundle }) => {
    expect(objectStoreArgs).toEqual(expect.arrayContaining([expect.stringMatching(/^--destination-url=/), expect.stringMatching(/^--age-recipient=/)]));
    expect(refusal(bundle, objectStoreArgs)).toMatch(/Unknown option '--destination-url'/);
    expect(refusal(bundle, ['restore'])).toMatch(/unexpected argument "restore"/);
    expect(DEFAULT_BACKUP_IMAGE).not.toBe(image);
  });
});
