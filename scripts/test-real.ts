/**
 * `npm run test:real [-- <files or folders> <vitest options>]`: the conformance suite and the controller e2e core
 * (test/real/) against a real cluster, never part of `npm test` or CI's required path.
 *
 * The cluster is `CONFORMANCE_KUBECONFIG` (an admin kubeconfig) or else `$REALK8S/admin.kubeconfig`
 * (the local control plane of docs/real-cluster.md). With neither set it says so and exits 0: a
 * machine without a plane skips these runs. The test files themselves read only the explicit
 * variables this script sets (CONFORMANCE_KUBECONFIG, E2E_KUBECONFIG), so `npm test` never writes to a
 * cluster because REALK8S happens to be exported. The upgrade runs last, alone (it reinstalls the CRD). The e2e core runs on the local plane or with an
 * explicit E2E_KUBECONFIG, not on a cluster named only by CONFORMANCE_KUBECONFIG. On the local plane the
 * conversion webhook the suite runs is reachable on loopback, so CONFORMANCE_WEBHOOK_HOST defaults to
 * 127.0.0.1 there.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const plane = process.env['REALK8S'];
const kubeconfig = process.env['CONFORMANCE_KUBECONFIG'] || (plane ? join(plane, 'admin.kubeconfig') : undefined);

if (!kubeconfig) {
  process.stdout.write('test:real: skipped (set REALK8S to a control plane folder, see docs/real-cluster.md, or CONFORMANCE_KUBECONFIG to an admin kubeconfig)\n');
  process.exit(0);
}
if (!existsSync(kubeconfig)) {
  process.stderr.write(`test:real: ${kubeconfig} does not exist (REALK8S=${plane ?? ''}: is the plane built and up? see docs/real-cluster.md)\n`);
  process.exit(2);
}

// The e2e core installs dist/'s cluster-wide objects and leaves them: it runs on the local plane, or
// where E2E_KUBECONFIG asks for it, never on a cluster given only for conformance.
const e2eKubeconfig = process.env['E2E_KUBECONFIG'] || (process.env['CONFORMANCE_KUBECONFIG'] ? undefined : kubeconfig);
const env: NodeJS.ProcessEnv = { ...process.env, CONFORMANCE_KUBECONFIG: kubeconfig, ...(e2eKubeconfig ? { E2E_KUBECONFIG: e2eKubeconfig } : {}) };
if (!process.env['CONFORMANCE_KUBECONFIG'] && plane && !env['CONFORMANCE_WEBHOOK_HOST']) env['CONFORMANCE_WEBHOOK_HOST'] = '127.0.0.1';
// The plane's etcd (its up.sh listens there): the upgrade reads what is stored from it.
if (!process.env['E2E_KUBECONFIG'] && !process.env['CONFORMANCE_KUBECONFIG'] && plane && !env['E2E_ETCD']) env['E2E_ETCD'] = 'http://127.0.0.1:12379';
// Options (`--reporter=json`, `-t name`) pass through to vitest; other arguments narrow the files, which
// are the real-cluster suites otherwise (never the whole repository's).
const extra = process.argv.slice(2);
const options: string[] = [];
const filters: string[] = [];
for (let i = 0; i < extra.length; i++) {
  const a = extra[i] ?? '';
  if (!a.startsWith('-')) filters.push(a);
  else if (a.includes('=') || !['-t', '--testNamePattern', '--outputFile'].includes(a)) options.push(a);
  else options.push(a, extra[++i] ?? '');
}
// The upgrade (test/real/upgrade.test.ts) deletes and reinstalls the BackupSchedule CRD: it runs after
// the other suites, alone, never beside the e2e core that uses that CRD.
const UPGRADE = 'test/real/upgrade.test.ts';
const asked = filters.length > 0 ? filters : ['test/conformance', 'test/real'];
const others = asked.filter((f) => f !== UPGRADE);
const runs = [...(others.length > 0 ? [[...others, `--exclude=${UPGRADE}`]] : []), ...(asked.some((f) => UPGRADE.startsWith(f.replace(/\/$/, ''))) ? [[UPGRADE]] : [])];
const vitest = (files: readonly string[]): Promise<number> => {
  const args = [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...files, '--reporter=default', `--reporter=${join(root, 'test', 'conformance', 'version-gate-reporter.ts')}`, ...options];
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: 'inherit' });
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
};
process.stdout.write(`test:real: against ${kubeconfig}\n`);
let failed = 0;
for (const files of runs) failed ||= await vitest(files);
process.exit(failed);
