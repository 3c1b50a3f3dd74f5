import { stringify as toYaml } from 'yaml';

/** How a kubeconfig's user authenticates: a bearer token, or a file holding one (re-read by clients). */
export type KubeconfigCredential = { readonly token: string } | { readonly tokenFile: string };

/**
 * A kubeconfig (YAML) for the test API server at `httpsUrl`, trusting `caPem`, as `user` with
 * `credential`, optionally with a default `namespace`. Shared by the in-process server and the harness
 * of the server run as its own process, so both hand out the same files.
 */
export function kubeconfigYaml(httpsUrl: string, caPem: string, user: string, credential: KubeconfigCredential, namespace?: string): string {
  return toYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test-apiserver', cluster: { server: httpsUrl, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name: user, user: 'tokenFile' in credential ? { tokenFile: credential.tokenFile } : { token: credential.token } }],
    contexts: [{ name: 'test-apiserver', context: { cluster: 'test-apiserver', user, ...(namespace ? { namespace } : {}) } }],
    'current-context': 'test-apiserver',
  });
}
