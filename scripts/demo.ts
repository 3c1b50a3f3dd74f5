/**
 * `npm run demo`: the whole operator without a cluster. Starts the test API server, applies dist/ then
 * dist/examples/ (RBAC enforced), starts the controller bundle as its own process with its ServiceAccount's token,
 * waits until the example `kubelings/nightly-etcd` is Ready, prints what kubectl shows, and keeps
 * running so you can explore with kubectl, until Ctrl-C: the controller's token file is re-issued
 * before it expires, as kubelet does. A controller that crashes leaves its log behind.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleController, DEFAULT_BUNDLE } from './bundle.ts';
import { ControllerProcess, LEASE, startCluster, WEBHOOK_FLAG } from '../test/e2e/harness.ts';
import { api, readyOf } from '../test/e2e/scenarios.ts';

const started = performance.now();
process.stdout.write('Starting the test API server and applying dist/ and dist/examples/ ...\n');
const [cluster] = await Promise.all([startCluster({ examples: true }), bundleController({ outfile: DEFAULT_BUNDLE })]);
// Outside the cluster's directory, which stop() removes: a crashed controller's log must survive it.
const logDir = mkdtempSync(join(tmpdir(), 'backupschedule-demo-'));
const logPath = join(logDir, 'controller.log');
const controller = ControllerProcess.start(DEFAULT_BUNDLE, [
  '--kubeconfig', cluster.controllerKubeconfig,
  '--leader-elect', `--lease-name=${LEASE.name}`, `--lease-namespace=${LEASE.namespace}`,
  '--log-level=info',
  WEBHOOK_FLAG,
]);
// As the Service of dist/ routes kube-apiserver to a replica: v1alpha1 requests are converted by it.
void cluster.routeWebhookTo(controller).catch(() => undefined);
const log = createWriteStream(logPath);
controller.child.stdout?.pipe(log);
controller.child.stderr?.pipe(log);

let stopping = false;
async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    process.stdout.write('\nStopping the controller and the API server ...\n');
    const exit = await controller.stop();
    await new Promise((resolve) => log.end(resolve));
    await cluster.stop();
    if (code === 0) rmSync(logDir, { recursive: true, force: true });
    else process.stdout.write(`The controller's log is kept: ${logPath}\n`);
    process.stdout.write(`Controller exited with ${exit}. Bye.\n`);
  }
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
void controller.exited().then((exit) => {
  if (!stopping) {
    process.stderr.write(`The controller exited unexpectedly (${exit}); its log: ${logPath}\n${controller.lines.slice(-20).join('\n')}\n`);
    void stop(1);
  }
});

try {
  const k = api(cluster.admin);
  const schedule = await k.waitForReady('kubelings', 'nightly-etcd', (s) => readyOf(s)?.status === 'True', 30_000);
  process.stdout.write(`nightly-etcd is Ready (${readyOf(schedule)?.reason}) after ${Math.round(performance.now() - started)} ms.\n\n`);
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n${controller.lines.slice(-20).join('\n')}\n`);
  await stop(1);
}

process.stdout.write('$ kubectl get backupschedules,cronjobs -A\n');
try {
  // Asynchronously: the API server runs in this process and must keep answering while kubectl waits.
  const { stdout } = await promisify(execFile)('kubectl', ['--kubeconfig', cluster.adminKubeconfig, 'get', 'backupschedules,cronjobs', '-A'], { encoding: 'utf8', timeout: 30_000 });
  process.stdout.write(stdout);
} catch (err) {
  process.stdout.write(`(kubectl failed: ${(err as Error).message})\n`);
}
process.stdout.write(`
Explore with kubectl (admin):
  export KUBECONFIG=${cluster.adminKubeconfig}
  kubectl describe backupschedule -n kubelings nightly-etcd
  kubectl get cronjob -n kubelings nightly-etcd -o yaml
The controller's own kubeconfig (its ServiceAccount token): ${cluster.controllerKubeconfig}
Controller log: ${logPath}
Press Ctrl-C to stop.
`);
// Keep the event loop alive until a signal arrives.
setInterval(() => {}, 1 << 30);
