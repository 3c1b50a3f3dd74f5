/**
 * v1's object store destination and encryption: the validator and the CRD (through the test API
 * server's schema machinery: defaulting, structural validation, CEL) agree on what they accept and
 * name the same field.
 */
import { describe, expect, it } from 'vitest';
import { backupScheduleV1Schema, toCrdOpenApiSchema, validateBackupSchedule, validateBackupScheduleV1 } from '../../src/api/index.ts';
import { defaultCustomResource, validateCustomResource, type JSONSchemaProps } from '../apiserver/schema/index.ts';

const crd = toCrdOpenApiSchema(backupScheduleV1Schema) as JSONSchemaProps;
const RECIPIENT = 'age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p';

type Obj = Record<string, any>;
const toBucket = (objectStore: Obj = {}, extra: Obj = {}): Obj => ({
  apiVersion: 'kubelings.dev/v1',
  kind: 'BackupSchedule',
  metadata: { name: 'offsite', namespace: 'team-a' },
  spec: {
    schedule: '@daily',
    source: { type: 'Etcd', etcd: { endpoints: ['https://etcd-0.etcd:2379'] } },
    destination: { type: 'ObjectStore', objectStore: { bucket: 'acme-backups', credentialsSecretName: 's3-credentials', ...objectStore } },
    ...extra,
  },
});

/** The API server's answer: defaults applied, then the schema and CEL; the causes' fields, dotted. */
function apiServerFields(object: Obj): string[] {
  const copy = structuredClone(object);
  defaultCustomResource(crd, copy);
  return validateCustomResource(crd, copy).map((c) => c.field ?? '');
}

describe('an ObjectStore destination', () => {
  it.each([
    ['AWS, bucket only', {}],
    ['a prefix, region and path style', { prefix: 'prod/etcd-1', region: 'eu-central-1', forcePathStyle: true }],
    ['a private endpoint and CA', { endpoint: 'https://10.0.0.5:9000', caSecretName: 'private-ca' }],
    ['an IPv6 endpoint', { endpoint: 'https://[fd00::5]:9000' }],
    ['plain http with the opt-in', { endpoint: 'http://minio.storage:9000', allowHttp: true }],
    ['dots in the bucket', { bucket: 'backups.example.com' }],
  ])('is valid with %s, for the validator and the API server', (_name, store) => {
    expect(validateBackupScheduleV1(toBucket(store))).toEqual([]);
    expect(apiServerFields(toBucket(store))).toEqual([]);
  });

  it.each<[string, Obj, string, RegExp]>([
    ['an upper-case bucket', { bucket: 'Backups' }, 'spec.destination.objectStore.bucket', /must be an S3 bucket name: .*got "Backups"/],
    ['a two-character bucket', { bucket: 'ab' }, 'spec.destination.objectStore.bucket', /fewer than 3/],
    ['a bucket with ".."', { bucket: 'a..b' }, 'spec.destination.objectStore.bucket', /two adjacent periods/],
    ['a bucket shaped as an IP address', { bucket: '192.168.1.10' }, 'spec.destination.objectStore.bucket', /IP address/],
    ['a prefix with a leading /', { prefix: '/prod' }, 'spec.destination.objectStore.prefix', /must be relative: .*no leading, trailing or double "\/", got "\/prod"/],
    ['a prefix with a trailing /', { prefix: 'prod/' }, 'spec.destination.objectStore.prefix', /must be relative/],
    ['a prefix with a ".." segment', { prefix: 'prod/../other' }, 'spec.destination.objectStore.prefix', /"\." or "\.\." segments/],
    ['a plain http endpoint without the opt-in', { endpoint: 'http://minio.storage:9000' }, 'spec.destination.objectStore.endpoint', /https:\/\/ unless allowHttp/],
    ['an http endpoint with allowHttp false', { endpoint: 'http://minio.storage:9000', allowHttp: false }, 'spec.destination.objectStore.endpoint', /https:\/\/ unless allowHttp/],
    ['an endpoint with a path', { endpoint: 'https://s3.example.com/bucket' }, 'spec.destination.objectStore.endpoint', /no path/],
    ['an endpoint with credentials in it', { endpoint: 'https://key:secret@s3.example.com' }, 'spec.destination.objectStore.endpoint', /single host/],
    ['a region with spaces', { region: 'eu central' }, 'spec.destination.objectStore.region', /must be a region name .* got "eu central"/],
    ['no credentials Secret', { credentialsSecretName: undefined }, 'spec.destination.objectStore.credentialsSecretName', /is required/],
    ['a CA Secret name that is no object name', { caSecretName: 'Private_CA' }, 'spec.destination.objectStore.caSecretName', /pattern/],
  ])('rejects %s, naming the field, as the API server does', (_name, store, field, message) => {
    const object = toBucket(store);
    if (store['credentialsSecretName'] === undefined && 'credentialsSecretName' in store) delete object['spec'].destination.objectStore.credentialsSecretName;
    const errors = validateBackupScheduleV1(object);
    expect(errors.map((e) => e.field)).toContain(field);
    expect(errors.find((e) => e.field === field)?.message).toMatch(message);
    expect(apiServerFields(object)).toContain(field);
  });

  it.each<[string, Obj, string]>([
    ['type ObjectStore without objectStore', { type: 'ObjectStore', persistentVolumeClaim: { claimName: 'b' } }, 'spec.destination.objectStore'],
    ['an objectStore beside a claim', { type: 'ObjectStore', persistentVolumeClaim: { claimName: 'b' }, objectStore: { bucket: 'acme', credentialsSecretName: 's' } }, 'spec.destination.persistentVolumeClaim'],
    ['an objectStore without type (which defaults to PersistentVolumeClaim)', { objectStore: { bucket: 'acme', credentialsSecretName: 's' } }, 'spec.destination.persistentVolumeClaim'],
  ])('rejects %s in the union, as the API server does', (_name, destination, field) => {
    const object = toBucket();
    object['spec'].destination = destination;
    expect(validateBackupScheduleV1(object).map((e) => e.field)).toContain(field);
    expect(apiServerFields(object)).toContain(field);
  });

  it('lets a claim source and an object store destination be, with no claim to compare', () => {
    const object = toBucket();
    object['spec'].source = { type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'data' } };
    expect(validateBackupScheduleV1(object)).toEqual([]);
    expect(apiServerFields(object)).toEqual([]);
  });

  it('is v1 only: v1alpha1 knows no objectStore or encryption', () => {
    const object = { ...toBucket({}, { encryption: { ageRecipients: [RECIPIENT] } }), apiVersion: 'kubelings.dev/v1alpha1' };
    const fields = validateBackupSchedule(object).map((e) => e.field);
    expect(fields).toContain('spec.destination.objectStore');
    expect(fields).toContain('spec.encryption');
  });
});

