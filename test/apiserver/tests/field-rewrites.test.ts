import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFieldSpec } from '../field-rewrites.ts';
import { startTestApiServer, type TestApiServer } from '../index.ts';
import { client } from './http-client.ts';

const CJ = '/apis/batch/v1/namespaces/ns/cronjobs';
const cronJob = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name },
  spec: { schedule: '0 2 * * *', timeZone: 'Etc/UTC', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36' }] } } } }, ...spec },
});

describe('an older server: dropFields', () => {
  let server: TestApiServer;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    server = await startTestApiServer({ dropFields: ['batch/cronjobs:spec.timeZone'], kubernetesVersion: '1.24.17' });
    api = client(server);
    await api('POST', '/api/v1/namespaces', { metadata: { name: 'ns' } });
  });
  afterAll(() => server.stop());

  it('accepts a create and answers (and stores) the object without the field', async () => {
    const created = await api('POST', CJ, cronJob('a'));
    expect(created.status).toBe(201);
    expect(created.body.spec.timeZone).toBeUndefined();
    expect(created.body.spec.schedule).toBe('0 2 * * *');
    expect((await api('GET', `${CJ}/a`)).body.spec.timeZone).toBeUndefined();
  });

  it('answers an update that only sets the field with the unchanged object: same resourceVersion, no watch event', async () => {
    const stored = (await api('GET', `${CJ}/a`)).body;
    const updated = await api('PUT', `${CJ}/a`, { ...stored, spec: { ...stored.spec, timeZone: 'Europe/Berlin' } });
    expect(updated.status).toBe(200);
    expect(updated.body.spec.timeZone).toBeUndefined();
    expect(updated.body.metadata.resourceVersion).toBe(stored.metadata.resourceVersion);
  });

  it('reports the configured version at /version', async () => {
    expect((await api('GET', '/version')).body).toMatchObject({ major: '1', minor: '24', gitVersion: 'v1.24.17' });
  });
});

describe('a mutating admission webhook: mutateFields', () => {
  let server: TestApiServer;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    server = await startTestApiServer({ mutateFields: ['batch/cronjobs:spec.jobTemplate.spec.template.spec.containers[0].image="mirror.corp/busybox:1.36"'] });
    api = client(server);
    await api('POST', '/api/v1/namespaces', { metadata: { name: 'ns' } });
  });
  afterAll(() => server.stop());

  it('rewrites the field on create and on update, and leaves other kinds alone', async () => {
    const created = await api('POST', CJ, cronJob('b'));
    expect(created.body.spec.jobTemplate.spec.template.spec.containers[0].image).toBe('mirror.corp/busybox:1.36');
    expect(created.body.spec.timeZone).toBe('Etc/UTC');
    const body = structuredClone(created.body);
    body.spec.jobTemplate.spec.template.spec.containers[0].image = 'busybox:1.37';
    body.spec.suspend = true;
    const updated = await api('PUT', `${CJ}/b`, body);
    expect(updated.body.spec.jobTemplate.spec.template.spec.containers[0].image).toBe('mirror.corp/busybox:1.36');
    expect(updated.body.spec.suspend).toBe(true);
    const cm = await api('POST', '/api/v1/namespaces/ns/configmaps', { metadata: { name: 'c' }, data: { image: 'x' } });
    expect(cm.body.data).toEqual({ image: 'x' });
  });

  it('reports the default version at /version', async () => {
    expect((await api('GET', '/version')).body).toMatchObject({ major: '1', minor: '32' });
  });
});

describe('parseFieldSpec', () => {
  it('reads group, resource, path and a JSON or string value', () => {
    expect(parseFieldSpec('batch/cronjobs:spec.timeZone', false)).toEqual({ group: 'batch', resource: 'cronjobs', path: 'spec.timeZone' });
    expect(parseFieldSpec('configmaps:data.x=1', true)).toEqual({ group: '', resource: 'configmaps', path: 'data.x', value: 1 });
    expect(parseFieldSpec('apps/deployments:spec.paused=true', true)).toMatchObject({ value: true });
    expect(parseFieldSpec('batch/cronjobs:spec.timeZone=Asia/Tokyo', true)).toMatchObject({ value: 'Asia/Tokyo' });
  });
  it.each([
    ['spec.timeZone', 'expected <group>/<resource>:<path>'],
    ['batch/CronJobs:spec.x', 'is not a plural resource name'],
    ['batch/cronjobs:', 'the path is empty'],
  ])('rejects %j naming the problem', (spec, message) => {
    expect(() => parseFieldSpec(spec, false)).toThrow(message);
  });
  it('needs a value for a mutation', () => {
    expect(() => parseFieldSpec('batch/cronjobs:spec.suspend', true)).toThrow('expected =<value>');
  });
});
