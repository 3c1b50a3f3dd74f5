import type { KubeObject } from '../../src/kube/object.ts';
import { ageOf } from './human-duration.ts';

/** A `meta.k8s.io/v1` TableColumnDefinition. */
export interface ColumnDefinition {
  readonly name: string;
  readonly type: string;
  readonly format: string;
  readonly description: string;
  readonly priority: number;
}

/** Columns and a row function for one built-in kind (pkg/printers/internalversion/printers.go). */
export interface BuiltinPrinter {
  readonly columns: readonly ColumnDefinition[];
  readonly row: (obj: KubeObject, nowMs: number) => unknown[];
}

export const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: http://kubernetes.io/docs/user-guide/identifiers#names';
const AGE_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

function col(name: string, type: string, description: string, priority = 0, format = ''): ColumnDefinition {
  return { name, type, format, description, priority };
}
const NAME = col('Name', 'string', NAME_DESCRIPTION, 0, 'name');
const AGE = col('Age', 'string', AGE_DESCRIPTION);

type Obj = Record<string, unknown>;
function at(obj: unknown, ...path: string[]): unknown {
  let cur = obj;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Obj)[p];
  }
  return cur;
}
function age(obj: KubeObject, now: number): string {
  return ageOf(obj.metadata.creationTimestamp, now);
}
function containers(podSpec: unknown): { names: string; images: string } {
  const list = (at(podSpec, 'containers') as Obj[] | undefined) ?? [];
  return { names: list.map((c) => String(c['name'] ?? '')).join(','), images: list.map((c) => String(c['image'] ?? '')).join(',') };
}
function selectorString(sel: unknown): string {
  const labels = (at(sel, 'matchLabels') as Record<string, string> | undefined) ?? {};
  const parts = Object.keys(labels).sort().map((k) => `${k}=${labels[k]}`);
  return parts.length ? parts.join(',') : '<none>';
}
function subjects(obj: KubeObject, kind: string): string {
  const subs = ((obj['subjects'] as Obj[] | undefined) ?? []).filter((s) => s['kind'] === kind);
  return subs.map((s) => (kind === 'ServiceAccount' ? `${String(s['namespace'] ?? '')}/${String(s['name'] ?? '')}` : String(s['name'] ?? ''))).join(', ');
}

const CREATED_AT = col('Created At', 'date', 'Creation timestamp of the object');
const createdAt: BuiltinPrinter = { columns: [NAME, CREATED_AT], row: (o) => [o.metadata.name, o.metadata.creationTimestamp] };
const bindingPrinter: BuiltinPrinter = {
  columns: [NAME, col('Role', 'string', 'Role'), AGE, col('Users', 'string', 'Users in the binding', 1), col('Groups', 'string', 'Groups in the binding', 1), col('ServiceAccounts', 'string', 'ServiceAccounts in the binding', 1)],
  row: (o, now) => [o.metadata.name, `${String(at(o, 'roleRef', 'kind') ?? '')}/${String(at(o, 'roleRef', 'name') ?? '')}`, age(o, now), subjects(o, 'User'), subjects(o, 'Group'), subjects(o, 'ServiceAccount')],
};
const eventPrinter: BuiltinPrinter = {
  columns: [col('Last Seen', 'string', 'Time since the most recent occurrence'), col('Type', 'string', 'Type of this event'), col('Reason', 'string', 'Short, machine understandable string'), col('Object', 'string', 'Object this event is about'), col('Message', 'string', 'A human-readable description of the status of this operation')],
  row: (o, now) => {
    const ref = (at(o, 'involvedObject') ?? at(o, 'regarding')) as Obj | undefined;
    const last = at(o, 'lastTimestamp') ?? at(o, 'eventTime') ?? at(o, 'deprecatedLastTimestamp') ?? o.metadata.creationTimestamp;
    return [ageOf(last, now), at(o, 'type') ?? '', at(o, 'reason') ?? '', `${String(ref?.['kind'] ?? '').toLowerCase()}/${String(ref?.['name'] ?? '')}`, at(o, 'message') ?? at(o, 'note') ?? ''];
  },
};

