import type { KubeObject } from '../../../src/kube/object.ts';
import { ensureObj, obj } from './json.ts';

/**
 * What the Job create strategy (`jobStrategy.PrepareForCreate` → `generateSelector`) does before
 * validation: unless `spec.manualSelector` is true, it labels the pod template with the Job's uid and
 * name (`batch.kubernetes.io/controller-uid`, `batch.kubernetes.io/job-name` and the legacy
 * `controller-uid`, `job-name`) and sets `spec.selector` to match the uid. Needs `metadata.uid`, so
 * the server calls it after assigning one; a Job without uid is left alone.
 */
export function prepareJobForCreate(job: KubeObject): void {
  const uid = job.metadata.uid;
  const name = job.metadata.name ?? '';
  const spec = ensureObj(job, 'spec');
  if (!uid || spec['manualSelector'] === true) return;
  const meta = ensureObj(ensureObj(spec, 'template'), 'metadata');
  const labels = { ...(obj(meta['labels']) as Record<string, string> | undefined) };
  labels['batch.kubernetes.io/controller-uid'] ??= uid;
  labels['batch.kubernetes.io/job-name'] ??= name;
  labels['controller-uid'] ??= uid;
  labels['job-name'] ??= name;
  meta['labels'] = labels;
  if (spec['selector'] == null) spec['selector'] = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
}
