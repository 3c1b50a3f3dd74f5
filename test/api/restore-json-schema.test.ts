/**
 * The Restore's editor JSON Schema (dist/schemas/restore_v1.json): committed as synthesized, compiles
 * under a strict ajv, translates every Restore CEL rule (the spec's immutability is a transition rule,
 * which no JSON Schema of one object can express), accepts the golden Restores and refuses what the
 * validator refuses at the same place.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CEL_AS_JSON_SCHEMA, RESTORE_JSON_SCHEMA_FILE, restoreEditorJsonSchema } from '../../src/api/json-schema.ts';
import { RESTORE_CEL_RULES } from '../../src/api/restore-cel-rules.ts';
import { validateRestore } from '../../src/api/validate.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const committed = JSON.parse(readFileSync(`dist/schemas/${RESTORE_JSON_SCHEMA_FILE}`, 'utf8')) as Record<string, unknown>;
const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, strictTypes: false });
addFormats(ajv);
const check = ajv.compile(committed);
const goldens = readdirSync('test/golden/restore/inputs').map((f) => (parse(readFileSync(`test/golden/restore/inputs/${f}`, 'utf8')) as { restore: Record<string, unknown> }).restore);

describe('the Restore editor JSON Schema', () => {
  it('is committed as synthesized', () => {
    expect(committed).toEqual(JSON.parse(JSON.stringify(restoreEditorJsonSchema())));
  });

  it('translates every Restore CEL rule', () => {
    expect(RESTORE_CEL_RULES.filter((r) => CEL_AS_JSON_SCHEMA[r.rule] === undefined)).toEqual([]);
  });

  it.each(goldens.map((g) => [String((g['metadata'] as { name: string }).name), g] as const))('accepts %s, as the validator does', (_name, restore) => {
    expect(validateRestore(restore)).toEqual([]);
    expect(check(restore), JSON.stringify(check.errors)).toBe(true);
  });

  it.each([
    ['two sources', { from: { backupScheduleName: 'a', persistentVolumeClaim: { claimName: 'b' } } }],
    ['no source', { from: {} }],
    ['a ".." target path', { target: { persistentVolumeClaim: { claimName: 'b', path: 'x/../..' } } }],
    ['an unknown field', { restoreEverything: true }],
  ])('refuses %s, as the validator does', (_what, change) => {
    const restore = { ...goldens[0]!, spec: { ...(goldens[0]!['spec'] as object), ...change } };
    expect(validateRestore(restore)).not.toEqual([]);
    expect(check(restore)).toBe(false);
  });
});
