import { readdirSync, readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { CEL_RULES, CEL_RULES_V1 } from '../../src/api/cel-rules.ts';
import { RESTORE_CEL_RULES } from '../../src/api/restore-cel-rules.ts';
import { GROUP_VERSION, GROUP_VERSION_V1, type ServedGroupVersion } from '../../src/api/constants.ts';
import { CEL_AS_JSON_SCHEMA, JSON_SCHEMA_FILE, JSON_SCHEMA_FILE_V1, jsonSchemaFile, toEditorJsonSchema } from '../../src/api/json-schema.ts';
import { withoutKeywords } from '../../src/api/schema-keywords.ts';
import { validateAnyVersion, validateBackupSchedule, validateBackupScheduleV1 } from '../../src/api/validate.ts';
import { toV1 } from '../../src/conversion/index.ts';
import type { BackupSchedule } from '../../src/api/index.ts';
import { cli } from '../cli/cli-io.ts';
import { INVALID_CASES, validSchedule } from './invalid-cases.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const SCHEMA_PATH = `dist/schemas/${JSON_SCHEMA_FILE}`;
const committedOf = (apiVersion: ServedGroupVersion): Record<string, unknown> => JSON.parse(readFileSync(`dist/schemas/${jsonSchemaFile(apiVersion)}`, 'utf8')) as Record<string, unknown>;
const committed = committedOf(GROUP_VERSION);
// Strict: a keyword or format an editor or kubeconform would not know fails the compile.
const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, strictTypes: false });
addFormats(ajv);
const check = ajv.compile(committed);
const checkV1 = ajv.compile(committedOf(GROUP_VERSION_V1));
const checkOf = (object: unknown) => ((object as { apiVersion?: unknown }).apiVersion === GROUP_VERSION_V1 ? checkV1 : check);

/** Cases the CLI rejects that JSON Schema cannot express (so only `backupschedule validate` catches them). */
const BEYOND_JSON_SCHEMA = new Set([
  // robfig/cron's grammar: field ranges, names, steps, descriptors.
  'spec.schedule hour out of range',
  'spec.schedule minute out of range',
  'spec.schedule day of week 7',
  'spec.schedule day of week range to 7',
  'spec.schedule last day of month (L)',
  'spec.schedule nth weekday (#)',
  'spec.schedule step 0',
  'spec.schedule @every without a unit',
  // Quantities compared by value (and their exponent's int32 bound).
  'spec.resources.requests.memory exponent beyond int32',
  'spec.resources.requests.memory above its limit',
  'spec.resources.requests.cpu above its limit by a milli',
  // A CEL rule comparing two fields.
  'source and destination the same claim',
]);

