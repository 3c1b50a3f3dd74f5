import { describe, expect, it } from 'vitest';
import { suspendedCopy } from '../../src/pure/child-suspend.ts';
import { endpointAllowed, endpointMatches, endpointPatternProblem, normalizeEndpoint } from '../../src/pure/endpoint-policy.ts';

describe('the object store endpoint allow-list', () => {
  it.each([
    ['HTTPS://MinIO.Storage:443/', 'https://minio.storage'],
    ['http://minio:80', 'http://minio'],
    ['https://minio:9000', 'https://minio:9000'],
    ['https://[FD00::5]:443', 'https://[fd00::5]'],
  ])('normalizes %s to %s', (endpoint, normal) => {
    expect(normalizeEndpoint(endpoint)).toBe(normal);
  });

  it('always allows AWS (no endpoint), and nothing else by default', () => {
    expect(endpointAllowed(undefined, [])).toBe(true);
    expect(endpointAllowed('https://s3.amazonaws.com', [])).toBe(false);
    expect(endpointAllowed('http://169.254.169.254', [])).toBe(false);
  });

  it.each([
    ['https://minio.storage:9000', 'https://minio.storage:9000', true],
    ['https://minio.storage:443', 'https://minio.storage', true],
    ['http://minio.storage', 'https://minio.storage', false],
    ['https://minio.storage:9001', 'https://minio.storage:9000', false],
    ['https://rgw-1.ceph.internal', 'https://*.ceph.internal', true],
    ['https://ceph.internal.evil.io', 'https://*.ceph.internal', false],
    ['https://minio.storage:9000', 'https://minio.storage:*', true],
    ['https://anything:1', '*', true],
  ])('%s against %s: %s', (endpoint, pattern, allowed) => {
    expect(endpointMatches(endpoint, pattern)).toBe(allowed);
  });

  it.each([
    ['*', undefined],
    ['https://minio.storage:9000', undefined],
    ['https://*.ceph.internal', undefined],
    ['minio:9000', 'endpoint pattern "minio:9000" is not an http(s)://host[:port] URL (or "*")'],
    ['https://user@minio', 'endpoint pattern "https://user@minio" is not an http(s)://host[:port] URL (or "*")'],
  ])('pattern %s: %s', (pattern, problem) => {
    expect(endpointPatternProblem(pattern)).toBe(problem);
  });

  it('suspends a copy of a running CronJob, and leaves a suspended one be', () => {
    const job = { spec: { suspend: false, schedule: '@daily' } };
    expect(suspendedCopy(job)).toEqual({ spec: { suspend: true, schedule: '@daily' } });
    expect(job.spec.suspend).toBe(false);
    expect(suspendedCopy({ spec: { suspend: true } })).toBeUndefined();
  });
});
