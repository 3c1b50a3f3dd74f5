/** The object-store command lines, object names, s3:// URLs and error wording (pure). */
import { describe, expect, it } from 'vitest';
import { BackupUsageError, parseBackupArgs } from '../../src/backup/backup-args.ts';
import { objectBackupName, parseObjectBackupName } from '../../src/backup/object-store/object-names.ts';
import { describeS3Error } from '../../src/backup/object-store/s3-errors.ts';
import { parseS3ObjectUrl, parseS3Url } from '../../src/backup/object-store/s3-location.ts';

const ENV = { BACKUP_SCHEDULE_NAME: 'nightly', BACKUP_SCHEDULE_NAMESPACE: 'ops' };
const RECIPIENT = 'age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p';
const RUN = ['--source=etcd', '--etcd-endpoints=https://10.0.0.1:2379', '--destination-url=s3://my-bucket/etcd/prod', '--keep-last=3'];

describe('backup --destination-url', () => {
  it('parses the contract command line into an upload', () => {
    const command = parseBackupArgs([...RUN, '--s3-endpoint=https://minio.local:9000', '--s3-region=eu-west-1', '--s3-force-path-style', '--s3-ca-file=/etc/ca.pem', `--age-recipient=${RECIPIENT}`, `--age-recipient=${RECIPIENT}`], ENV);
    expect(command).toEqual({
      kind: 'upload',
      source: { kind: 'etcd', endpoints: ['https://10.0.0.1:2379'], tlsDir: undefined },
      target: { location: { bucket: 'my-bucket', prefix: 'etcd/prod' }, s3: { endpoint: 'https://minio.local:9000', region: 'eu-west-1', forcePathStyle: true, caFile: '/etc/ca.pem', allowHttp: false }, compression: 'zstd', ageRecipients: [RECIPIENT, RECIPIENT], verify: 'etag' },
      retention: { keepLast: 3 },
      schedule: 'nightly',
      namespace: 'ops',
    });
  });

  it.each([
    [['--destination-dir=/backup'], /--destination-dir and --destination-url: give exactly one/],
    [['--s3-endpoint=http://10.0.0.5:9000'], /--s3-endpoint: http:\/\/10\.0\.0\.5:9000 is plain http .*--s3-allow-http/],
    [['--s3-endpoint=https://user:pw@host'], /--s3-endpoint: must not carry credentials/],
    [['--age-recipient=AGE-SECRET-KEY-1QQQ'], /--age-recipient: that is an age identity \(secret key\)/],
    [['--age-recipient=ssh-ed25519 AAAA'], /--age-recipient: expected an age recipient/],
    [['--compression=xz'], /--compression: expected zstd, gzip or none, got "xz"/],
    [['--s3-verify=md5'], /--s3-verify: expected etag or download/],
    [['--s3-region=EU West'], /--s3-region: "EU West" is not a region name/],
  ])('refuses %j', (extra, message) => {
    expect(() => parseBackupArgs([...RUN, ...extra], ENV)).toThrow(message);
  });

  it('refuses object-store flags without --destination-url, and bad URLs', () => {
    expect(() => parseBackupArgs(['--source=pvc', '--source-dir=/s', '--destination-dir=/d', '--keep-last=1', '--s3-verify=download'], ENV)).toThrow(/--s3-verify: only with --destination-url/);
    expect(() => parseBackupArgs(['--source=pvc', '--source-dir=/s', '--destination-dir=/d', '--keep-last=1', '--s3-endpoint=https://x'], ENV)).toThrow(/--s3-endpoint: only with --destination-url/);
    // A directory takes the encryption flags (spec.encryption applies to any destination), compression only with them.
    expect(() => parseBackupArgs(['--source=pvc', '--source-dir=/s', '--destination-dir=/d', '--keep-last=1', '--compression=gzip'], ENV)).toThrow(/--compression: with --destination-dir only together with --age-recipient/);
    expect(() => parseBackupArgs(['--source=pvc', '--source-dir=/s', '--destination-dir=/d', '--keep-last=1', '--age-recipient=AGE-SECRET-KEY-1XYZ'], ENV)).toThrow(/--age-recipient: that is an age identity/);
    expect(parseBackupArgs(['--source=pvc', '--source-dir=/s', '--destination-dir=/d', '--keep-last=1', '--age-recipient=age1abc', '--compression=gzip'], ENV)).toMatchObject({ kind: 'run', destinationDir: '/d', encryption: { ageRecipients: ['age1abc'], compression: 'gzip' } });
    expect(parseBackupArgs(['--source=pvc', '--source-dir=/s', '--destination-dir=/d', '--keep-last=1', '--age-recipient=age1abc'], ENV)).toMatchObject({ encryption: { compression: 'zstd' } });
    expect(parseBackupArgs(['verify', '/d/x-20261201T000000Z.db.zst.age', '--identity=/k.txt'], {})).toEqual({ kind: 'verify', file: '/d/x-20261201T000000Z.db.zst.age', identityFile: '/k.txt' });
    expect(() => parseBackupArgs(['verify', '/d/x.db', '--identity='], {})).toThrow(/--identity: empty/);
    expect(() => parseBackupArgs(RUN.map((a) => a.replace('s3://my-bucket/etcd/prod', 'https://my-bucket')), ENV)).toThrow(/--destination-url: expected s3:\/\/BUCKET\[\/PREFIX\]/);
    expect(() => parseBackupArgs(RUN.map((a) => a.replace('my-bucket', 'My_Bucket')), ENV)).toThrow(/--destination-url: "My_Bucket" is not an S3 bucket name/);
    expect(() => parseBackupArgs(RUN.map((a) => a.replace('etcd/prod', 'etcd//prod')), ENV)).toThrow(/empty, '\.' or '\.\.' segment/);
  });

  it('parses the tools', () => {
    expect(parseBackupArgs(['list', 's3://b-1/p', '--s3-endpoint=https://x'], {})).toMatchObject({ kind: 's3-list', url: 's3://b-1/p', s3: { endpoint: 'https://x' } });
    expect(parseBackupArgs(['verify', 's3://b-1/p/n.db', '--identity=/k'], {})).toMatchObject({ kind: 's3-verify', identityFile: '/k' });
    expect(parseBackupArgs(['fetch', 's3://b-1/p/n.db', '--identity', '/k', '-o', '/out'], {})).toMatchObject({ kind: 's3-fetch', identityFile: '/k', output: '/out' });
    expect(() => parseBackupArgs(['fetch', 's3://b-1/p/n.db'], {})).toThrow(BackupUsageError);
    expect(() => parseBackupArgs(['fetch', '/local/file'], {})).toThrow(/expected an s3:\/\/BUCKET\[\/PREFIX\]\/NAME argument first/);
    // A local verify stays local.
    expect(parseBackupArgs(['verify', '/backup/x.db'], {})).toEqual({ kind: 'verify', file: '/backup/x.db' });
  });
});

