/**
 * Server-side printing: `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` (what kubectl get sends)
 * answers a meta.k8s.io/v1 Table with the CRD's additionalPrinterColumns or the built-in CronJob columns
 * and partial-object-metadata rows (get-as-table-*.json).
 */
import { describe, expect, it } from 'vitest';
import { must, useCluster, useWidgets } from './harness.ts';

const cluster = useCluster();
const widgets = useWidgets(cluster);

const asTable = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

interface Table {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion?: string };
  columnDefinitions: Array<{ name: string; type: string; format: string; description: string; priority: number }>;
  rows: Array<{ cells: unknown[]; object?: { kind?: string; apiVersion?: string; metadata?: { name?: string; namespace?: string } } }>;
}

const nameDescription =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: ';

describe('table output', () => {
  it('prints a custom resource list with the CRD printer columns', async () => {
    const { api } = cluster();
    const w = widgets();
    const ns = await cluster().namespace('table');
    must(await api.post(w.path(ns), w.body('w5')), 201);
    const res = await api.get<Table>(w.path(ns), { accept: asTable });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
    expect(typeof res.body.metadata.resourceVersion).toBe('string');
    expect(res.body.columnDefinitions.map((c) => [c.name, c.type, c.format, c.priority])).toEqual([
      ['Name', 'string', 'name', 0],
      ['Size', 'integer', '', 0],
      ['Ready', 'string', '', 0],
      ['Age', 'date', '', 0],
    ]);
    expect(res.body.columnDefinitions[0]?.description.startsWith(nameDescription)).toBe(true);
    expect(res.body.columnDefinitions[1]?.description).toBe('Custom resource definition column (in JSONPath format): .spec.size');
    expect(res.body.columnDefinitions[2]?.description).toBe('Custom resource definition column (in JSONPath format): .status.conditions[?(@.type=="Ready")].status');
    expect(res.body.rows).toHaveLength(1);
    const row = res.body.rows[0];
    expect(row?.cells.slice(0, 3)).toEqual(['w5', 3, null]);
    expect(row?.cells[3]).toMatch(/^\d+s$/);
    expect(row?.object).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'w5', namespace: ns } });
  });

  it('fills a JSONPath filter column from status once the condition exists', async () => {
    const { api } = cluster();
    const w = widgets();
    const ns = await cluster().namespace('table');
    must(await api.post(w.path(ns), w.body('w1', { schedule: '@daily', size: 4 })), 201);
    const status = { conditions: [{ type: 'Ready', status: 'True', reason: 'Ok', message: 'fine', lastTransitionTime: '2026-11-30T00:00:00Z' }] };
    must(await api.patch(w.path(ns, 'w1') + '/status', { status }), 200);
    const res = await api.get<Table>(w.path(ns, 'w1'), { accept: asTable });
    expect(res.status).toBe(200);
    expect(res.body.kind).toBe('Table');
    expect(res.body.rows.map((r) => r.cells.slice(0, 3))).toEqual([['w1', 4, 'True']]);
  });

  it('prints CronJobs with the built-in columns', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('table');
    const body = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'minimal' }, spec: { schedule: '0 2 * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36' }] } } } } } };
    must(await api.post(`/apis/batch/v1/namespaces/${ns}/cronjobs`, body), 201);
    const res = await api.get<Table>(`/apis/batch/v1/namespaces/${ns}/cronjobs`, { accept: asTable });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
    const cols = res.body.columnDefinitions.map((c) => c.name);
    // Kubernetes ≥ 1.27 adds a Timezone column after Schedule; 1.20 (the recording) has none.
    expect(cols.filter((c) => c !== 'Timezone')).toEqual(['Name', 'Schedule', 'Suspend', 'Active', 'Last Schedule', 'Age', 'Containers', 'Images', 'Selector']);
    expect(res.body.columnDefinitions.filter((c) => c.priority === 1).map((c) => c.name)).toEqual(['Containers', 'Images', 'Selector']);
    const cell = (name: string): unknown => res.body.rows[0]?.cells[cols.indexOf(name)];
    expect(res.body.rows).toHaveLength(1);
    expect([cell('Name'), cell('Schedule'), cell('Suspend'), cell('Active'), cell('Last Schedule')]).toEqual(['minimal', '0 2 * * *', 'False', 0, '<none>']);
    expect(cell('Age')).toMatch(/^\d+s$/);
    expect([cell('Containers'), cell('Images'), cell('Selector')]).toEqual(['c', 'busybox:1.36', '<none>']);
  });

  it('answers plain JSON when the client does not ask for a Table', async () => {
    const w = widgets();
    const ns = await cluster().namespace('table');
    const res = await cluster().api.get(w.path(ns));
    expect(res.body.kind).toBe('WidgetList');
  });
});
