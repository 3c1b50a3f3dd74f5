/**
 * Vitest global setup: one scratch folder for the whole run (`BKS_TEST_TMP`, inherited by the test
 * workers), removed at the end. Worker processes are ended by the pool, so their own exit hooks do not
 * run; what they leave in this folder (controller bundles) goes with it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'bks-test-'));
  process.env['BKS_TEST_TMP'] = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
