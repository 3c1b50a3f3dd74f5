/**
 * The Restore validator: a valid Restore of each source shape passes; each mistake is reported at the
 * field, in words; the CEL rules agree with a CEL interpreter and mirror the schema's one to one; an
 * update that changes the spec is refused (the transition rule), one that leaves it alone passes.
 */
import { evaluate } from '@marcbachmann/cel-js';
import { describe, expect, it } from 'vitest';
import { RESTORE_CEL_RULES, RESTORE_TRANSITION_RULES } from '../../src/api/restore-cel-rules.ts';
import { restoreSchema, SPEC_IMMUTABLE_MESSAGE } from '../../src/api/restore-schema.ts';
import type { SchemaNode } from '../../src/api/schema.ts';
import { validateRestore } from '../../src/api/validate.ts';
import type { Restore } from '../../imports/restore.ts';

const restore = (spec: Partial<Restore['spec']> = {}): Restore => ({
  apiVersion: 'kubelings.dev/v1',
  kind: 'Restore',
  metadata: { name: 'db-restore', namespace: 'prod' },
  spec: { from: { backupScheduleName: 'nightly' }, backup: 'latest', target: { persistentVolumeClaim: { claimName: 'db-data' } }, ...spec },
});

const messages = (obj: unknown, old?: unknown): string[] => validateRestore(obj, old).map((e) => e.message);

describe('validateRestore', () => {
  it('accepts each source shape', () => {
    expect(messages(restore())).toEqual([]);
    expect(messages(restore({ from: { persistentVolumeClaim: { claimName: 'backups', path: 'db' } }, backup: 'db-20261130T020007Z.tar.gz' }))).toEqual([]);
    expect(messages(restore({ from: { objectStore: { bucket: 'bkt', credentialsSecretName: 's3', endpoint: 'https://minio:9000' } }, backup: 'etcd-20261130T020007Z.db.zst.age', decryption: { identitySecretName: 'age-key' } }))).toEqual([]);
  });

  it.each([
    ['no source', { from: {} }, 'spec.from: exactly one of backupScheduleName, persistentVolumeClaim, objectStore must be set'],
    ['two sources', { from: { backupScheduleName: 'a', persistentVolumeClaim: { claimName: 'b' } } }, 'spec.from: exactly one of backupScheduleName, persistentVolumeClaim, objectStore must be set'],
    ['a bad backup name', { backup: '../etc/passwd' }, 'spec.backup: must be latest or a backup\'s file or object name'],
    ['a target path with ..', { target: { persistentVolumeClaim: { claimName: 'x', path: 'a/../..' } } }, 'spec.target.persistentVolumeClaim.path: path must not contain ".." segments'],
    ['a plain http endpoint', { from: { objectStore: { bucket: 'bkt', credentialsSecretName: 's', endpoint: 'http://minio:9000' } } }, 'spec.from.objectStore.endpoint: endpoint must use https:// unless allowHttp is true'],
    ['root', { podSecurityContext: { runAsUser: 0 } }, 'spec.podSecurityContext.runAsUser: must be >= 1'],
    ['an unknown field', { overwrite: true } as Partial<Restore['spec']>, 'spec.overwrite: is not a known field'],
  ])('reports %s at the field', (_what, spec, expected) => {
    expect(messages(restore(spec as Partial<Restore['spec']>)).join('\n')).toContain(expected);
  });

  it('reports a missing target and the wrong kind', () => {
    const { target: _t, ...spec } = restore().spec;
    expect(messages({ ...restore(), kind: 'BackupSchedule', spec })).toEqual(expect.arrayContaining(['spec.target: is required', 'kind: must be "Restore", got "BackupSchedule"']));
  });

  it('refuses an update that changes the spec, allows one that does not', () => {
    const old = restore();
    expect(messages(restore({ backup: 'nightly-20261130T020007Z.tar.gz' }), old)).toEqual([`spec: ${SPEC_IMMUTABLE_MESSAGE}`]);
    expect(messages({ ...restore(), metadata: { name: 'db-restore', labels: { a: 'b' } } }, old)).toEqual([]);
  });
});

interface FoundRule { path: string[]; rule: string; message: string }
function schemaRules(node: SchemaNode, path: string[] = []): FoundRule[] {
  const own = ((node['x-kubernetes-validations'] as FoundRule[] | undefined) ?? []).map(({ rule, message }) => ({ path, rule, message }));
  const properties = (node['properties'] as Record<string, SchemaNode> | undefined) ?? {};
  return [...own, ...Object.entries(properties).flatMap(([name, child]) => schemaRules(child, [...path, name]))];
}

describe('the Restore CEL rules re-implemented in TypeScript', () => {
  it('mirror the schema one to one (the transition rule first)', () => {
    const mirrored = [...RESTORE_TRANSITION_RULES, ...RESTORE_CEL_RULES].map(({ path, rule, message }) => ({ path: [...path], rule, message }));
    expect(mirrored).toEqual(schemaRules(restoreSchema));
  });

  const froms = [{}, { backupScheduleName: 'a' }, { persistentVolumeClaim: { claimName: 'b' } }, { backupScheduleName: 'a', objectStore: { bucket: 'b', credentialsSecretName: 's' } }, { backupScheduleName: 'a', persistentVolumeClaim: { claimName: 'b' }, objectStore: { bucket: 'b', credentialsSecretName: 's' } }];
  it('agree with a CEL interpreter on spec.from', () => {
    const rule = RESTORE_CEL_RULES[0]!;
    for (const self of froms) expect(rule.check(self), JSON.stringify(self)).toBe(evaluate(rule.rule, { self }));
  });

  it('agree with a CEL interpreter on the immutability rule', () => {
    const rule = RESTORE_TRANSITION_RULES[0]!;
    const specs = [restore().spec, restore({ backup: 'a-20261130T020007Z.db' }).spec, restore({ target: { persistentVolumeClaim: { claimName: 'db-data' }, overwrite: true } }).spec];
    for (const self of specs) for (const oldSelf of specs) expect(rule.check(self, oldSelf)).toBe(evaluate(rule.rule, { self, oldSelf }));
  });
});
