import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validateSchema } from '../../imports/backupschedule-validator.js';
import { compileSchemaValidator, GENERATED_V1_VALIDATOR_PATH, GENERATED_VALIDATOR_PATH, generateSchemaValidator } from '../../src/api/schema-validator.ts';
import { V1_SOURCE } from '../../src/api/generate-types.ts';
import { backupScheduleV1Schema } from '../../src/api/schema-v1.ts';
import { INVALID_CASES, validSchedule } from './invalid-cases.ts';

const fresh = compileSchemaValidator().validate;
const golden = readdirSync('test/golden/inputs').map((f) => parse(readFileSync(`test/golden/inputs/${f}`, 'utf8')) as unknown);

describe(`the precompiled schema validator (${GENERATED_VALIDATOR_PATH})`, () => {
  it('is what `npm run import` generates from the current schema, .d.ts included (run it if not)', () => {
    const { js, dts } = generateSchemaValidator();
    expect(readFileSync(GENERATED_VALIDATOR_PATH, 'utf8') === js, `${GENERATED_VALIDATOR_PATH} is stale: run \`npm run import\``).toBe(true);
    expect(readFileSync(GENERATED_VALIDATOR_PATH.replace(/\.js$/, '.d.ts'), 'utf8')).toBe(dts);
  });

  it(`and ${GENERATED_V1_VALIDATOR_PATH} is what it generates from the v1 schema`, () => {
    const { js, dts } = generateSchemaValidator(backupScheduleV1Schema, V1_SOURCE);
    expect(readFileSync(GENERATED_V1_VALIDATOR_PATH, 'utf8') === js, `${GENERATED_V1_VALIDATOR_PATH} is stale: run \`npm run import\``).toBe(true);
    expect(readFileSync(GENERATED_V1_VALIDATOR_PATH.replace(/\.js$/, '.d.ts'), 'utf8')).toBe(dts);
  });

  const corpus = [
    ...golden.map((o, i) => [`golden input ${i + 1}`, o] as const),
    ...INVALID_CASES.map((c) => {
      const o = validSchedule();
      c.mutate(o);
      return [c.name, o] as const;
    }),
    ['a 2^60-second activeDeadlineSeconds (int64 beyond JavaScript integers)', { ...validSchedule(), spec: { ...validSchedule().spec, activeDeadlineSeconds: 2 ** 60 } }] as const,
    ['a 2^31 backoffLimit (int32 overflow)', { ...validSchedule(), spec: { ...validSchedule().spec, backoffLimit: 2 ** 31 } }] as const,
  ];
  it.each(corpus)('agrees with ajv compiling the schema now on %s', (_name, object) => {
    const ahead = validateSchema(object);
    const now = fresh(object);
    expect(ahead).toBe(now);
    expect(validateSchema.errors ?? null).toEqual(fresh.errors ?? null);
  });

  it('checks int64 as the integers JavaScript holds exactly, keeping a tighter bound of the field', () => {
    const o = validSchedule();
    o.spec.activeDeadlineSeconds = 2 ** 60;
    expect(validateSchema(o)).toBe(false);
    expect(validateSchema.errors?.map((e) => `${e.instancePath} ${e.message}`)).toContain('/spec/activeDeadlineSeconds must be <= 9007199254740991');
    o.spec.activeDeadlineSeconds = 2 ** 53 - 1;
    o.spec.backoffLimit = 2 ** 31;
    expect(validateSchema(o)).toBe(false);
    expect(validateSchema.errors?.map((e) => `${e.instancePath} ${e.message}`)).toEqual(['/spec/backoffLimit must be <= 20']);
  });
});
