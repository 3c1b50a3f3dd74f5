/**
 * The reduced, seeded chaos scenarios, part 2: R4 API unavailable and R1 kill -9 storm.
 * `npm run chaos` runs them at full size.
 */
import { describe, expect, it } from 'vitest';
import { killStorm } from './r1-kill-storm.ts';
import { apiUnavailable } from './r4-api-unavailable.ts';
import { replayHint, runReduced } from './reduced.ts';

describe('chaos (reduced)', () => {
  it.each([
    ['R4: while the API hangs and then refuses connections, /readyz fails and the leader gives up the Lease and pauses; afterwards a replica leads again and work resumes with nothing lost, duplicated or exited', apiUnavailable],
    ['R1: SIGKILLed during convergence, it still converges to one controlled child per schedule and then idles', killStorm],
  ] as const)('%s', async (_, scenario) => {
    const result = await runReduced(scenario);
    expect(result.failures, replayHint(result)).toEqual([]);
  }, 120_000);
});
