/**
 * The image as a container (umoci unpack, runc run as root), run from dist/'s Deployment as kubelet
 * would: uid 65532, read-only root file system, every capability dropped, no privilege escalation, the
 * ServiceAccount's token, CA and namespace mounted where a Pod gets them and the in-cluster environment,
 * the host's loopback (the test API server) reachable. It prints its release, reconciles the example
 * BackupSchedule of dist/examples/ into its child CronJob, serves /readyz, /metrics and the conversion
 * webhook, and stops cleanly on SIGTERM.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childName } from '../../src/pure/index.ts';
import { OPERATOR_VERSION } from '../../src/pure/image.ts';
import { ControllerProcess, startCluster, waitFor, type Cluster } from '../e2e/harness.ts';
import { api } from '../e2e/scenarios.ts';
import { Container, removeContainers, runToEnd, type PodEnvironment } from './container.ts';
import { controllerEnvironment, deploymentPod } from './controller-pod.ts';
import { sharedImage, type SharedImage } from './shared-image.ts';

/** The first line of the node script's output, parsed. */
const json = (stdout: string): Record<string, unknown> => JSON.parse(stdout.trim().split('\n')[0] ?? '{}') as Record<string, unknown>;

/** `promise`, or a failure with the container's log as soon as the container exits. */
async function whileRunning<T>(running: Container, promise: Promise<T>): Promise<T> {
  const exited = running.exited().then((code) => {
    throw new Error(`the container exited with ${code} first:\n${running.stdout.slice(-4000)}${running.stderr.slice(-2000)}`);
  });
  return Promise.race([promise, exited]);
}

let image: SharedImage;
let cluster: Cluster;
let environment: PodEnvironment;
let controller: ControllerProcess | undefined;
let container: Container | undefined;

beforeAll(async () => {
  [image, cluster] = await Promise.all([sharedImage(), startCluster({ examples: true })]);
  environment = await controllerEnvironment(cluster);
}, 15 * 60_000);

afterAll(async () => {
  await container?.stop();
  await removeContainers();
  await cluster?.stop();
});

describe('the image as a container', () => {
  it('prints its release with --version', async () => {
    const { pod, container: spec } = deploymentPod();
    const result = await runToEnd(image, pod, spec, { ...environment, args: ['--version'] });
    expect(result).toMatchObject({ code: 0, stdout: `backupschedule-operator ${OPERATOR_VERSION}\n` });
  });

  it('runs as uid 65532 with no capabilities on a read-only root file system, and holds no shell or package manager', async () => {
    const { pod, container: spec } = deploymentPod();
    const script = `
      const fs = require('node:fs');
      const status = fs.readFileSync('/proc/self/status', 'utf8');
      const cap = (name) => status.match(new RegExp(name + ':\\\\s+(\\\\w+)'))[1];
      let write; try { fs.writeFileSync('/app/probe', 'x'); write = 'written'; } catch (e) { write = e.code; }
      let tmp; try { fs.writeFileSync('/tmp/probe', 'x'); tmp = 'written'; } catch (e) { tmp = e.code; }
      console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), capEff: cap('CapEff'), capBnd: cap('CapBnd'), capPrm: cap('CapPrm'), noNewPrivs: cap('NoNewPrivs'), write, tmp }));`;
    const result = await runToEnd(image, pod, spec, { ...environment, command: ['/nodejs/bin/node', '-e', script], args: [] });
    expect(result.code).toBe(0);
    expect(json(result.stdout)).toEqual({ uid: 65532, gid: 65532, capEff: '0000000000000000', capBnd: '0000000000000000', capPrm: '0000000000000000', noNewPrivs: '1', write: 'EROFS', tmp: 'written' });
    const rootfs = join(image.bundle, 'rootfs');
    const programs = ['bin', 'sbin', 'usr/bin', 'usr/sbin'].flatMap((d) => readdirSync(join(rootfs, d)));
    expect(programs.filter((p) => /^(sh|bash|dash|ash|busybox|apt|apt-get|dpkg|su|sudo)$/.test(p))).toEqual([]);
  });

  it('reconciles the example of dist/examples/ into its CronJob and serves /readyz, /metrics and the conversion webhook', async () => {
    const { pod, container: spec } = deploymentPod();
    container = Container.start(image, pod, spec, environment);
    controller = ControllerProcess.attach(container.child);
    const k = api(cluster.admin);
    const child = await whileRunning(container, k.waitForCronJob('kubelings', childName({ metadata: { name: 'nightly-etcd' } } as never), () => true, 60_000));
    expect(child.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'BackupSchedule', name: 'nightly-etcd', controller: true });
    await k.waitForReady('kubelings', 'nightly-etcd', undefined, 60_000);

    const started = await controller.waitForLog('the health server', (r) => r['msg'] === 'starting');
    const [health, metrics] = [String(started['health']), String(started['metrics'])];
    await waitFor('/readyz 200', () => fetch(`${health}/readyz`).then((r) => r.ok, () => false), 60_000);
    const text = await (await fetch(`${metrics}/metrics`)).text();
    expect(text).toMatch(/^controller_runtime_reconcile_total\{controller="backupschedule",result="success"\} [1-9]/m);

    // The API server converts a v1alpha1 read through the webhook in the container.
    await cluster.routeWebhookTo(controller);
    const legacy = await k.schedulesV1alpha1.get({ namespace: 'kubelings', name: 'nightly-etcd' });
    expect(legacy.apiVersion).toBe('kubelings.dev/v1alpha1');
    expect(legacy.spec.retention).toEqual(expect.objectContaining({ keepLast: expect.any(Number) }));

    expect(await container.stop()).toBe(0);
    expect(controller.records().some((r) => r['level'] === 'fatal' || r['level'] === 60)).toBe(false);
  }, 180_000);
});
