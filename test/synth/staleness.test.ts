import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GENERATED_TYPES_PATH, GENERATED_V1_TYPES_PATH, generateTypes, V1_SOURCE } from '../../src/api/generate-types.ts';
import { backupScheduleV1Schema } from '../../src/api/schema-v1.ts';
import { synthesize } from '../../src/manifests/index.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const DIST = join(ROOT, 'dist');

/** Every file under `dir` (sub-folders such as examples/ included), as sorted relative paths. */
function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

describe('committed generated files', () => {
  it(`${GENERATED_TYPES_PATH} matches the schema (run \`npm run import\` if not)`, async () => {
    const committed = readFileSync(join(ROOT, GENERATED_TYPES_PATH), 'utf8');
    expect(committed === (await generateTypes()), `${GENERATED_TYPES_PATH} is stale: run \`npm run import\``).toBe(true);
  });

  it(`${GENERATED_V1_TYPES_PATH} matches the v1 schema (run \`npm run import\` if not)`, async () => {
    const committed = readFileSync(join(ROOT, GENERATED_V1_TYPES_PATH), 'utf8');
    expect(committed === (await generateTypes(backupScheduleV1Schema, V1_SOURCE)), `${GENERATED_V1_TYPES_PATH} is stale: run \`npm run import\``).toBe(true);
  });

  describe('dist/', () => {
    const fresh = mkdtempSync(join(tmpdir(), 'synth-'));
    afterAll(() => rmSync(fresh, { recursive: true, force: true }));
    synthesize(fresh);
    const freshFiles = listFiles(fresh);

    it('writes the example into examples/ (a fresh synth has it)', () => {
      expect(freshFiles.filter((f) => f.startsWith('examples/'))).toEqual(['examples/00-namespace-kubelings.yaml', 'examples/01-backupschedule-nightly-etcd.yaml', 'examples/Kustomization']);
    });

    it('writes the editor JSON Schema of each served BackupSchedule version and of Restore into schemas/', () => {
      expect(freshFiles.filter((f) => f.startsWith('schemas/'))).toEqual(['schemas/backupschedule_v1.json', 'schemas/backupschedule_v1alpha1.json', 'schemas/restore_v1.json']);
    });

    it('has exactly the files of a fresh synth, examples/ and schemas/ included (run `npm run synth` if not)', () => {
      expect(listFiles(DIST), 'dist/ is stale: run `npm run synth`').toEqual(freshFiles);
    });

    it.each(freshFiles)('%s is byte-identical to a fresh synth (run `npm run synth` if not)', (file) => {
      const same = readFileSync(join(DIST, file), 'utf8') === readFileSync(join(fresh, file), 'utf8');
      expect(same, `dist/${file} is stale: run \`npm run synth\``).toBe(true);
    });

    it('is deterministic: a second synth gives the same bytes', () => {
      const again = mkdtempSync(join(tmpdir(), 'synth-'));
      try {
        synthesize(again);
        for (const file of freshFiles) expect(readFileSync(join(again, file), 'utf8')).toBe(readFileSync(join(fresh, file), 'utf8'));
      } finally {
        rmSync(again, { recursive: true, force: true });
      }
    });
  });
});
