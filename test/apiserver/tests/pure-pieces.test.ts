import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/object.ts';
import { humanDuration } from '../human-duration.ts';
import { evaluateJsonPath, parseJsonPath } from '../jsonpath.ts';
import { jsonPatch, mergePatch, PatchApplyError, strategicMergePatch } from '../patch.ts';
import { knownJson, storedJson } from '../object-json.ts';
import { RequestLog } from '../request-log.ts';
import { parseRequestInfo } from '../router/request-info.ts';
import { parseFieldSelector, parseLabelSelector, SelectorError } from '../selectors.ts';
import { flushPerTurn, type TextStream } from '../watch-flush.ts';

const obj = (labels: Record<string, string>): KubeObject => ({ metadata: { name: 'n', namespace: 'ns', labels } });

describe('label selectors', () => {
  it.each([
    ['app=a', { app: 'a' }, true],
    ['app==a', { app: 'b' }, false],
    ['app!=a', {}, true],
    ['app in (a, b)', { app: 'b' }, true],
    ['app notin (a,b)', { app: 'c' }, true],
    ['app notin (a,b)', {}, true],
    ['app', { app: '' }, true],
    ['!app', { app: 'x' }, false],
    ['app=a,tier=web', { app: 'a', tier: 'db' }, false],
    ['example.com/x=1', { 'example.com/x': '1' }, true],
    ['n>3', { n: '4' }, true],
  ])('%s on %j is %s', (selector, labels, expected) => {
    expect(parseLabelSelector(selector)?.(obj(labels))).toBe(expected);
  });

  it('refuses a selector it cannot parse', () => {
    expect(() => parseLabelSelector('a b c')).toThrow(SelectorError);
  });
});

describe('field selectors', () => {
  it.each([
    ['metadata.name=n', true],
    ['metadata.name!=n', false],
    ['metadata.namespace==ns', true],
  ])('%s is %s', (selector, expected) => {
    expect(parseFieldSelector(selector, '/configmaps')?.(obj({}))).toBe(expected);
  });

  it('names the unsupported field', () => {
    expect(() => parseFieldSelector('spec.x=1', '/configmaps')).toThrow('field label not supported: spec.x');
  });

  it('knows the involvedObject fields of core events (kubectl describe)', () => {
    const ev = { metadata: { name: 'e' }, involvedObject: { name: 'w1', kind: 'Widget' } };
    expect(parseFieldSelector('involvedObject.name=w1,involvedObject.kind=Widget', '/events')?.(ev)).toBe(true);
  });
});

describe('patches', () => {
  it('merge patch deletes with null and replaces lists', () => {
    expect(mergePatch({ a: 1, b: { c: 2, d: 3 }, l: [1, 2] }, { a: null, b: { c: null, e: 4 }, l: [3] })).toEqual({ b: { d: 3, e: 4 }, l: [3] });
  });

  it('JSON patch applies add/replace/remove/move/copy in order and fails a test', () => {
    const doc = { a: { b: 1 }, l: [1, 2] };
    expect(jsonPatch(doc, [
      { op: 'add', path: '/l/1', value: 9 },
      { op: 'replace', path: '/a/b', value: 2 },
      { op: 'copy', from: '/a', path: '/c' },
      { op: 'move', from: '/c/b', path: '/d' },
      { op: 'remove', path: '/l/0' },
    ])).toEqual({ a: { b: 2 }, c: {}, d: 2, l: [9, 2] });
    expect(doc).toEqual({ a: { b: 1 }, l: [1, 2] });
    expect(() => jsonPatch(doc, [{ op: 'test', path: '/a/b', value: 5 }])).toThrow(PatchApplyError);
    expect(() => jsonPatch(doc, [{ op: 'remove', path: '/zz' }])).toThrow(PatchApplyError);
  });

  it('strategic merge patch merges by key, deletes with $patch and unions finalizers', () => {
    const target = { containers: [{ name: 'a', image: '1' }, { name: 'b', image: '1' }], finalizers: ['x'] };
    const patch = { containers: [{ name: 'b', image: '2' }, { name: 'a', $patch: 'delete' }, { name: 'c', image: '3' }], finalizers: ['y'] };
    expect(strategicMergePatch(target, patch)).toEqual({ containers: [{ name: 'b', image: '2' }, { name: 'c', image: '3' }], finalizers: ['x', 'y'] });
  });
});

describe('JSONPath of printer columns', () => {
  const doc = { spec: { size: 3, tags: ['a', 'b'] }, status: { conditions: [{ type: 'Synced', status: 'False' }, { type: 'Ready', status: 'True' }] } };
  it.each([
    ['.spec.size', [3]],
    ['.spec.tags[1]', ['b']],
    ['.spec.tags[*]', ['a', 'b']],
    ['.status.conditions[?(@.type=="Ready")].status', ['True']],
    ['.spec.missing', []],
  ])('%s selects %j', (path, expected) => {
    expect(evaluateJsonPath(parseJsonPath(path), doc)).toEqual(expected);
  });
});

