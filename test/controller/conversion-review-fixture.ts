/** A ConversionReview as kube-apiserver sends it: one v1alpha1 BackupSchedule to convert to v1. */
export function conversionReview(uid: string) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: {
      uid,
      desiredAPIVersion: 'kubelings.dev/v1',
      objects: [{
        apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', metadata: { name: 'nightly', namespace: 'team-a', uid: 'u1' },
        spec: { schedule: '@daily', source: { etcd: { endpoints: ['https://e:2379'] } }, destination: { persistentVolumeClaim: { claimName: 'b' } }, retention: { keepLast: 7 } },
      }],
    },
  };
}