describe('a v1 object stored by 0.2.0 (no destination.type)', () => {
  it('gets type PersistentVolumeClaim from the structural default and stays valid', () => {
    const stored = toBucket();
    stored['spec'].destination = { persistentVolumeClaim: { claimName: 'backups', path: 'etcd' } };
    expect(validateBackupScheduleV1(stored)).toEqual([]);
    defaultCustomResource(crd, stored);
    expect(stored['spec'].destination).toEqual({ type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'backups', path: 'etcd' } });
    expect(validateCustomResource(crd, stored)).toEqual([]);
  });
});

describe('spec.encryption', () => {
  it('accepts up to 16 distinct age recipients, to a bucket or a claim', () => {
    expect(validateBackupScheduleV1(toBucket({}, { encryption: { ageRecipients: [RECIPIENT] } }))).toEqual([]);
    const claim = toBucket({}, { encryption: { ageRecipients: [RECIPIENT] } });
    claim['spec'].destination = { persistentVolumeClaim: { claimName: 'backups' } };
    expect(validateBackupScheduleV1(claim)).toEqual([]);
    expect(apiServerFields(claim)).toEqual([]);
  });

  it.each<[string, unknown[], string, RegExp, string]>([
    ['no recipient', [], 'spec.encryption.ageRecipients', /fewer than 1/, 'spec.encryption.ageRecipients'],
    ['17 recipients', Array.from({ length: 17 }, () => RECIPIENT), 'spec.encryption.ageRecipients', /more than 16/, 'spec.encryption.ageRecipients'],
    // kube names the second copy; ajv's uniqueItems names the list.
    ['a recipient twice', [RECIPIENT, RECIPIENT], 'spec.encryption.ageRecipients', /duplicate/, 'spec.encryption.ageRecipients[1]'],
    ['an ssh key', ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl'], 'spec.encryption.ageRecipients[0]', /must be an age X25519 recipient/, 'spec.encryption.ageRecipients[0]'],
    ['a recipient with a non-bech32 character (b)', [`${RECIPIENT.slice(0, 20)}b${RECIPIENT.slice(21)}`], 'spec.encryption.ageRecipients[0]', /must be an age X25519 recipient/, 'spec.encryption.ageRecipients[0]'],
    ['a recipient one character short', [RECIPIENT.slice(0, -1)], 'spec.encryption.ageRecipients[0]', /fewer than 62/, 'spec.encryption.ageRecipients[0]'],
  ])('rejects %s, as the API server does', (_name, ageRecipients, field, message, kubeField) => {
    const object = toBucket({}, { encryption: { ageRecipients } });
    const errors = validateBackupScheduleV1(object);
    expect(errors.filter((e) => e.field === field).map((e) => e.message).join('\n'), JSON.stringify(errors)).toMatch(message);
    expect(apiServerFields(object)).toContain(kubeField);
  });

  it('rejects a recipient whose bech32 checksum fails (a typo the pattern cannot see), naming its index', () => {
    // One character swapped for another of the charset: same length and alphabet, wrong checksum.
    const typo = `${RECIPIENT.slice(0, 30)}${RECIPIENT[30] === 'q' ? 'p' : 'q'}${RECIPIENT.slice(31)}`;
    const errors = validateBackupScheduleV1(toBucket({}, { encryption: { ageRecipients: [RECIPIENT, typo] } }));
    expect(errors).toHaveLength(1);
    expect(errors[0]?.field).toBe('spec.encryption.ageRecipients[1]');
    expect(errors[0]?.message).toMatch(/^spec\.encryption\.ageRecipients\[1\]: is not a valid age recipient \(.*checksum/i);
  });

  it('calls an age secret key what it is, without echoing it', () => {
    const identity = 'AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX';
    const errors = validateBackupScheduleV1(toBucket({}, { encryption: { ageRecipients: [identity] } }));
    expect(errors.map((e) => e.message)).toContainEqual(expect.stringMatching(/^spec\.encryption\.ageRecipients\[0\]: is an age identity \(a secret key\), not a recipient/));
    expect(JSON.stringify(errors)).not.toContain('GFPYYSJZ');
  });
});
