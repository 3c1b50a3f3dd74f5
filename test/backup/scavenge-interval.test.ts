/**
 * How often the runner forces a scavenge, by source (src/backup/main.ts). Apart from v8-flags.test.ts:
 * importing the runner's entry loads gRPC and the rest, and the GCs that starts would disturb that
 * file's count of minor GCs.
 */
import { describe, expect, it } from 'vitest';
import { FLOW_CONTROL_WINDOW } from '../../src/backup/etcd-snapshot.ts';
import { WRITE_BATCH_BYTES } from '../../src/backup/file-sink.ts';
import { scavengeIntervalBytes } from '../../src/backup/main.ts';

describe('scavengeIntervalBytes', () => {
  it('scavenges a plain etcd snapshot once per HTTP/2 receive window, never twice over the same chunks in flight', () => {
    // A window of chunks is in flight (received, not yet written) at any time; a shorter interval only
    // copies them again (211 MB at 1 MiB: 200 scavenges, 8 full GCs, peak RSS up to 100 MiB).
    expect(scavengeIntervalBytes('etcd', false)).toBeGreaterThanOrEqual(FLOW_CONTROL_WINDOW);
    // Still often enough for dead chunks to be freed within a few write batches (the RSS bound).
    expect(scavengeIntervalBytes('etcd', false)).toBeLessThanOrEqual(FLOW_CONTROL_WINDOW + WRITE_BATCH_BYTES);
  });

  it('scavenges every 1 MiB a volume archive (peak RSS 97 MiB at 4 MiB, 87-89 at 1 MiB) and whatever goes through the encode pipeline', () => {
    expect(scavengeIntervalBytes('pvc', false)).toBe(1 << 20);
    expect(scavengeIntervalBytes('pvc', true)).toBe(1 << 20);
    expect(scavengeIntervalBytes('etcd', true)).toBe(1 << 20);
  });
});
