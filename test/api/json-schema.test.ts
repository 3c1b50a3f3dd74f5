import { readdirSync, readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { CEL_RULES } from '../../src/api/cel-rules.ts';
import { CEL_AS_JSON_SCHEMA, JSON_SCHEMA_FILE, toEditorJsonSchema } from '../../src/api/json-schema.ts';
import { withoutKeywords } from '../../src/api/schema-keywords.ts';
import { validateBackupSchedule } from '../../src/api/validate.ts';
import { cli } from '../cli/cli-io.ts';
import { INVALID_CASES, validSchedule } from './invalid-cases.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const SCHEMA_PATH = `dist/schemas/${JSON_SCHEMA_FILE}`;
const committed = JSON.parse(readFileSync(SCHEMA_PATH, 'utf8')) as Record<string, unknown>;
// Strict: a keyword or format an editor or kubeconform would not know fails the compile.
const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, strictTypes: false });
addFormats(ajv);
const check = ajv.compile(committed);

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
    for (const rule of Object.keys(CEL_AS_JSON_SCHEMA)) expect(CEL_RULES.map((r) => r.rule)).toContain(rule);
  });

  const golden = readdirSync('test/golden/inputs').map((f) => [`test/golden/inputs/${f}`, parse(readFileSync(`test/golden/inputs/${f}`, 'utf8'))] as const);
  const examples = readdirSync('dist/examples')
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseAllDocuments(readFileSync(`dist/examples/${f}`, 'utf8')).map((d) => [`dist/examples/${f}`, d.toJS()] as const))
    .filter(([, o]) => (o as { kind?: string }).kind === 'BackupSchedule');

  it.each([...golden, ...examples])('accepts %s, as the CLI does', (_file, object) => {
    expect(validateBackupSchedule(object)).toEqual([]);
    expect(check(object), JSON.stringify(check.errors)).toBe(true);
  });

  it('is what the example points editors at with its yaml-language-server modeline', () => {
    expect(readFileSync('dist/examples/01-backupschedule-nightly-etcd.yaml', 'utf8').split('\n')[0]).toBe(`# yaml-language-server: $schema=../schemas/${JSON_SCHEMA_FILE}`);
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

describe('the JSON Schema and the CLI on a manifest without apiVersion', () => {
  it('both reject it', () => {
    const object = validSchedule();
    delete object.apiVersion;
    expect(check(object)).toBe(false);
    const run = cli(['validate', '-'], JSON.stringify(object));
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('<stdin>:1: apiVersion: is required\n');
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
