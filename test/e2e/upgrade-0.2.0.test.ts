/**
 * The upgrade from release 0.2.0 to this checkout, in the README's two steps (test/e2e/upgrade-0.2.0.ts
 * says each), with 60 schedules on the test API server.
 */
import { beforeAll, describe } from 'vitest';
import { buildBundle } from './harness.ts';
import { runUpgradeFrom020, type Upgrade020Result } from './upgrade-0.2.0.ts';
import { itUpgradedFrom020 } from './upgrade-expectations.ts';

let result: Upgrade020Result;

beforeAll(async () => {
  result = await runUpgradeFrom020({ bundle: await buildBundle(), schedules: 60 });
}, 300_000);

describe('upgrade from 0.2.0 (v1 without destination.type) to the object store API', () => {
  itUpgradedFrom020(() => result);
});
