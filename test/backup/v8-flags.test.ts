import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { scavengeEvery } from '../../src/backup/v8-flags.ts';

/** Minor GCs V8 reports while `fn` runs. */
async function minorGcsDuring(fn: () => void): Promise<number> {
  const entries: PerformanceEntry[] = [];
  const observer = new PerformanceObserver((list) => entries.push(...list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  fn();
  // GC entries are delivered asynchronously.
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  observer.disconnect();
  return entries.filter((e) => ((e as PerformanceEntry & { detail?: { kind?: number } }).detail)?.kind === constants.NODE_PERFORMANCE_GC_MINOR).length;
}

describe('scavengeEvery', () => {
  it('runs one minor GC per threshold of bytes reported, not before', async () => {
    const onBytes = scavengeEvery(1000);
    expect(await minorGcsDuring(() => onBytes(999))).toBe(0);
    expect(await minorGcsDuring(() => onBytes(1))).toBe(1);
    expect(await minorGcsDuring(() => [600, 600, 600, 600].forEach(onBytes))).toBe(2);
  });
});