describe('human durations (the AGE column)', () => {
  it.each([
    [5_000, '5s'],
    [119_000, '119s'],
    [150_000, '2m30s'],
    [26 * 60_000, '26m'],
    [(3 * 60 + 5) * 60_000, '3h5m'],
    [30 * 3600_000, '30h'],
    [(5 * 24 + 3) * 3600_000, '5d3h'],
    [400 * 24 * 3600_000, '400d'],
  ])('%i ms reads %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});

describe('request info', () => {
  const q = (s = '') => new URLSearchParams(s);
  it.each([
    ['GET', '/api/v1/namespaces', '', { verb: 'list', resource: 'namespaces' }],
    ['GET', '/api/v1/namespaces/foo', '', { verb: 'get', resource: 'namespaces', name: 'foo', namespace: 'foo' }],
    ['PUT', '/api/v1/namespaces/foo/finalize', '', { verb: 'update', resource: 'namespaces', subresource: 'finalize', name: 'foo' }],
    ['GET', '/apis/batch/v1/namespaces/ns/cronjobs', 'watch=true', { verb: 'watch', apiGroup: 'batch', namespace: 'ns', resource: 'cronjobs' }],
    ['GET', '/apis/batch/v1/cronjobs', 'watch=1&fieldSelector=metadata.name%3Dx', { verb: 'watch', resource: 'cronjobs', name: 'x' }],
    ['DELETE', '/api/v1/namespaces/ns/configmaps', '', { verb: 'deletecollection', resource: 'configmaps' }],
    ['PATCH', '/apis/fixtures.example.com/v1/namespaces/ns/widgets/w/status', '', { verb: 'patch', resource: 'widgets', name: 'w', subresource: 'status' }],
    ['GET', '/api/v1/watch/namespaces/ns/configmaps', '', { verb: 'watch', resource: 'configmaps', namespace: 'ns' }],
  ])('%s %s?%s', (method, path, query, expected) => {
    expect(parseRequestInfo(method, path, q(query))).toMatchObject({ isResourceRequest: true, ...expected });
  });

  it('treats discovery paths as non-resource requests', () => {
    expect(parseRequestInfo('GET', '/apis/batch/v1', q())).toMatchObject({ isResourceRequest: false, verb: 'get' });
  });
});

describe('watch stream flushing', () => {
  /** A stream recording what happens to it, and the flushes handed to `defer`. */
  function recorder(): { stream: TextStream & { ended: boolean }; calls: string[]; flushes: (() => void)[] } {
    const calls: string[] = [];
    const stream = {
      ended: false,
      get writableEnded() {
        return this.ended;
      },
      write: (chunk: string) => void calls.push(`write ${chunk}`),
    };
    return { stream, calls, flushes: [] };
  }

  it('sends the events of one turn as one write, in order, when the turn is over; the next turn gathers anew', () => {
    const { stream, calls, flushes } = recorder();
    const send = (text: string): void => writer.write(text);
    const writer = flushPerTurn(stream, (flush) => void flushes.push(flush));
    send('a');
    send('b');
    send('c');
    expect(calls).toEqual([]);
    expect(flushes).toHaveLength(1);
    flushes[0]?.();
    send('d');
    flushes[1]?.();
    expect(calls).toEqual(['write abc', 'write d']);
  });

  it('flushes the turn at once when asked (before the stream ends: its last BOOKMARK must go out), and the deferred flush then does nothing', () => {
    const { stream, calls, flushes } = recorder();
    const writer = flushPerTurn(stream, (flush) => void flushes.push(flush));
    writer.write('bookmark');
    writer.flush();
    flushes[0]?.();
    writer.flush();
    expect(calls).toEqual(['write bookmark']);
  });

  it('writes nothing to a stream that has ended', () => {
    const { stream, calls, flushes } = recorder();
    const send = (text: string): void => writer.write(text);
    const writer = flushPerTurn(stream, (flush) => void flushes.push(flush));
    stream.ended = true;
    send('late');
    expect(calls).toEqual([]);
    expect(flushes).toEqual([]);
  });
});

describe('request log', () => {
  it('counts the entries a predicate accepts, codes set after the request included', () => {
    const log = new RequestLog();
    const entry = (verb: string, code: number) => ({ time: '2026-01-01T00:00:00.000Z', user: 'u', verb, apiGroup: '', apiVersion: 'v1', resource: 'configmaps', code });
    log.add(entry('create', 201));
    const pending = log.add(entry('update', 0));
    log.add(entry('get', 200));
    const ok = (e: { verb: string; code: number }): boolean => e.verb !== 'get' && e.code >= 200 && e.code < 300;
    expect(log.count(ok)).toBe(1);
    pending.code = 200;
    expect(log.count(ok)).toBe(2);
    log.clear();
    expect(log.count(() => true)).toBe(0);
  });
});

describe('stored objects as JSON', () => {
  it('serializes a stored object once and hands the same text to later readers; an object never serialized has none', () => {
    const stored: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', resourceVersion: '7' } };
    expect(knownJson(stored)).toBeUndefined();
    const text = storedJson(stored);
    expect(text).toBe(JSON.stringify(stored));
    expect(storedJson(stored)).toBe(text);
    expect(knownJson(stored)).toBe(text);
    expect(knownJson({ ...stored })).toBeUndefined();
  });
});
