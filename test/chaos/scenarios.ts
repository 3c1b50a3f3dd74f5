/** Every chaos scenario, in table order. */
import { killStorm } from './r1-kill-storm.ts';
import { faultStorm } from './r2-fault-storm.ts';
import { leaderKills } from './r3-leader-kills.ts';
import { apiUnavailable } from './r4-api-unavailable.ts';
import { badInput } from './r5-bad-input.ts';
import type { Scenario } from './scenario.ts';
import { soak } from './soak.ts';

/** The scenarios `npm run chaos` runs, in order. */
export const SCENARIOS: readonly Scenario[] = [killStorm, faultStorm, leaderKills, apiUnavailable, badInput, soak];
