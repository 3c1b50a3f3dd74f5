import { readdirSync, readFileSync } from 'node:fs';
import { CronJob } from 'kubernetes-models/batch/v1/CronJob';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { validateBackupSchedule, type BackupSchedule } from '../../src/api/index.ts';
import { buildCronJob } from '../../src/pure/index.ts';
import { crdValidator } from '../manifests/dist-files.ts';

const INPUTS = new URL('./inputs/', import.meta.url).pathname;
const cases = readdirSync(INPUTS)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .map((file) => [file, parse(readFileSync(INPUTS + file, 'utf8')) as BackupSchedule] as const);

describe('golden CronJobs of buildCronJob', () => {
  const crd = crdValidator();

  it('has at least 12 inputs', () => {
    expect(cases.length).toBeGreaterThanOrEqual(12);
  });

  it.each(cases)('%s is a valid BackupSchedule for validateBackupSchedule and the CRD schema', (_file, input) => {
    expect(validateBackupSchedule(input)).toEqual([]);
    expect(crd(input), JSON.stringify(crd.errors)).toBe(true);
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
});
