import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKUP_IMAGE, DEFAULT_IMAGE, OPERATOR_VERSION } from '../../src/pure/index.ts';

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
