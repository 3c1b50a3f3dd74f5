import { describe, expect, it } from 'vitest';
import { needsReconcile } from '../../src/controller/backupschedule/controller.ts';
import { checkServerVersion } from '../../src/controller/operator.ts';
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import type { KubeObject } from '../../src/kube/object.ts';

const base: KubeObject = { metadata: { name: 'n', namespace: 'ns', uid: 'u', generation: 1, resourceVersion: '1' }, status: { a: 1 } };

describe('needsReconcile', () => {
  it.each<[string, KubeObject, boolean]>([
    // Left to OwnStatusWrites: reconciled unless it is the controller's own status write coming back.
    ['a status-only update', { ...base, metadata: { ...base.metadata, resourceVersion: '2' }, status: { a: 2 } }, false],
    ['a label change', { ...base, metadata: { ...base.metadata, resourceVersion: '2', labels: { x: 'y' } } }, false],
    ['a spec change (new generation)', { ...base, metadata: { ...base.metadata, generation: 2 } }, true],
    ['a recreated object (new uid)', { ...base, metadata: { ...base.metadata, uid: 'v' } }, true],
    ['the start of a deletion', { ...base, metadata: { ...base.metadata, deletionTimestamp: '2026-11-30T00:00:00Z' } }, true],
  ])('says whether %s is reconciled whoever made it: %s', (_name, updated, expected) => {
    expect(needsReconcile(base, updated)).toBe(expected);
  });

  it('passes resyncs, which deliver the same object twice', () => {
    expect(needsReconcile(base, base)).toBe(true);
  });
});

describe('checkServerVersion', () => {
  function logger() {
    const lines: { level: 'info' | 'warn'; fields: object; msg: string }[] = [];
    return { lines, info: (fields: object, msg: string) => void lines.push({ level: 'info', fields, msg }), warn: (fields: object, msg: string) => void lines.push({ level: 'warn', fields, msg }) };
  }
  const answering = (answer: unknown) => ({ request: async <T>(method: string, path: string) => { expect([method, path]).toEqual(['GET', '/version']); return answer as T; } });

  it('warns, one line per feature, about what a 1.24 cluster lacks (CronJob time zones among them)', async () => {
    const log = logger();
    const version = await checkServerVersion(answering({ major: '1', minor: '24+', gitVersion: 'v1.24.17-eks-1' }), log);
    expect(version).toEqual({ major: 1, minor: 24, gitVersion: 'v1.24.17-eks-1' });
    const warnings = log.lines.filter((l) => l.level === 'warn').map((l) => l.msg);
    expect(warnings).toHaveLength(4);
    expect(warnings[0]).toContain('the cluster lacks CronJob spec.timeZone');
    expect(warnings[0]).toContain('ChildNotPersisted');
    expect(warnings[2]).toContain('the cluster lacks Job podFailurePolicy');
  });

  it('warns about nothing on a current cluster', async () => {
    const log = logger();
    await checkServerVersion(answering({ major: '1', minor: '32', gitVersion: 'v1.32.0' }), log);
    expect(log.lines.filter((l) => l.level === 'warn')).toEqual([]);
    expect(log.lines).toEqual([expect.objectContaining({ level: 'info', msg: 'API server version' })]);
  });

  it('never fails start-up: an unreadable version is a warning and unknown', async () => {
    const log = logger();
    const failing = { request: async () => { throw new ApiStatusError(statusErrors.forbidden('x', 'get', { group: '', resource: '' }, undefined)); } };
    await expect(checkServerVersion(failing, log)).resolves.toBeUndefined();
    expect(log.lines).toEqual([expect.objectContaining({ level: 'warn', msg: expect.stringContaining('cannot read the API server version') })]);
  });
});
