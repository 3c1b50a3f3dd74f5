import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { killLeftoverRunners, startRunner } from './runner-process.ts';
import { removeTempDirsAfterEach, tempDir } from './temp-dirs.ts';

removeTempDirsAfterEach();

describe('killLeftoverRunners', () => {
  it('ends a runner a failed test left frozen (SIGSTOP), and leaves none behind', async () => {
    const script = join(tempDir('bks-run-'), 'forever.mjs');
    writeFileSync(script, 'setInterval(() => {}, 1000);\n');
    const runner = startRunner(script, [], {});
    runner.kill('SIGSTOP');
    let ended = false;
    void runner.done.then(() => (ended = true));
    await killLeftoverRunners();
    expect(ended).toBe(true);
    expect(() => process.kill(runner.pid, 0)).toThrow(/ESRCH/);
  });
});
