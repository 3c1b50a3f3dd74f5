/**
 * 404s as kube-apiserver writes them (found against a real 1.20 kube-apiserver, and the same code in
 * every release since: apiserver's notfoundhandler ends in `http.NotFound`): a path under a group
 * nobody serves falls through every delegate to a plain-text `404 page not found`, while a path under
 * a served group (an unknown version or resource) is go-restful's JSON NotFound Status.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../index.ts';
import { client } from './http-client.ts';

let server: TestApiServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestApiServer();
  api = client(server);
});
afterAll(() => server.stop());

describe('404 bodies', () => {
  it.each(['/apis/nope.example.com/v1/namespaces/default/foos', '/apis/nope.example.com/v1/foos/x'])(
    'answers %s (a group nobody serves) with the plain-text 404 of the last delegate',
    async (path) => {
      const res = await api('GET', path);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.body).toBe('404 page not found\n');
    },
  );

  it.each(['/apis/batch/v1/namespaces/default/foos', '/apis/batch/v9/namespaces/default/cronjobs', '/api/v1/namespaces/default/foos'])(
    'answers %s (under a served group) with the JSON NotFound Status',
    async (path) => {
      const res = await api('GET', path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', details: {}, code: 404 });
    },
  );
});
