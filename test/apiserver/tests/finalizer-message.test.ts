/**
 * The 422 for a finalizer added to an object being deleted, in kube's exact text: apimachinery's
 * ValidateObjectMetaUpdate formats the sorted new finalizers with Go's `%#v` (`[]string{"a", "b"}`),
 * as a real 1.20 kube-apiserver showed the conformance suite (the format is unchanged since).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../index.ts';
import { client } from './http-client.ts';

let server: TestApiServer;
let api: ReturnType<typeof client>;
const CM = '/api/v1/namespaces/fm/configmaps';

beforeAll(async () => {
  server = await startTestApiServer();
  api = client(server);
  await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fm' } });
});
afterAll(() => server.stop());

describe('adding finalizers to an object being deleted', () => {
  it('names the new finalizers, sorted, as Go %#v prints a []string', async () => {
    await api('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', finalizers: ['example.com/a'] } });
    expect((await api('DELETE', `${CM}/held`)).status).toBe(200);
    const res = await api('PATCH', `${CM}/held`, { metadata: { finalizers: ['example.com/a', 'example.com/z', 'example.com/b'] } }, { 'content-type': 'application/merge-patch+json' });
    expect(res.status).toBe(422);
    const message = 'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/b", "example.com/z"}';
    expect(res.body.details.causes).toEqual([{ reason: 'FieldValueForbidden', field: 'metadata.finalizers', message }]);
    expect(res.body.message).toBe(`ConfigMap "held" is invalid: metadata.finalizers: ${message}`);
  });
});
