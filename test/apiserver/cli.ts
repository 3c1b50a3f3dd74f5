/**
 * Standalone test API server: `npm run apiserver -- --port <p> --kubeconfig <file>` writes an admin
 * kubeconfig and serves until SIGINT/SIGTERM (exit 0). `--drop-field batch/cronjobs:spec.timeZone`
 * (repeatable) behaves like an older server, `--mutate-field batch/cronjobs:spec.suspend=true`
 * (repeatable) like a mutating admission webhook, `--kubernetes-version 1.24.17` changes `/version`.
 * `--help` prints the flags (exit 0); a bad flag prints the problem and the flags (exit 2).
 */
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { startTestApiServer } from './index.ts';

const options = {
  port: { type: 'string', default: '0' },
  host: { type: 'string', default: '127.0.0.1' },
  kubeconfig: { type: 'string' },
  'watch-history-size': { type: 'string' },
  'enforce-owner-reference-permissions': { type: 'boolean', default: false },
  'drop-field': { type: 'string', multiple: true },
  'mutate-field': { type: 'string', multiple: true },
  'kubernetes-version': { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies ParseArgsOptionsConfig;

/** What each flag does, for `--help`; a flag missing here is still listed, with its type. */
const descriptions: Readonly<Record<string, string>> = {
  port: 'TCP port, 0 picks a free one',
  host: 'listen address',
  kubeconfig: 'write an admin kubeconfig (https, CA data, bearer token) to this file',
  'watch-history-size': 'events kept for watch replay; older resourceVersions get 410 Expired',
  'enforce-owner-reference-permissions': 'run the OwnerReferencesPermissionEnforcement admission plugin',
  'drop-field': 'group/resource:field.path dropped on every write, as an older server does (repeatable)',
  'mutate-field': 'group/resource:field.path=json set on every write, as a mutating webhook does (repeatable)',
  'kubernetes-version': 'the version /version reports, e.g. 1.24.17',
  help: 'print this help',
};

function usage(): string {
  const lines = Object.entries(options as ParseArgsOptionsConfig).map(([name, o]) => {
    const flag = `--${name}${o.type === 'string' ? ' <value>' : ''}`;
    const dflt = o.default !== undefined && o.type === 'string' ? ` (default ${String(o.default)})` : '';
    return `  ${flag.padEnd(44)}${descriptions[name] ?? o.type}${dflt}`;
  });
  return ['Usage: npm run apiserver -- [flags]', '', 'Flags:', ...lines].join('\n');
}

let parsed: ReturnType<typeof parseArgs<{ options: typeof options }>>;
try {
  parsed = parseArgs({ options });
} catch (err) {
  console.error(`${err instanceof Error ? err.message : String(err)}\n\n${usage()}`);
  process.exit(2);
}
const { values } = parsed;
if (values.help) {
  console.log(usage());
  process.exit(0);
}
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
