import { describe, expect, it } from 'vitest';
import { imageAllowed, imageMatches, imagePatternProblem, suspendIfDisallowed } from '../../src/pure/image-policy.ts';

const OWN = 'ghcr.io/kubelings/backupschedule-operator:0.1.0';

describe('imageMatches', () => {
  it.each([
    ['ghcr.io/kubelings/backupschedule-operator:0.2.0', 'ghcr.io/kubelings/backupschedule-operator:*', true],
    ['ghcr.io/kubelings/backupschedule-operator@sha256:abc', 'ghcr.io/kubelings/backupschedule-operator@sha256:*', true],
    ['registry.example.com/backup/etcd/v3:1', 'registry.example.com/backup/*', true],
    ['registry.example.com.evil.io/backup/x', 'registry.example.com/backup/*', false],
    ['registry.example.com/backupx/x', 'registry.example.com/backup/*', false],
    ['busybox', 'busybox', true],
    ['docker.io/library/busybox', 'busybox', false],
    ['a.b+c(d)', 'a.b+c(d)', true],
    ['aXb+c(d)', 'a.b+c(d)', false],
  ])('%s against %s → %s', (image, pattern, expected) => {
    expect(imageMatches(image, pattern)).toBe(expected);
  });
});

describe('imageAllowed', () => {
  it('always allows the default image and nothing else without patterns', () => {
    expect(imageAllowed(OWN, OWN, [])).toBe(true);
    expect(imageAllowed('ghcr.io/kubelings/backupschedule-operator:0.2.0', OWN, [])).toBe(false);
    expect(imageAllowed('evil:1', OWN, ['registry.example.com/*'])).toBe(false);
    expect(imageAllowed('registry.example.com/x:1', OWN, ['other/*', 'registry.example.com/*'])).toBe(true);
  });
});

describe('imagePatternProblem', () => {
  it.each([
    ['', 'must not be empty'],
    ['a b', 'whitespace'],
    ['x'.repeat(513), 'longer than 512'],
  ])('rejects %j', (pattern, message) => {
    expect(imagePatternProblem(pattern)).toContain(message);
  });
  it('accepts patterns and exact references', () => {
    expect(imagePatternProblem('registry.example.com/backup/*')).toBeUndefined();
    expect(imagePatternProblem('*')).toBeUndefined();
  });
});

describe('suspendIfDisallowed', () => {
  const cronJob = (images: string[], suspend?: boolean) => ({
    spec: { ...(suspend === undefined ? {} : { suspend }), jobTemplate: { spec: { template: { spec: { initContainers: [{ image: images[0] }], containers: images.slice(1).map((image) => ({ image })) } } } } },
  });
  const allowed = (image: string) => image.startsWith('ok/');

  it('returns a suspended copy when any container or init container runs a disallowed image', () => {
    const input = cronJob(['ok/a', 'bad/b']);
    expect(suspendIfDisallowed(input, allowed)?.spec.suspend).toBe(true);
    expect(input.spec).not.toHaveProperty('suspend');
    expect(suspendIfDisallowed(cronJob(['bad/init', 'ok/b']), allowed)?.spec.suspend).toBe(true);
  });

  it('returns undefined when every image is allowed or the CronJob is already suspended', () => {
    expect(suspendIfDisallowed(cronJob(['ok/a', 'ok/b']), allowed)).toBeUndefined();
    expect(suspendIfDisallowed(cronJob(['bad/a'], true), allowed)).toBeUndefined();
  });
});
