import { readdirSync, readFileSync } from 'node:fs';
import { CronJob } from 'kubernetes-models/batch/v1/CronJob';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { API_VERSION, API_VERSION_V1, GROUP_VERSION, GROUP_VERSION_V1, isV1, validateAnyVersion, type AnyBackupSchedule, type BackupSchedule } from '../../src/api/index.ts';
import { toV1 } from '../../src/conversion/index.ts';
import { buildCronJob } from '../../src/pure/index.ts';
import { crdValidator, DIST_DIR } from '../manifests/dist-files.ts';

const INPUTS = new URL('./inputs/', import.meta.url).pathname;
const cases = readdirSync(INPUTS)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .map((file) => [file, parse(readFileSync(INPUTS + file, 'utf8')) as AnyBackupSchedule] as const);
const v1alpha1Cases = cases.filter(([, input]) => !isV1(input)) as (readonly [string, BackupSchedule])[];

/** The CronJob without the one field that says through which version the owner was read. */
function withoutOwnerVersion(job: ReturnType<typeof buildCronJob>): unknown {
  const [owner, ...others] = job.metadata?.ownerReferences ?? [];
  const { apiVersion: _apiVersion, ...rest } = owner ?? { apiVersion: '' };
  return { ...job, metadata: { ...job.metadata, ownerReferences: [rest, ...others] } };
}

describe('golden CronJobs of buildCronJob', () => {
  const crd = { [GROUP_VERSION]: crdValidator(DIST_DIR, API_VERSION), [GROUP_VERSION_V1]: crdValidator(DIST_DIR, API_VERSION_V1) };

  it('has at least 12 v1alpha1 inputs and 4 v1 inputs', () => {
    expect(v1alpha1Cases.length).toBeGreaterThanOrEqual(12);
    expect(cases.length - v1alpha1Cases.length).toBeGreaterThanOrEqual(4);
  });

  it.each(cases)('%s is valid in its own version for validateAnyVersion and the CRD schema of that version', (_file, input) => {
    expect([GROUP_VERSION, GROUP_VERSION_V1]).toContain(input.apiVersion);
    expect(validateAnyVersion(input)).toEqual([]);
    const validate = crd[input.apiVersion as keyof typeof crd];
    expect(validate(input), JSON.stringify(validate.errors)).toBe(true);
  });

  it.each(cases)('%s builds the expected CronJob', async (file, input) => {
    await expect(stringify(buildCronJob(input))).toMatchFileSnapshot(`./expected/${file}`);
  });

  it.each(cases)('%s builds a CronJob valid against the Kubernetes OpenAPI schema', (_file, input) => {
    const job = buildCronJob(input);
    expect(() => new CronJob(job).validate()).not.toThrow();
    expect(job.metadata?.name?.length).toBeLessThanOrEqual(52);
    for (const value of Object.values(job.metadata?.labels ?? {})) expect(value.length).toBeLessThanOrEqual(63);
  });

  // The controller reads every schedule as v1 once v1 is the storage version: the same CronJob, the
  // owner's apiVersion aside (which sameOwner ignores), means an upgrade writes no child.
  it.each(v1alpha1Cases)('%s read as v1 (toV1) builds the same CronJob, but for the ownerReference apiVersion', (_file, input) => {
    const viaV1 = buildCronJob(toV1(input));
    const direct = buildCronJob(input);
    expect(withoutOwnerVersion(viaV1)).toEqual(withoutOwnerVersion(direct));
    expect(stringify(withoutOwnerVersion(viaV1))).toBe(stringify(withoutOwnerVersion(direct)));
    expect(viaV1.metadata?.ownerReferences?.[0]?.apiVersion).toBe(GROUP_VERSION_V1);
    expect(direct.metadata?.ownerReferences?.[0]?.apiVersion).toBe(GROUP_VERSION);
  });

  it.each([
    ['17-v1-gfs-etcd.yaml', ['--keep-last=3', '--keep-daily=7', '--keep-weekly=4', '--keep-monthly=6']],
    ['18-v1-pvc-keep-last.yaml', ['--keep-last=14']],
    ['19-v1-no-retention.yaml', ['--keep-last=7']],
    ['20-v1-keep-monthly.yaml', ['--keep-monthly=24']],
  ])('%s passes the runner exactly the retention flags %j', (file, flags) => {
    const input = cases.find(([f]) => f === file)?.[1];
    expect(input).toBeDefined();
    const args = buildCronJob(input as AnyBackupSchedule).spec?.jobTemplate.spec?.template.spec?.containers[0]?.args ?? [];
    expect(args.filter((a) => a.startsWith('--keep-'))).toEqual(flags);
  });
});
