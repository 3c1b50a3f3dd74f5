/**
 * Standalone test API server: `npm run apiserver -- --port <p> --kubeconfig <file>` writes an admin
 * kubeconfig and serves until SIGINT/SIGTERM (exit 0). `--drop-field batch/cronjobs:spec.timeZone`
 * (repeatable) behaves like an older server, `--mutate-field batch/cronjobs:spec.suspend=true`
 * (repeatable) like a mutating admission webhook, `--kubernetes-version 1.24.17` changes `/version`.
 */
import { parseArgs } from 'node:util';
import { startTestApiServer } from './index.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    kubeconfig: { type: 'string' },
    'watch-history-size': { type: 'string' },
    'enforce-owner-reference-permissions': { type: 'boolean', default: false },
    'drop-field': { type: 'string', multiple: true },
    'mutate-field': { type: 'string', multiple: true },
    'kubernetes-version': { type: 'string' },
  },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port must be an integer in 0..65535, got "${values.port}"`);
  process.exit(2);
}
let server;
try {
  server = await startTestApiServer({
    port,
    host: values.host,
    ...(values['watch-history-size'] ? { watchHistorySize: Number(values['watch-history-size']) } : {}),
    enforceOwnerReferencePermissions: values['enforce-owner-reference-permissions'],
    dropFields: values['drop-field'] ?? [],
    mutateFields: values['mutate-field'] ?? [],
    ...(values['kubernetes-version'] ? { kubernetesVersion: values['kubernetes-version'] } : {}),
  });
} catch (err) {
  console.error(`error: ${(err as Error).message}`);
  process.exit(2);
}
if (values.kubeconfig) await server.writeKubeconfig(values.kubeconfig);
console.log(`test API server listening on ${server.url}${values.kubeconfig ? `; kubeconfig written to ${values.kubeconfig}` : ''}`);
const shutdown = (): void => {
  void server.stop().then(() => process.exit(0));
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
