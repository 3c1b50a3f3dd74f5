/**
 * One tenant's flood of Events does not silence another's (issue 41, LOW 6). A tenant creates 600
 * BackupSchedules naming an image the operator does not allow, each of which gets a Warning Event
 * `ImageNotAllowed`; then another tenant creates one such schedule. The Event budget used to be
 * global: the flood spent it and the second tenant's Warning was dropped. Now each namespace has its
 * own share of the backlog and namespaces take turns (src/controller/event-recorder.ts), so the second
 * tenant's Warning is written. The controller bundle runs as its own process with dist/'s RBAC.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle, ControllerProcess, startCluster, waitFor, type Cluster } from './harness.ts';
import { api, createAll, readyOf, scheduleManifest } from './scenarios.ts';

const FLOOD = 600;
const IMAGE = 'evil.example.com/backup:1';

let cluster: Cluster;
let controller: ControllerProcess;
let k: ReturnType<typeof api>;

beforeAll(async () => {
  let bundle: string;
  [bundle, cluster] = await Promise.all([buildBundle(), startCluster()]);
  k = api(cluster.admin);
  await k.createNamespace('flood');
  await k.createNamespace('quiet');
  controller = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, '--log-level=info']);
  await controller.waitForLog('workers to start', (r) => r['msg'] === 'starting workers', 60_000);
}, 120_000);

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

describe('Events under a flood from one namespace', () => {
  it(`writes another tenant's Warning while one tenant's ${FLOOD} refused schedules flood the budget`, async () => {
    const t0 = Date.now();
    await controller.whileAlive('the flood', () => createAll(FLOOD, (i) => k.schedules.create(scheduleManifest('flood', `s-${i}`, { image: IMAGE }) as never)));
    await k.schedules.create(scheduleManifest('quiet', 'mine', { image: IMAGE }) as never);
    await k.waitForReady('quiet', 'mine', (s) => readyOf(s)?.reason === 'ImageNotAllowed', 120_000);
    const warning = await controller.whileAlive('the quiet tenant\'s Warning', () =>
      waitFor('the ImageNotAllowed Warning of quiet/mine', async () => (await k.events('quiet', 'mine')).find((e) => e.type === 'Warning' && e.reason === 'ImageNotAllowed'), 90_000, 500),
    );
    console.info(`the quiet tenant's Warning was written ${Date.now() - t0} ms after the flood began`);
    expect(warning.message).toContain(IMAGE);
    const flooded = (await cluster.admin.request<{ items: unknown[] }>('GET', '/api/v1/namespaces/flood/events')).items.length;
    console.info(`${flooded} of the flooding tenant's ${FLOOD} Events written by then`);
  }, 240_000);
});
