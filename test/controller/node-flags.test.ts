import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONTROLLER_NODE_FLAGS } from '../../src/controller/node-flags.ts';

describe('CONTROLLER_NODE_FLAGS', () => {
  it('are the flags the Dockerfile ENTRYPOINT passes to node before the bundle', () => {
    const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');
    const entrypoint = dockerfile.split('\n').find((line) => line.startsWith('ENTRYPOINT '));
    expect(entrypoint).toBeDefined();
    expect(JSON.parse(entrypoint?.slice('ENTRYPOINT '.length) ?? '[]')).toEqual(['/nodejs/bin/node', ...CONTROLLER_NODE_FLAGS, '/app/controller.mjs']);
  });

  it('are accepted by this Node and set the heap limit', () => {
    const script = "process.stdout.write(String(require('node:v8').getHeapStatistics().heap_size_limit))";
    const limit = Number(execFileSync(process.execPath, [...CONTROLLER_NODE_FLAGS, '-e', script], { encoding: 'utf8' }));
    const oldSpaceMiB = Number(CONTROLLER_NODE_FLAGS.find((f) => f.startsWith('--max-old-space-size='))?.split('=')[1]);
    // heap_size_limit is the old generation plus the young generation's reservation.
    expect(limit / 2 ** 20).toBeGreaterThanOrEqual(oldSpaceMiB);
    expect(limit / 2 ** 20).toBeLessThan(oldSpaceMiB + 64);
  });
});
