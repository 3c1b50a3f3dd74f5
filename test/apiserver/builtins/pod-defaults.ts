import { ensureObj, obj, objs, setDefault } from './json.ts';

/**
 * Server-side defaults of a `PodTemplateSpec` (pkg/apis/core/v1/defaults.go plus the fields Go always
 * serializes): `SetDefaults_PodSpec` (dnsPolicy ClusterFirst, restartPolicy Always, securityContext {},
 * terminationGracePeriodSeconds 30, schedulerName default-scheduler), `SetDefaults_Container`
 * (imagePullPolicy Always for `:latest` or untagged images else IfNotPresent, terminationMessagePath
 * /dev/termination-log, terminationMessagePolicy File), ports protocol TCP, `resources: {}`, probe and
 * handler defaults, fieldRef apiVersion v1, volume source defaults (defaultMode 420, emptyDir {} when
 * no source), and `metadata.creationTimestamp: null` as the server writes it. `enableServiceLinks` is
 * only defaulted on Pods, not templates (see test/fixtures/k8s-reference/cronjob-v1beta1-*.json).
 */
export function defaultPodTemplateSpec(template: Record<string, unknown>): void {
  const meta = ensureObj(template, 'metadata');
  if (!('creationTimestamp' in meta)) meta['creationTimestamp'] = null;
  defaultPodSpec(ensureObj(template, 'spec'));
}

/** `SetDefaults_PodSpec` and the defaults of its containers and volumes. */
export function defaultPodSpec(spec: Record<string, unknown>): void {
  for (const volume of objs(spec['volumes'])) defaultVolume(volume);
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const container of objs(spec[key])) defaultContainer(container);
  }
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  if (!obj(spec['securityContext'])) spec['securityContext'] = {};
  setDefault(spec, 'schedulerName', 'default-scheduler');
}

/** The tag `parsers.ParseImageName` finds: `latest` when there is neither tag nor digest. */
export function imageTag(image: string): string {
  const at = image.indexOf('@');
  const name = at >= 0 ? image.slice(0, at) : image;
  const lastSlash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  const tag = colon > lastSlash ? name.slice(colon + 1) : '';
  return tag === '' && at < 0 ? 'latest' : tag;
}

function defaultContainer(c: Record<string, unknown>): void {
  for (const port of objs(c['ports'])) setDefault(port, 'protocol', 'TCP');
  for (const env of objs(c['env'])) {
    const fieldRef = obj(obj(env['valueFrom'])?.['fieldRef']);
    if (fieldRef) setDefault(fieldRef, 'apiVersion', 'v1');
  }
  if (!obj(c['resources'])) c['resources'] = {};
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
    const p = obj(c[probe]);
    if (p) defaultProbe(p);
  }
  const lifecycle = obj(c['lifecycle']);
  for (const hook of ['postStart', 'preStop']) {
    const handler = obj(lifecycle?.[hook]);
    if (handler) defaultHandler(handler);
  }
  setDefault(c, 'terminationMessagePath', '/dev/termination-log');
  setDefault(c, 'terminationMessagePolicy', 'File');
  setDefault(c, 'imagePullPolicy', imageTag(typeof c['image'] === 'string' ? c['image'] : '') === 'latest' ? 'Always' : 'IfNotPresent');
}

/** `SetDefaults_Probe` and the handler defaults (`SetDefaults_HTTPGetAction`). */
function defaultProbe(p: Record<string, unknown>): void {
  defaultHandler(p);
  setDefault(p, 'timeoutSeconds', 1);
  setDefault(p, 'periodSeconds', 10);
  setDefault(p, 'successThreshold', 1);
  setDefault(p, 'failureThreshold', 3);
}

function defaultHandler(h: Record<string, unknown>): void {
  const httpGet = obj(h['httpGet']);
  if (httpGet) {
    setDefault(httpGet, 'path', '/');
    setDefault(httpGet, 'scheme', 'HTTP');
  }
}

const volumeSources = [
  'hostPath', 'emptyDir', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'secret', 'nfs', 'iscsi',
  'glusterfs', 'persistentVolumeClaim', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'downwardAPI', 'fc',
  'azureFile', 'configMap', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'projected',
  'portworxVolume', 'scaleIO', 'storageos', 'csi', 'ephemeral', 'image',
];

/** `SetDefaults_Volume` and the per-source defaults (`defaultMode: 420` = 0644). */
function defaultVolume(v: Record<string, unknown>): void {
  if (!volumeSources.some((source) => v[source] != null)) v['emptyDir'] = {};
  for (const source of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const s = obj(v[source]);
    if (s) setDefault(s, 'defaultMode', 420);
  }
  const hostPath = obj(v['hostPath']);
  if (hostPath) setDefault(hostPath, 'type', '');
}