describe(`the editor/CI JSON Schema (${SCHEMA_PATH})`, () => {
  it('is named as kubeconform looks it up: {{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json', () => {
    expect(JSON_SCHEMA_FILE).toBe('backupschedule_v1alpha1.json');
  });

  it('is the committed file (run `npm run synth` if not)', () => {
    expect(committed).toEqual(toEditorJsonSchema());
  });

  it('translates every CEL rule it can and names the one it cannot', () => {
    expect(CEL_RULES.filter((r) => CEL_AS_JSON_SCHEMA[r.rule] === undefined).map((r) => r.path.join('.'))).toEqual(['spec']);
    for (const rule of Object.keys(CEL_AS_JSON_SCHEMA)) expect([...CEL_RULES, ...CEL_RULES_V1, ...RESTORE_CEL_RULES].map((r) => r.rule)).toContain(rule);
  });

  const golden = readdirSync('test/golden/inputs').map((f) => [`test/golden/inputs/${f}`, parse(readFileSync(`test/golden/inputs/${f}`, 'utf8'))] as const);
  const examples = readdirSync('dist/examples')
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseAllDocuments(readFileSync(`dist/examples/${f}`, 'utf8')).map((d) => [`dist/examples/${f}`, d.toJS()] as const))
    .filter(([, o]) => (o as { kind?: string }).kind === 'BackupSchedule');

  it.each([...golden, ...examples])('accepts %s in the schema of its own version, as the CLI does', (_file, object) => {
    expect(validateAnyVersion(object)).toEqual([]);
    const versionCheck = checkOf(object);
    expect(versionCheck(object), JSON.stringify(versionCheck.errors)).toBe(true);
  });

  it('holds golden inputs of both versions, so both schemas are exercised', () => {
    const versions = new Set(golden.map(([, o]) => (o as { apiVersion: string }).apiVersion));
    expect([...versions].sort()).toEqual([GROUP_VERSION_V1, GROUP_VERSION]);
  });

  it('is what the v1 example points editors at with its yaml-language-server modeline', () => {
    expect(readFileSync('dist/examples/01-backupschedule-nightly-etcd.yaml', 'utf8').split('\n').slice(0, 2)).toEqual([
      `# yaml-language-server: $schema=../schemas/${JSON_SCHEMA_FILE_V1}`,
      `apiVersion: ${GROUP_VERSION_V1}`,
    ]);
  });

  it.each(INVALID_CASES.map((c) => [c.name, c] as const))('agrees with the CLI on %s', (_name, c) => {
    const object = validSchedule();
    c.mutate(object);
    expect(validateBackupSchedule(object)).not.toEqual([]);
    const rejected = !check(object);
    expect(rejected, `${c.name}: ${JSON.stringify(check.errors)}`).toBe(!BEYOND_JSON_SCHEMA.has(c.name));
    if (rejected) {
      // An error sits on the field the CLI names, or on its parent object (required, unknown field, oneOf).
      const pointers = (check.errors ?? []).map((e) => e.instancePath.slice(1).replace(/\//g, '.').replace(/\.(\d+)/g, '[$1]'));
      expect(pointers.some((p) => c.field === p || c.field.startsWith(`${p}.`) || c.field.startsWith(`${p}[`) || (p === '' && !c.field.includes('.'))), `${c.field} vs ${pointers.join(', ')}`).toBe(true);
    }
  });
});

/** The corpus base schedule, mutated, in v1 (a mutation that breaks conversion is applied after it). */
function asV1(mutate: (o: Record<string, any>) => void): Record<string, any> {
  const o = validSchedule();
  mutate(o);
  if (o['kind'] !== 'BackupSchedule' || o['apiVersion'] !== GROUP_VERSION) {
    const converted = toV1(validSchedule() as BackupSchedule) as unknown as Record<string, any>;
    mutate(converted);
    return converted;
  }
  return toV1(o as BackupSchedule) as unknown as Record<string, any>;
}

describe(`the v1 editor/CI JSON Schema (dist/schemas/${JSON_SCHEMA_FILE_V1})`, () => {
  it('is named as kubeconform looks it up and is the committed file (run `npm run synth` if not)', () => {
    expect(JSON_SCHEMA_FILE_V1).toBe('backupschedule_v1.json');
    expect(committedOf(GROUP_VERSION_V1)).toEqual(toEditorJsonSchema(GROUP_VERSION_V1));
  });

  it('translates every v1 CEL rule but the claims comparison', () => {
    expect(CEL_RULES_V1.filter((r) => CEL_AS_JSON_SCHEMA[r.rule] === undefined).map((r) => r.path.join('.'))).toEqual(['spec']);
  });

  it.each(INVALID_CASES.filter((c) => !BEYOND_JSON_SCHEMA.has(c.name)).map((c) => [c.name, c] as const))('rejects %s (converted to v1), as the CLI does', (_name, c) => {
    const object = asV1(c.mutate);
    expect(validateBackupScheduleV1(object)).not.toEqual([]);
    expect(checkV1(object)).toBe(false);
  });

  it.each([
    ['a source type that names the absent member', (o: Record<string, any>) => (o.spec.source.type = 'PersistentVolumeClaim')],
    ['a source without type', (o: Record<string, any>) => delete o.spec.source.type],
    ['a pvc member beside the etcd one', (o: Record<string, any>) => (o.spec.source.persistentVolumeClaim = { claimName: 'x' })],
    ['a retention without a rule', (o: Record<string, any>) => (o.spec.retention = {})],
    ['the v1alpha1 apiVersion', (o: Record<string, any>) => (o.apiVersion = GROUP_VERSION)],
  ])('rejects %s, as the CLI does', (_name, mutate) => {
    const object = asV1(() => undefined);
    mutate(object);
    expect(validateAnyVersion(object)).not.toEqual([]);
    expect(checkV1(object), JSON.stringify(object)).toBe(false);
  });

  it('accepts grandfather-father-son rules alone and a schedule without retention', () => {
    for (const retention of [{ keepMonthly: 12 }, { keepDaily: 7, keepWeekly: 4 }, undefined]) {
      const object = asV1(() => undefined);
      object.spec.retention = retention;
      expect(validateBackupScheduleV1(object)).toEqual([]);
      expect(checkV1(object), JSON.stringify(checkV1.errors)).toBe(true);
    }
  });
});

describe('the JSON Schema and the CLI on a manifest without apiVersion', () => {
  it('both reject it', () => {
    const object = validSchedule();
    delete object.apiVersion;
    expect(check(object)).toBe(false);
    const run = cli(['validate', '-'], JSON.stringify(object));
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('<stdin>:1: team-a/nightly: apiVersion: is required\n');
  });
});

describe('withoutKeywords', () => {
  it('drops keywords at any depth but keeps fields of the same name and data under default/enum', () => {
    const schema = {
      description: 'root',
      properties: { description: { type: 'string', description: 'a field named description' }, items: { type: 'array', items: { type: 'object', title: 'x' } } },
      default: { description: 'data' },
      enum: [{ title: 'data' }],
    };
    expect(withoutKeywords(schema, new Set(['description', 'title']))).toEqual({
      properties: { description: { type: 'string' }, items: { type: 'array', items: { type: 'object' } } },
      default: { description: 'data' },
      enum: [{ title: 'data' }],
    });
  });
});
