/**
 * The reduced, seeded chaos scenarios, part 1: R2 API fault storm, R3 leader kills, R5 bad input and
 * the soak (chaos-outage.test.ts has the others, so the two files take about as long side by side).
 * `npm run chaos` runs them at full size.
 */
import { describe, expect, it } from 'vitest';
import { faultStorm } from './r2-fault-storm.ts';
import { leaderKills } from './r3-leader-kills.ts';
import { badInput } from './r5-bad-input.ts';
import { replayHint, runReduced } from './reduced.ts';
import { soak } from './soak.ts';

describe('chaos (reduced)', () => {
  it.each([
    ['R2: under 409/500/429, dropped watches, 410s and latency, it converges exactly within 3 × the minimal writes', faultStorm],
    ['R3: with the leader SIGKILLed, no process writes without the Lease and the next one takes over once the Lease expired', leaderKills],
    ['R5: invalid schedules end as a 422 or Ready=False naming the field, never a crash or a child', badInput],
    ['Soak: every change gets its child write, and it converges exactly', soak],
  ] as const)('%s', async (_, scenario) => {
    const result = await runReduced(scenario);
    expect(result.failures, replayHint(result)).toEqual([]);
  }, 120_000);
});
