/**
 * Custom resource validation and defaulting against the CRD's structural schema: every field error in
 * one 422 (error-422-cr-*.json), defaults (also inside a defaulted `{}`), pruning outside
 * preserve-unknown-fields (cr-create-defaults-and-pruning.json), fieldValidation Strict/Warn/Ignore,
 * and the CEL rule.
 */
import { describe, expect, it } from 'vitest';
import { celMessage, must, useCluster, useWidgets, type ApiResponse } from './harness.ts';

const cluster = useCluster();
const widgets = useWidgets(cluster);

interface Cause {
  reason: string;
  field: string;
  message: string;
}

/**
 * Kubernetes ≥ 1.25 skips CEL rules when a type/required/enum/too-long/too-many error blocks them and
 * adds this field-less cause (apiextensions `hasBlockingErr`); newer releases print the value unquoted.
 */
const celSkipped = {
  reason: 'FieldValueInvalid',
  field: '<nil>',
  message: expect.stringMatching(/^Invalid value: "?null"?: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation$/),
};

describe('custom resource validation', () => {
  it('lists every field error in one 422 Invalid, joined in the message', async (ctx) => {
    const w = widgets();
    const ns = await cluster().namespace('valid');
    const res = await cluster().api.post(w.path(ns), w.body('w2', { schedule: 5, size: 11, mode: 'Slow', tags: ['a', 'b', 'c', 'd'], nested: { keep: -1 } }));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Invalid', code: 422, details: { name: 'w2', group: w.group, kind: 'Widget' } });
    const causes = (res.body.details as { causes: Cause[] }).causes;
    const fields = ['spec.mode', 'spec.nested.keep', 'spec.schedule', 'spec.size', 'spec.tags'];
    if (await cluster().has(ctx, 'crd-validation-rules-skipped-cause')) {
      expect(causes.map((c) => c.field).sort()).toEqual(['<nil>', ...fields]);
      expect(causes.at(-1)).toEqual(celSkipped);
    } else {
      expect(causes.map((c) => c.field).sort()).toEqual(fields);
    }
    const by = (field: string): Cause | undefined => causes.find((c) => c.field === field);
    expect(by('spec.mode')).toEqual({ reason: 'FieldValueNotSupported', field: 'spec.mode', message: 'Unsupported value: "Slow": supported values: "Fast", "Safe"' });
    expect(by('spec.size')).toEqual({ reason: 'FieldValueInvalid', field: 'spec.size', message: 'Invalid value: 11: spec.size in body should be less than or equal to 10' });
    expect(by('spec.nested.keep')).toEqual({ reason: 'FieldValueInvalid', field: 'spec.nested.keep', message: 'Invalid value: -1: spec.nested.keep in body should be greater than or equal to 0' });
    expect(by('spec.schedule')?.message).toContain('spec.schedule in body must be of type string');
    expect(by('spec.tags')?.message).toMatch(/at most 3 items/);
    const message = res.body.message as string;
    expect(message.startsWith(`Widget.${w.group} "w2" is invalid: [`)).toBe(true);
    for (const c of causes) expect(message).toContain(`${c.field}: ${c.message}`);
  });

  it('reports a pattern mismatch with the pattern in the message', async () => {
    const w = widgets();
    const ns = await cluster().namespace('valid');
    const res = await cluster().api.post(w.path(ns), w.body('w4', { schedule: 'every day' }));
    expect(res.status).toBe(422);
    const cause = 'Invalid value: "every day": spec.schedule in body should match \'^(@(hourly|daily|weekly|monthly|yearly)|(\\S+\\s+){4}\\S+)$\'';
    expect(res.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `Widget.${w.group} "w4" is invalid: spec.schedule: ${cause}`,
      reason: 'Invalid',
      details: { name: 'w4', group: w.group, kind: 'Widget', causes: [{ reason: 'FieldValueInvalid', message: cause, field: 'spec.schedule' }] },
      code: 422,
    });
  });

  it('reports a missing required field as Required value', async (ctx) => {
    const w = widgets();
    const ns = await cluster().namespace('valid');
    const res = await cluster().api.post(w.path(ns), w.body('w3', { size: 2 }));
    expect(res.status).toBe(422);
    const required = { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.schedule' };
    const kind = `Widget\\.${w.group.replace(/\./g, '\\.')}`;
    if (await cluster().has(ctx, 'crd-validation-rules-skipped-cause')) {
      expect(res.body).toMatchObject({ reason: 'Invalid', details: { causes: [required, celSkipped] } });
      expect(res.body.message).toMatch(new RegExp(`^${kind} "w3" is invalid: \\[spec\\.schedule: Required value, <nil>: Invalid value: "?null"?: some validation rules were not checked`));
    } else {
      expect(res.body).toMatchObject({ reason: 'Invalid', details: { causes: [required] } });
      expect(res.body.message).toMatch(new RegExp(`^${kind} "w3" is invalid: spec\\.schedule: Required value$`));
    }
  });

  it.each([
    ['size below minimum', { schedule: '@daily', size: 0 }, 'spec.size', 'should be greater than or equal to 1'],
    ['schedule longer than maxLength', { schedule: `${'* '.repeat(60)}*`, size: 1 }, 'spec.schedule', '100'],
    ['empty tag below minLength', { schedule: '@daily', tags: [''] }, 'spec.tags', '1'],
    ['enum value', { schedule: '@daily', mode: 'fast' }, 'spec.mode', 'supported values: "Fast", "Safe"'],
    ['string for an integer', { schedule: '@daily', size: 'three' }, 'spec.size', 'must be of type integer'],
  ])('rejects %s naming the field', async (_, spec, field, fragment) => {
    const w = widgets();
    const ns = await cluster().namespace('valid');
    const res = await cluster().api.post(w.path(ns), w.body('bad', spec));
    expect(res.status).toBe(422);
    const causes = (res.body.details as { causes: Cause[] }).causes;
    // Newer servers name the array index (`spec.tags[0]`), 1.20 did not.
    const forField = causes.filter((c) => c.field === field || c.field.startsWith(`${field}[`));
    expect(forField.some((c) => c.message.includes(fragment)), JSON.stringify(causes)).toBe(true);
  });

  it('checks the date-time format Kubernetes validates', async () => {
    const { api } = cluster();
    const w = widgets();
    const ns = await cluster().namespace('valid');
    must(await api.post(w.path(ns), w.body('fmt')), 201);
    const condition = { type: 'Ready', status: 'True', lastTransitionTime: 'yesterday' };
    const res = await api.patch(w.path(ns, 'fmt') + '/status', { status: { conditions: [condition] } });
    expect(res.status).toBe(422);
    const causes = (res.body.details as { causes: Cause[] }).causes;
    const cause = causes.find((c) => /^status\.conditions(\[0\])?\.lastTransitionTime$/.test(c.field));
    expect(cause?.message, JSON.stringify(causes)).toContain('must be of type date-time');
    const ok = await api.patch(w.path(ns, 'fmt') + '/status', { status: { conditions: [{ ...condition, lastTransitionTime: '2026-11-30T00:00:00Z' }] } });
    expect(ok.status).toBe(200);
  });

  it('accepts null for a nullable field and an int-or-string as either', async () => {
    const w = widgets();
    const ns = await cluster().namespace('valid');
    const api = cluster().api;
    expect((await api.post(w.path(ns), w.body('n1', { schedule: '@daily', nested: { note: null }, quantity: 3 }))).status).toBe(201);
    expect((await api.post(w.path(ns), w.body('n2', { schedule: '@daily', quantity: '10Gi' }))).status).toBe(201);
  });

  it('evaluates the CEL x-kubernetes-validations rule and reports its message', async (ctx) => {
    const w = widgets();
    const ns = await cluster().namespace('valid');
    const ok = await cluster().api.post(w.path(ns), w.body('fast-ok', { schedule: '@daily', mode: 'Fast', size: 5 }));
    expect(ok.status).toBe(201);
    const res = await cluster().api.post(w.path(ns), w.body('fast-big', { schedule: '@daily', mode: 'Fast', size: 6 }));
    if (!(await cluster().has(ctx, 'crd-validation-rules'))) {
      // The rule never reached the stored CRD, so nothing enforces it.
      expect(res.status, res.text).toBe(201);
      const crd = must(await cluster().api.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${w.crdName}`), 200);
      expect(JSON.stringify(crd.spec)).not.toContain('x-kubernetes-validations');
      return;
    }
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ reason: 'Invalid', details: { causes: [{ reason: 'FieldValueInvalid', field: 'spec' }] } });
    expect((res.body.details as { causes: Cause[] }).causes[0]?.message).toContain(celMessage);
    expect(res.body.message).toContain(celMessage);
  });
});

describe('custom resource defaulting and pruning', () => {
  it('applies defaults, also inside a defaulted empty object', async () => {
    const w = widgets();
    const ns = await cluster().namespace('dflt');
    const res = await cluster().api.post(w.path(ns), w.body('w5', { schedule: '@daily' }));
    expect(res.status).toBe(201);
    expect(res.body.spec).toEqual({ schedule: '@daily', size: 3, mode: 'Safe', nested: { keep: 7 } });
  });

  it('treats an update that omits only defaulted fields as a no-op (same resourceVersion and generation)', async () => {
    const w = widgets();
    const ns = await cluster().namespace('dflt');
    const created = must(await cluster().api.post(w.path(ns), w.body('w7', { schedule: '@daily' })), 201);
    const body = { ...w.body('w7', { schedule: '@daily' }), metadata: { name: 'w7', resourceVersion: created.metadata.resourceVersion } };
    const again = must(await cluster().api.put(w.path(ns, 'w7'), body), 200);
    expect(again.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(again.metadata.generation).toBe(1);
  });

  it('keeps sent values over defaults and defaults missing fields of a sent object', async () => {
    const w = widgets();
    const ns = await cluster().namespace('dflt');
    const res = await cluster().api.post(w.path(ns), w.body('w6', { schedule: '@daily', size: 9, nested: { note: 'x' } }));
    expect(res.body.spec).toEqual({ schedule: '@daily', size: 9, mode: 'Safe', nested: { keep: 7, note: 'x' } });
  });

  it('prunes unknown fields except under x-kubernetes-preserve-unknown-fields (the default fieldValidation)', async (ctx) => {
    const w = widgets();
    const ns = await cluster().namespace('dflt');
    const res = await cluster().api.post(
      w.path(ns),
      w.body('w1', { schedule: '0 2 * * *', size: 3, bogus: true, nested: { keep: 7, junk: 1 }, free: { anything: { goes: 1 } }, quantity: '10Gi' }, { extra: 'top' }),
    );
    expect(res.status).toBe(201);
    expect(res.body.spec).toEqual({ free: { anything: { goes: 1 } }, mode: 'Safe', nested: { keep: 7 }, quantity: '10Gi', schedule: '0 2 * * *', size: 3 });
    expect(res.body.extra).toBeUndefined();
    // Without the parameter the server behaves as fieldValidation=Warn.
    if (await cluster().has(ctx, 'field-validation')) expect(String(res.headers.warning)).toContain('unknown field \\"spec.bogus\\"');
    else expect(res.headers.warning).toBeUndefined();
    const got = must(await cluster().api.get(w.path(ns, 'w1')), 200);
    expect(got.spec).toEqual(res.body.spec);
  });
});

describe('fieldValidation', () => {
  /** What a server without the parameter does with it: stores the object, prunes the field, says nothing. */
  const expectIgnored = (res: ApiResponse): void => {
    expect(res.status, res.text).toBe(201);
    expect(res.body.spec).not.toHaveProperty('bogus');
    expect(res.headers.warning).toBeUndefined();
  };

  it('Strict rejects an unknown field with 400 BadRequest', async (ctx) => {
    const w = widgets();
    const ns = await cluster().namespace('fv');
    const res = await cluster().api.post(w.path(ns), w.body('s1', { schedule: '@daily', bogus: 1 }), { query: { fieldValidation: 'Strict' } });
    if (!(await cluster().has(ctx, 'field-validation'))) {
      expectIgnored(res);
      return;
    }
    expect(res.status).toBe(400);
    // The decode error is wrapped by the handler's transformDecodeError, as kubectl users see it:
    // `Certificate in version "v1" cannot be handled as a Certificate: strict decoding error: unknown field "spec.acme"`.
    expect(res.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.bogus"',
      reason: 'BadRequest',
      code: 400,
    });
    expect((await cluster().api.get(w.path(ns, 's1'))).status).toBe(404);
  });

  it('Strict accepts unknown fields under x-kubernetes-preserve-unknown-fields', async () => {
    const w = widgets();
    const ns = await cluster().namespace('fv');
    const res = await cluster().api.post(w.path(ns), w.body('s2', { schedule: '@daily', free: { x: 1 } }), { query: { fieldValidation: 'Strict' } });
    expect(res.status).toBe(201);
  });

  it('Warn prunes the field and says so in a Warning header', async (ctx) => {
    const w = widgets();
    const ns = await cluster().namespace('fv');
    const res = await cluster().api.post(w.path(ns), w.body('s3', { schedule: '@daily', bogus: 1 }), { query: { fieldValidation: 'Warn' } });
    if (!(await cluster().has(ctx, 'field-validation'))) {
      expectIgnored(res);
      return;
    }
    expect(res.status).toBe(201);
    expect(res.body.spec).not.toHaveProperty('bogus');
    expect(String(res.headers.warning)).toContain('unknown field \\"spec.bogus\\"');
    expect(String(res.headers.warning)).toMatch(/^299 - "/);
  });

  it('Ignore prunes the field silently', async () => {
    const w = widgets();
    const ns = await cluster().namespace('fv');
    const res = await cluster().api.post(w.path(ns), w.body('s4', { schedule: '@daily', bogus: 1 }), { query: { fieldValidation: 'Ignore' } });
    expect(res.status).toBe(201);
    expect(res.body.spec).not.toHaveProperty('bogus');
    expect(res.headers.warning).toBeUndefined();
  });

  it('Strict rejects an unknown field of a built-in kind with 400 BadRequest', async (ctx) => {
    const ns = await cluster().namespace('fv');
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: {}, bogus: 1 };
    const res = await cluster().api.post(`/api/v1/namespaces/${ns}/configmaps`, body, { query: { fieldValidation: 'Strict' } });
    if (!(await cluster().has(ctx, 'field-validation'))) {
      expect(res.status, res.text).toBe(201);
      expect(res.body).not.toHaveProperty('bogus');
      expect(res.headers.warning).toBeUndefined();
      return;
    }
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ reason: 'BadRequest', code: 400, message: 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus"' });
  });
});
