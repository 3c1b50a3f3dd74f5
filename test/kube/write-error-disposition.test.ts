import { describe, expect, it } from 'vitest';
import { ApiStatusError, statusErrors, writeErrorDisposition } from '../../src/kube/api-status-error.ts';

const CJ = { group: 'batch', resource: 'cronjobs' };
const err = (code: number, reason: string) => new ApiStatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code, reason, message: reason });

describe('writeErrorDisposition', () => {
  it.each<[string, unknown, 'create' | 'update', 'retry' | 'terminal']>([
    ['409 Conflict', new ApiStatusError(statusErrors.conflict(CJ, 'x')), 'update', 'retry'],
    ['409 AlreadyExists', new ApiStatusError(statusErrors.alreadyExists(CJ, 'x')), 'create', 'retry'],
    ['429', new ApiStatusError(statusErrors.tooManyRequests(1)), 'create', 'retry'],
    ['500', new ApiStatusError(statusErrors.internalError('etcd')), 'update', 'retry'],
    ['503', new ApiStatusError(statusErrors.serviceUnavailable()), 'create', 'retry'],
    ['504', new ApiStatusError(statusErrors.timeout()), 'create', 'retry'],
    ['408', err(408, 'Timeout'), 'create', 'retry'],
    ['401 (a token that just expired)', err(401, 'Unauthorized'), 'create', 'retry'],
    ['a network error', new Error('socket hang up'), 'create', 'retry'],
    ['404 on update', new ApiStatusError(statusErrors.notFound(CJ, 'x')), 'update', 'retry'],
    ['404 on create', new ApiStatusError(statusErrors.notFound({ group: '', resource: 'namespaces' }, 'gone')), 'create', 'terminal'],
    ['400', new ApiStatusError(statusErrors.badRequest('bad')), 'create', 'terminal'],
    ['403', new ApiStatusError(statusErrors.forbidden('u', 'create', CJ, 'ns')), 'create', 'terminal'],
    ['422', new ApiStatusError(statusErrors.invalid({ group: 'batch', kind: 'CronJob' }, 'x', [{ field: 'spec', message: 'bad' }])), 'update', 'terminal'],
  ])('%s on %s → %s', (_name, error, verb, expected) => {
    expect(writeErrorDisposition(error, verb)).toBe(expected);
  });
});
