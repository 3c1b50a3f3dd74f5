/**
 * The bounds on what a tenant could otherwise make unbounded (docs/tenant-bounds.md): quantity strings
 * of spec.resources (maxLength), status.active (maxItems, a set of Job names) and status.conditions
 * (maxItems), in both versions, from the validator and from the test API server with the project's CRD.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ACTIVE_JOBS, MAX_CONDITIONS, MAX_QUANTITY_LENGTH } from '../../src/api/schema.ts';
import { validateBackupSchedule, validateBackupScheduleV1 } from '../../src/api/validate.ts';
import { startTestApiServer, type TestApiServer } from '../apiserver/index.ts';
import { client, createCrdAndWait } from '../apiserver/tests/http-client.ts';
import { distDocuments } from '../e2e/harness.ts';
import { scheduleManifest } from '../e2e/scenarios.ts';
import { validSchedule } from './invalid-cases.ts';

/** A valid quantity (the number 1) spelt with `length` characters. */
const longQuantity = (length: number): string => '1'.padStart(length, '0');
const jobs = (n: number): string[] => Array.from({ length: n }, (_, i) => `nightly-${String(29000000 + i)}`);
const conditions = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ type: i === 0 ? 'Ready' : `Other${i}`, status: 'True', reason: 'Set', message: '', lastTransitionTime: '2026-12-01T00:00:00Z' }));

const versions = [
  ['v1alpha1', validateBackupSchedule, () => validSchedule()],
  ['v1', validateBackupScheduleV1, () => scheduleManifest('team-a', 'nightly') as Record<string, any>],
] as const;

describe.each(versions)('validator bounds (%s)', (_version, validate, valid) => {
  const fieldsOf = (mutate: (o: Record<string, any>) => void): string[] => {
    const o = valid();
    mutate(o);
    return validate(o).map((e) => e.field);
  };

  it(`accepts a quantity of ${MAX_QUANTITY_LENGTH} characters and refuses one longer, naming the field`, () => {
    expect(fieldsOf((o) => (o.spec.resources = { limits: { memory: longQuantity(MAX_QUANTITY_LENGTH) } }))).toEqual([]);
    expect(fieldsOf((o) => (o.spec.resources = { limits: { memory: longQuantity(MAX_QUANTITY_LENGTH + 1) } }))).toContain('spec.resources.limits.memory');
    const o = valid();
    o.spec.resources = { requests: { cpu: longQuantity(10_000) } };
    const error = validate(o).find((e) => e.field === 'spec.resources.requests.cpu');
    expect(error?.message).toContain(String(MAX_QUANTITY_LENGTH));
  });

  it(`accepts ${MAX_ACTIVE_JOBS} active Jobs and refuses more or a repeated one, naming status.active`, () => {
    expect(fieldsOf((o) => (o.status = { active: jobs(MAX_ACTIVE_JOBS) }))).toEqual([]);
    expect(fieldsOf((o) => (o.status = { active: jobs(MAX_ACTIVE_JOBS + 1) }))).toContain('status.active');
    expect(fieldsOf((o) => (o.status = { active: ['a', 'a'] })).some((f) => f.startsWith('status.active'))).toBe(true);
  });

  it(`accepts ${MAX_CONDITIONS} conditions and refuses more, naming status.conditions`, () => {
    expect(fieldsOf((o) => (o.status = { conditions: conditions(MAX_CONDITIONS) }))).toEqual([]);
    expect(fieldsOf((o) => (o.status = { conditions: conditions(MAX_CONDITIONS + 1) }))).toContain('status.conditions');
  });
});

describe('test API server with the project CRD (dist/)', () => {
  const BS = '/apis/kubelings.dev/v1/namespaces/bounds/backupschedules';
  let server: TestApiServer;
  let api: ReturnType<typeof client>;
  const causes = (body: any): string[] => (body?.details?.causes ?? []).map((c: { field?: string }) => c.field ?? '');

  beforeAll(async () => {
    server = await startTestApiServer();
    api = client(server);
    expect((await api('POST', '/api/v1/namespaces', { metadata: { name: 'bounds' } })).status).toBe(201);
    await createCrdAndWait(api, distDocuments().find((d) => d.kind === 'CustomResourceDefinition'), BS);
  });
  afterAll(() => server.stop());

  it('rejects a quantity longer than the bound with a 422 naming the field', async () => {
    const res = await api('POST', BS, scheduleManifest('bounds', 'long-quantity', { resources: { limits: { memory: longQuantity(MAX_QUANTITY_LENGTH + 1) } } }));
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(causes(res.body)).toContain('spec.resources.limits.memory');
  });

  it('rejects a status write with too many active Jobs or conditions, naming the list', async () => {
    const created = await api('POST', BS, scheduleManifest('bounds', 'many-active'));
    expect(created.status).toBe(201);
    const tooMany = await api('PUT', `${BS}/many-active/status`, { ...created.body, status: { active: jobs(MAX_ACTIVE_JOBS + 1) } });
    expect(tooMany.status, JSON.stringify(tooMany.body)).toBe(422);
    expect(causes(tooMany.body)).toContain('status.active');
    const conditionsRes = await api('PUT', `${BS}/many-active/status`, { ...created.body, status: { conditions: conditions(MAX_CONDITIONS + 1) } });
    expect(conditionsRes.status).toBe(422);
    expect(causes(conditionsRes.body)).toContain('status.conditions');
    const atBound = await api('PUT', `${BS}/many-active/status`, { ...created.body, status: { active: jobs(MAX_ACTIVE_JOBS), conditions: conditions(MAX_CONDITIONS) } });
    expect(atBound.status, JSON.stringify(atBound.body)).toBe(200);
  });
});
