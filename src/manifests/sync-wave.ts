/** Argo CD applies lower waves first; Flux applies CRDs and Namespaces first on its own. */
export const SYNC_WAVE_ANNOTATION = 'argocd.argoproj.io/sync-wave';

/** The waves used by the app: namespaces, then the CRD, then RBAC/Lease, then the Deployment, then examples. */
export const SyncWave = {
  namespace: '-2',
  crd: '-1',
  rbac: '0',
  controller: '1',
  example: '2',
} as const;

/** `{ 'argocd.argoproj.io/sync-wave': wave }`. */
export function syncWave(wave: (typeof SyncWave)[keyof typeof SyncWave]): Record<string, string> {
  return { [SYNC_WAVE_ANNOTATION]: wave };
}
