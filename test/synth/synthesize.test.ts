import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EXAMPLES_DIR, KUSTOMIZATION_FILE, synthesize } from '../../src/manifests/index.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'synthesize-'));
  dirs.push(dir);
  return dir;
}

describe('synthesize', () => {
  it('returns each folder with its files in apply order, which is also their lexical order', () => {
    const out = synthesize(tempDir());
    expect(out.map((d) => d.dir)).toEqual(['.', EXAMPLES_DIR]);
    for (const { files } of out) expect(files).toEqual([...files].sort());
  });

  it('removes what an earlier synth left (old names, kustomization.yaml, stale examples) and keeps other files', () => {
    const dir = tempDir();
    mkdirSync(join(dir, EXAMPLES_DIR));
    for (const stale of ['Namespace.kubelings.yaml', 'kustomization.yaml', join(EXAMPLES_DIR, 'old.yaml')]) writeFileSync(join(dir, stale), 'kind: Stale\n');
    writeFileSync(join(dir, 'README.md'), 'kept\n');
    synthesize(dir);
    expect(readdirSync(dir)).not.toContain('kustomization.yaml');
    expect(readdirSync(dir)).not.toContain('Namespace.kubelings.yaml');
    expect(readdirSync(dir)).toContain('README.md');
    expect(readdirSync(join(dir, EXAMPLES_DIR))).not.toContain('old.yaml');
  });

  it('writes no examples/ folder when includeExample is false', () => {
    const dir = tempDir();
    const out = synthesize(dir, { includeExample: false });
    expect(out.map((d) => d.dir)).toEqual(['.']);
    expect(existsSync(join(dir, EXAMPLES_DIR))).toBe(false);
    expect(readdirSync(dir)).toContain(KUSTOMIZATION_FILE);
  });
});
