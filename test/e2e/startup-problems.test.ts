/** Start-up problems a user can fix are said plainly: a busy port, a Lease that is not there. */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle, ControllerProcess, LEASE, startCluster, waitFor, type Cluster } from './harness.ts';
import { previousReleaseDocuments } from './upgrade.ts';

let bundle: string;
let cluster: Cluster;
const started: ControllerProcess[] = [];

beforeAll(async () => {
  // The cluster lacks the Lease that dist/ ships.
  [bundle, cluster] = await Promise.all([buildBundle(), startCluster({ filter: (doc) => doc.kind !== 'Lease' })]);
});

afterAll(async () => {
  await Promise.all(started.map((c) => c.stop()));
  await cluster?.stop();
});

function controller(args: readonly string[]): ControllerProcess {
  const c = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, ...args]);
  started.push(c);
  return c;
}

describe('start-up problems', () => {
  it('exits 1 naming the flag when the metrics port is taken, without a stack trace', async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const c = controller([`--metrics-bind-address=127.0.0.1:${port}`]);
      expect(await c.exited()).toBe(1);
      const fatal = c.records().find((r) => r['level'] === 'fatal');
      expect(fatal?.['msg']).toBe(`cannot start: --metrics-bind-address: cannot listen on 127.0.0.1:${port}: the address is already in use`);
      expect(c.lines.join('\n')).not.toMatch(/^\s+at /m);
    } finally {
      busy.close();
    }
  });

  it('is not ready while the Lease it must take is missing, and /readyz says why', async () => {
    const c = controller(['--leader-elect', `--lease-name=${LEASE.name}`, `--lease-namespace=${LEASE.namespace}`]);
    const startLog = await c.waitForLog('the start line', (r) => r['msg'] === 'starting');
    const health = String(startLog['health']);
    const body = await waitFor('/readyz to name the Lease', async () => {
      const res = await fetch(`${health}/readyz?verbose`);
      const text = await res.text();
      return res.status === 500 && text.includes('not found') ? text : undefined;
    });
    expect(body).toContain(`cannot read Lease ${LEASE.namespace}/${LEASE.name}`);
    expect(c.child.exitCode).toBeNull();
  });
});

describe('a controller of this release against the CRD of the previous one', () => {
  it('says the CRD does not serve v1 and what to apply, and keeps trying', async () => {
    const old = await startCluster({ documents: previousReleaseDocuments() });
    try {
      const c = ControllerProcess.start(bundle, ['--kubeconfig', old.controllerKubeconfig]);
      started.push(c);
      const error = await c.waitForLog('the served-version error', (r) => r['level'] === 'error' && String(r['msg']).startsWith('the API server does not serve'));
      expect(error['msg']).toBe('the API server does not serve kubelings.dev/v1, the version this controller reads: apply this release\'s CRD (dist/, before the Deployment; README "Upgrading")');
      expect(c.child.exitCode).toBeNull();
    } finally {
      await old.stop();
    }
  });
});
