/**
 * `npm run bench:runtime` at a tiny size: the benchmark bundles its RSS child with esbuild, and a bundle
 * that no longer loads (its banner's `createRequire` clashed with one a bundled module imports) broke
 * `npm run bench` unnoticed, as nothing else runs that bundle.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const TSX = `${root}node_modules/tsx/dist/cli.mjs`;

describe('npm run bench:runtime', () => {
  it('runs the watch pipeline and the RSS child bundle, and reports each size', () => {
    const output = execFileSync(process.execPath, [TSX, 'bench/runtime-bench.ts', '--events', '2000', '--skip-http', '--rss-sizes', '0,100'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, RSS_SETTLE_MS: '0' },
      // Within the test's own timeout, so a hung bench ends as this call's error, not as a stuck worker.
      timeout: 50_000,
    });
    expect(output).toMatch(/\(a\) in-process watch stream: 2000 events/);
    for (const label of ['strip managedFields (default transform), plain full GC', 'strip managedFields + StringInterner, compactHeap() after sync']) {
      expect(output).toContain(`(b) ${label}:`);
    }
    expect(output.match(/100 BackupSchedules \+ 100 CronJobs \(200 cached/g)).toHaveLength(2);
    expect(output.match(/marginal per extra cached object \(0\+0 → 100\+100\): RSS -?\d+ B, heap -?\d+ B/g)).toHaveLength(2);
  }, 60_000);
});
