/** `npm run bench:backup -- --help` prints the usage and exits 0 (it crashed with a parseArgs stack trace). */
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const TSX = `${root}node_modules/tsx/dist/cli.mjs`;

describe('npm run bench:backup', () => {
  it('--help prints the usage and exits 0 without starting etcd', () => {
    const output = execFileSync(process.execPath, [TSX, 'bench/backup-bench.ts', '--help'], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    expect(output).toMatch(/^Usage: npm run bench:backup -- \[--db-mb N\] \[--volume-mb N\] \[--repeat N\]/);
  });

  it('a bad flag prints the usage to stderr and exits 2', () => {
    const result = spawnSync(process.execPath, [TSX, 'bench/backup-bench.ts', '--bogus'], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/error: Unknown option '--bogus'[\s\S]*Usage:/);
  });
});