describe('object names', () => {
  it('puts the suffixes in pipeline order and parses them back', () => {
    const time = Date.UTC(2026, 10, 30, 2, 0, 7);
    expect(objectBackupName('nightly-etcd', time, 'etcd-snapshot', 'zstd', true)).toBe('nightly-etcd-20261130T020007Z.db.zst.age');
    expect(objectBackupName('data', time, 'volume-archive', 'gzip', false)).toBe('data-20261130T020007Z.tar.gz');
    expect(objectBackupName('data', time, 'volume-archive', 'none', true)).toBe('data-20261130T020007Z.tar.age');
    expect(parseObjectBackupName('a-b-20261130T020007Z.db.zst.age')).toEqual({ name: 'a-b-20261130T020007Z.db.zst.age', schedule: 'a-b', time, kind: 'etcd-snapshot', compression: 'zstd', encrypted: true, incomplete: false });
    expect(objectBackupName('data', time, 'volume-archive', 'zstd', true, true)).toBe('data-20261130T020007Z.incomplete.tar.zst.age');
    expect(parseObjectBackupName('data-20261130T020007Z.incomplete.tar.zst.age')).toMatchObject({ schedule: 'data', kind: 'volume-archive', incomplete: true });
    for (const other of ['a-20261130T020007Z.db.sha256', 'a-20261341T020007Z.db', 'a-20261130T020007Z.tar.xz', 'a-20261130T020007Z.db.age.zst', 'a-20261130T020007Z.incomplete.db.zst']) expect(parseObjectBackupName(other), other).toBeUndefined();
  });

  it('splits s3:// URLs', () => {
    expect(parseS3Url('s3://bucket', 'x')).toEqual({ bucket: 'bucket', prefix: '' });
    expect(parseS3Url('s3://bucket/a/b/', 'x')).toEqual({ bucket: 'bucket', prefix: 'a/b' });
    expect(parseS3ObjectUrl('s3://bucket/a/b/n.db', 'x')).toEqual({ bucket: 'bucket', prefix: 'a/b', name: 'n.db' });
    expect(parseS3ObjectUrl('s3://bucket/n.db', 'x')).toEqual({ bucket: 'bucket', prefix: '', name: 'n.db' });
  });
});

describe('S3 errors in one line', () => {
  const sdk = (name: string, status: number, message = 'm'): Error => Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status, attempts: 1 } });
  it.each([
    [sdk('SignatureDoesNotMatch', 403), /refused the credentials: check AWS_ACCESS_KEY_ID/],
    [sdk('AccessDenied', 403), /access denied to bucket b: check the credentials/],
    [sdk('NoSuchBucket', 404), /bucket b does not exist \(the runner never creates buckets\)/],
    [sdk('RequestTimeTooSkewed', 403), /clock differs from the server's by more than 15 minutes/],
    [Object.assign(sdk('SlowDown', 503), { $metadata: { httpStatusCode: 503, attempts: 6 } }), /kept throttling .* \(SlowDown, HTTP 503, 6 attempts\)/],
    [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), /cannot reach https:\/\/s3\.example: connect ECONNREFUSED/],
    [Object.assign(new Error('self-signed certificate in certificate chain'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' }), /TLS failure talking to https:\/\/s3\.example: .*--s3-ca-file/],
  ])('%s', (err, pattern) => {
    const line = describeS3Error('upload', err, { bucket: 'b', endpoint: 'https://s3.example' });
    expect(line).toMatch(pattern);
    expect(line).not.toContain('\n');
  });
});
