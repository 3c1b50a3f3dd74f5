import { readFileSync } from 'node:fs';
import { CronJob } from 'kubernetes-models/batch/v1/CronJob';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { v1 } from '../../src/api/index.ts';
import { buildCronJob } from '../../src/pure/index.ts';

const INPUTS = new URL('../golden/inputs/', import.meta.url).pathname;
const input = (file: string): v1.BackupSchedule => parse(readFileSync(INPUTS + file, 'utf8')) as v1.BackupSchedule;
const toS3 = (): v1.BackupSchedule => input('21-v1-object-store-etcd.yaml');
const withCa = (): v1.BackupSchedule => input('23-v1-object-store-private-ca.yaml');

type Pod = NonNullable<NonNullable<NonNullable<NonNullable<CronJob['spec']>['jobTemplate']['spec']>['template']['spec']>>;
const podOf = (schedule: v1.BackupSchedule): Pod => buildCronJob(schedule).spec!.jobTemplate.spec!.template.spec!;

describe('buildCronJob for an ObjectStore destination', () => {
  it('passes the bucket and how to reach it as flags, and no credential anywhere but secretKeyRef env', () => {
    const schedule = withCa();
    const job = buildCronJob(schedule);
    const container = job.spec!.jobTemplate.spec!.template.spec!.containers[0]!;
    expect(container.args).toEqual([
      'backup', '--source=etcd', '--etcd-endpoints=https://etcd-0.etcd:2379,https://etcd-1.etcd:2379', '--etcd-tls-dir=/etc/backup/etcd-tls',
      '--destination-url=s3://etcd-snapshots', '--s3-endpoint=https://rgw.ceph.internal', '--s3-region=default', '--s3-force-path-style',
      '--s3-ca-file=/etc/backup/s3-ca/ca.crt',
      '--age-recipient=age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p', '--keep-last=24', '--keep-daily=14',
    ]);
    const secretEnv = (container.env ?? []).filter((e) => e.name.startsWith('AWS_'));
    expect(secretEnv).toEqual(['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'].map((name) => ({
      name,
      valueFrom: { secretKeyRef: { name: 'ceph-rgw-credentials', key: name, ...(name === 'AWS_SESSION_TOKEN' ? { optional: true } : {}) } },
    })));
    // The Secret is only named; nothing else in the CronJob refers to it, and no env var carries a literal value of it.
    expect(JSON.stringify(job).split('ceph-rgw-credentials').length - 1).toBe(3);
    expect(secretEnv.every((e) => e.value === undefined)).toBe(true);
    expect(() => new CronJob(job).validate()).not.toThrow();
  });

  it("mounts only the CA Secret's ca.crt, read-only and not world-readable, and no destination claim", () => {
    const pod = podOf(withCa());
    expect(pod.volumes?.find((v) => v.name === 's3-ca')).toEqual({ name: 's3-ca', secret: { secretName: 'ceph-internal-ca', defaultMode: 0o440, items: [{ key: 'ca.crt', path: 'ca.crt' }] } });
    expect(pod.containers[0]!.volumeMounts?.find((m) => m.name === 's3-ca')).toEqual({ name: 's3-ca', mountPath: '/etc/backup/s3-ca', readOnly: true });
    expect(pod.volumes?.some((v) => v.persistentVolumeClaim !== undefined)).toBe(false);
    expect(podOf(toS3()).volumes?.map((v) => v.name)).toEqual(['etcd-tls', 'tmp']);
  });

  it('keeps the restricted Pod of a PersistentVolumeClaim destination', () => {
    const pvc = input('17-v1-gfs-etcd.yaml');
    const [s3, claim] = [podOf(toS3()), podOf(pvc)];
    expect(s3.securityContext).toEqual(claim.securityContext);
    expect(s3.containers[0]!.securityContext).toEqual(claim.containers[0]!.securityContext);
    expect(s3.automountServiceAccountToken).toBe(false);
  });

  it('bounds the scratch volume where an etcd snapshot is staged: the ephemeral-storage limit, else 8Gi; nothing else stages', () => {
    const tmp = (schedule: v1.BackupSchedule) => podOf(schedule).volumes?.find((v) => v.name === 'tmp');
    expect(tmp(toS3())).toEqual({ name: 'tmp', emptyDir: { sizeLimit: '8Gi' } });
    expect(tmp(withCa())).toEqual({ name: 'tmp', emptyDir: { sizeLimit: '12Gi' } });
    expect(tmp(input('22-v1-object-store-encrypted.yaml'))).toEqual({ name: 'tmp', emptyDir: {} });
    expect(tmp(input('17-v1-gfs-etcd.yaml'))).toEqual({ name: 'tmp', emptyDir: {} });
  });

  it('bounds the scratch volume of an etcd snapshot encrypted to a claim (staged whole in /tmp too); a claim without encryption or a volume source stays unbounded', () => {
    const tmp = (schedule: v1.BackupSchedule) => podOf(schedule).volumes?.find((v) => v.name === 'tmp');
    const encryptedEtcd = input('25-v1-etcd-pvc-encrypted.yaml');
    expect(tmp(encryptedEtcd)).toEqual({ name: 'tmp', emptyDir: { sizeLimit: '8Gi' } });
    encryptedEtcd.spec.resources = { limits: { 'ephemeral-storage': '3Gi' } };
    expect(tmp(encryptedEtcd)).toEqual({ name: 'tmp', emptyDir: { sizeLimit: '3Gi' } });
    const plainEtcd = input('25-v1-etcd-pvc-encrypted.yaml');
    delete plainEtcd.spec.encryption;
    expect(tmp(plainEtcd)).toEqual({ name: 'tmp', emptyDir: {} });
    expect(tmp(input('24-v1-pvc-encrypted.yaml'))).toEqual({ name: 'tmp', emptyDir: {} });
  });

  it('passes --s3-allow-http only when the spec opts in to a plain http endpoint', () => {
    const schedule = toS3();
    schedule.spec.destination.objectStore = { ...schedule.spec.destination.objectStore!, endpoint: 'http://minio.storage:9000', allowHttp: true };
    expect(buildCronJob(schedule).spec!.jobTemplate.spec!.template.spec!.containers[0]!.args).toContain('--s3-allow-http');
    expect(podOf(toS3()).containers[0]!.args).not.toContain('--s3-allow-http');
  });

  it('refuses an ObjectStore schedule the validator refuses, naming the field', () => {
    const schedule = toS3();
    schedule.spec.destination.objectStore = { ...schedule.spec.destination.objectStore!, endpoint: 'http://minio.storage:9000' };
    expect(() => buildCronJob(schedule)).toThrow(/spec\.destination\.objectStore\.endpoint: endpoint must use https:\/\/ unless allowHttp is true/);
  });
});

describe('buildCronJob for a v1 object stored before destination.type existed (0.2.0)', () => {
  it('builds the same child with type left out as with its default, PersistentVolumeClaim', () => {
    const stored = input('18-v1-pvc-keep-last.yaml');
    const { type: _type, ...destination } = { ...stored.spec.destination };
    const undefaulted = { ...stored, spec: { ...stored.spec, destination } };
    expect(JSON.stringify(buildCronJob(undefaulted))).toBe(JSON.stringify(buildCronJob({ ...stored, spec: { ...stored.spec, destination: { type: 'PersistentVolumeClaim', ...destination } } })));
  });
});

describe('buildCronJob with spec.encryption', () => {
  it('passes each recipient as --age-recipient, to a claim as to a bucket, before the retention flags', () => {
    const args = podOf(input('24-v1-pvc-encrypted.yaml')).containers[0]!.args;
    expect(args?.slice(-3)).toEqual(['--destination-dir=/backup/destination/postgres', '--age-recipient=age1hndvjhse960ac32a2x3520y6a8rqlf7rxdz2f29k57w9ed2h8spsmqstzk', '--keep-last=7']);
  });
});
