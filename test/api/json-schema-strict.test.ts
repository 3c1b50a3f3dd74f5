/**
 * The published JSON Schemas (dist/schemas/) as a consumer's ajv in strict mode sees them: CI pipelines
 * and editors compile them with `new Ajv({ strict: true })`, which throws on what strict mode forbids
 * and logs the rest ("missing type "array" for keyword "items""). Either is a defect of the schema.
 */
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { SERVED_GROUP_VERSIONS } from '../../src/api/constants.ts';
import { jsonSchemaFile } from '../../src/api/json-schema.ts';
import { validSchedule } from './invalid-cases.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

describe.each(SERVED_GROUP_VERSIONS.map((v) => [`dist/schemas/${jsonSchemaFile(v)}`]))('%s', (path) => {
  it('compiles with new Ajv({ strict: true }) and ajv-formats without an error or a warning', () => {
    const said: string[] = [];
    const record = (...args: unknown[]): void => void said.push(args.map(String).join(' '));
    const ajv = new Ajv({ strict: true, logger: { log: record, warn: record, error: record } });
    addFormats(ajv);
    const schema = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    expect(() => ajv.compile(schema)).not.toThrow();
    expect(said).toEqual([]);
  });

  it('still checks the rules the strict-mode spelling restates (exactly one source; https with TLS)', () => {
    const ajv = new Ajv({ strict: true, allErrors: true });
    addFormats(ajv);
    const check = ajv.compile(JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>);
    const schedule = validSchedule();
    if (path.endsWith('_v1.json')) {
      schedule.apiVersion = 'kubelings.dev/v1';
      schedule.spec.source.type = 'Etcd';
    }
    expect(check(schedule), JSON.stringify(check.errors)).toBe(true);
    const both = structuredClone(schedule);
    both.spec.source.persistentVolumeClaim = { claimName: 'data' };
    expect(check(both)).toBe(false);
    const plain = structuredClone(schedule);
    plain.spec.source.etcd.endpoints = ['http://etcd-0.etcd:2379'];
    expect(check(plain)).toBe(false);
  });
});
