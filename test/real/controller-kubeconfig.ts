/**
 * A kubeconfig that authenticates as dist/'s ServiceAccount on a real cluster: a fresh TokenRequest
 * token in a token file, as a projected token reaches a Pod, so the controller runs with dist/'s RBAC.
 * Shared by the e2e core (test/real/) and `bench:convergence --kubeconfig`.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { must, type ApiClient } from '../conformance/harness.ts';
import { CONTROLLER_SA } from '../e2e/harness.ts';

/** Writes `controller.token` and `controller.kubeconfig` into `dir` from the admin's kubeconfig text; returns the kubeconfig's path. */
export async function writeControllerKubeconfig(api: ApiClient, adminKubeconfigText: string, dir: string): Promise<string> {
  const tokenFile = join(dir, 'controller.token');
  const path = `/api/v1/namespaces/${CONTROLLER_SA.namespace}/serviceaccounts/${CONTROLLER_SA.name}/token`;
  const issued = must(await api.post(path, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } }), 201);
  // Renamed into place, so a controller reading the file never sees half a token.
  writeFileSync(`${tokenFile}.new`, String((issued['status'] as { token: string }).token));
  renameSync(`${tokenFile}.new`, tokenFile);
  const config = parse(adminKubeconfigText) as { users: { name: string; user: Record<string, unknown> }[]; contexts: { context: { user: string } }[] };
  config.users = [{ name: CONTROLLER_SA.name, user: { tokenFile } }];
  for (const c of config.contexts) c.context.user = CONTROLLER_SA.name;
  const file = join(dir, 'controller.kubeconfig');
  writeFileSync(file, stringify(config));
  return file;
}
