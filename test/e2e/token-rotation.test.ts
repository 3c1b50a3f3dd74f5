/**
 * Bound ServiceAccount tokens expire (1 h by default) and kubelet re-issues the token file before that.
 * The controller must keep working across many expiries: it re-reads the token file, at once after a 401.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle, ControllerProcess, LEASE, startCluster, type Cluster } from './harness.ts';
import { api, scheduleManifest } from './scenarios.ts';

const TOKEN_SECONDS = 3;

let cluster: Cluster;
let controller: ControllerProcess;

beforeAll(async () => {
  const [bundle, started] = await Promise.all([buildBundle(), startCluster({ tokenSeconds: TOKEN_SECONDS })]);
  cluster = started;
  controller = ControllerProcess.start(bundle, [
    '--kubeconfig', cluster.controllerKubeconfig,
    '--leader-elect', `--lease-name=${LEASE.name}`, `--lease-namespace=${LEASE.namespace}`,
  ]);
  await controller.waitForLog('workers to start', (r) => r['msg'] === 'became leader; starting workers');
});

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

describe('a controller whose ServiceAccount token keeps expiring', () => {
  it('keeps leading and reconciling across several token lifetimes', async () => {
    const k = api(cluster.admin);
    await k.createNamespace('rotation');
    for (let i = 0; i < 4; i++) {
      // Each round starts after the previous token expired.
      await new Promise((resolve) => setTimeout(resolve, TOKEN_SECONDS * 1000));
      await k.schedules.create(scheduleManifest('rotation', `round-${i}`) as never);
      await k.waitForReady('rotation', `round-${i}`);
    }
    expect(controller.child.exitCode).toBeNull();
    expect(controller.lines.join('\n')).not.toMatch(/leader election lost/);
  }, 60_000);
});