/** Printers of the built-in kinds, by `group/resource`. Kinds without one get Name + Created At. */
export const BUILTIN_PRINTERS: Record<string, BuiltinPrinter> = {
  '/namespaces': { columns: [NAME, col('Status', 'string', 'The status of the namespace'), AGE], row: (o, now) => [o.metadata.name, at(o, 'status', 'phase') ?? '', age(o, now)] },
  '/serviceaccounts': { columns: [NAME, col('Secrets', 'string', 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.'), AGE], row: (o, now) => [o.metadata.name, ((o['secrets'] as unknown[] | undefined) ?? []).length, age(o, now)] },
  '/configmaps': { columns: [NAME, col('Data', 'string', 'Data contains the configuration data.'), AGE], row: (o, now) => [o.metadata.name, Object.keys((o['data'] as Obj | undefined) ?? {}).length + Object.keys((o['binaryData'] as Obj | undefined) ?? {}).length, age(o, now)] },
  '/secrets': { columns: [NAME, col('Type', 'string', 'The type of the secret'), col('Data', 'string', 'The number of data items'), AGE], row: (o, now) => [o.metadata.name, o['type'] ?? 'Opaque', Object.keys((o['data'] as Obj | undefined) ?? {}).length, age(o, now)] },
  '/events': eventPrinter,
  'events.k8s.io/events': eventPrinter,
  'batch/cronjobs': {
    columns: [
      NAME,
      col('Schedule', 'string', 'The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.'),
      col('Timezone', 'string', 'The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.'),
      col('Suspend', 'boolean', 'This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.'),
      col('Active', 'integer', 'A list of pointers to currently running jobs.'),
      col('Last Schedule', 'string', 'Information when was the last time the job was successfully scheduled.'),
      AGE,
      col('Containers', 'string', 'Names of each container in the template.', 1),
      col('Images', 'string', 'Images referenced by each container in the template.', 1),
      col('Selector', 'string', 'A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors', 1),
    ],
    row: (o, now) => {
      const c = containers(at(o, 'spec', 'jobTemplate', 'spec', 'template', 'spec'));
      const last = at(o, 'status', 'lastScheduleTime');
      return [
        o.metadata.name, at(o, 'spec', 'schedule') ?? '', at(o, 'spec', 'timeZone') ?? '<none>', at(o, 'spec', 'suspend') === true ? 'True' : 'False',
        ((at(o, 'status', 'active') as unknown[] | undefined) ?? []).length, last ? ageOf(last, now) : '<none>', age(o, now),
        c.names, c.images, selectorString(at(o, 'spec', 'jobTemplate', 'spec', 'selector')),
      ];
    },
  },
  'batch/jobs': {
    columns: [NAME, col('Status', 'string', 'Status of the job.'), col('Completions', 'string', 'The desired number of successfully finished pods the job should be run with.'), col('Duration', 'string', 'Time required to complete the job.'), AGE, col('Containers', 'string', 'Names of each container in the template.', 1), col('Images', 'string', 'Images referenced by each container in the template.', 1), col('Selector', 'string', 'A label query over pods that should match the pod count.', 1)],
    row: (o, now) => {
      const c = containers(at(o, 'spec', 'template', 'spec'));
      const conds = (at(o, 'status', 'conditions') as Obj[] | undefined) ?? [];
      const status = conds.find((x) => x['type'] === 'Complete' && x['status'] === 'True') ? 'Complete' : conds.find((x) => x['type'] === 'Failed' && x['status'] === 'True') ? 'Failed' : at(o, 'spec', 'suspend') === true ? 'Suspended' : 'Running';
      const start = at(o, 'status', 'startTime');
      const end = at(o, 'status', 'completionTime');
      const duration = typeof start === 'string' ? ageOf(start, typeof end === 'string' ? Date.parse(end) : now) : '';
      return [o.metadata.name, status, `${Number(at(o, 'status', 'succeeded') ?? 0)}/${Number(at(o, 'spec', 'completions') ?? 1)}`, duration, age(o, now), c.names, c.images, selectorString(at(o, 'spec', 'selector'))];
    },
  },
  'apps/deployments': {
    columns: [NAME, col('Ready', 'string', 'Number of the pod with ready state'), col('Up-to-date', 'string', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.'), col('Available', 'string', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.'), AGE, col('Containers', 'string', 'Names of each container in the template.', 1), col('Images', 'string', 'Images referenced by each container in the template.', 1), col('Selector', 'string', 'Label selector for pods.', 1)],
    row: (o, now) => {
      const c = containers(at(o, 'spec', 'template', 'spec'));
      return [o.metadata.name, `${Number(at(o, 'status', 'readyReplicas') ?? 0)}/${Number(at(o, 'spec', 'replicas') ?? 1)}`, Number(at(o, 'status', 'updatedReplicas') ?? 0), Number(at(o, 'status', 'availableReplicas') ?? 0), age(o, now), c.names, c.images, selectorString(at(o, 'spec', 'selector'))];
    },
  },
  'coordination.k8s.io/leases': { columns: [NAME, col('Holder', 'string', 'The holder of the lease'), AGE], row: (o, now) => [o.metadata.name, at(o, 'spec', 'holderIdentity') ?? '', age(o, now)] },
  'rbac.authorization.k8s.io/roles': createdAt,
  'rbac.authorization.k8s.io/clusterroles': createdAt,
  'rbac.authorization.k8s.io/rolebindings': bindingPrinter,
  'rbac.authorization.k8s.io/clusterrolebindings': bindingPrinter,
};

/** The default table of kinds without a printer (`rest.DefaultTableConvertor`). */
export const DEFAULT_PRINTER: BuiltinPrinter = createdAt;
