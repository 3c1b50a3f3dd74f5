import { Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { LeaderLease } from '../../src/manifests/index.ts';

describe('LeaderLease', () => {
  it('ships the Lease with an empty spec so GitOps never owns the holder fields', () => {
    const chart = Testing.chart();
    new LeaderLease(chart, 'Lease', { name: 'op-leader', namespace: 'op-system' });
    const objects = Testing.synth(chart);
    expect(objects).toMatchSnapshot();
    expect(objects).toEqual([
      expect.objectContaining({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', spec: {}, metadata: expect.objectContaining({ name: 'op-leader', namespace: 'op-system' }) }),
    ]);
  });
});
