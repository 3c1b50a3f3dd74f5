/** computeStatus keeps within the schema's status bounds, so the controller's status write is always valid. */
import { describe, expect, it } from 'vitest';
import { MAX_ACTIVE_JOBS, MAX_CONDITIONS } from '../../src/api/schema.ts';
import { validateBackupScheduleV1 } from '../../src/api/validate.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { computeStatus, formatTime } from '../../src/pure/status.ts';
import { scheduleManifest } from '../e2e/scenarios.ts';

const T0 = Date.UTC(2026, 11, 1, 2, 0, 0);
const child = (active: unknown[]): KubeObject => ({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'nightly-etcd', namespace: 'team-a' }, status: { active } });

describe('computeStatus within the status bounds', () => {
  it(`lists at most ${MAX_ACTIVE_JOBS} active Jobs: unique, sorted (the oldest first), no name longer than a Job's`, () => {
    const names = Array.from({ length: 40 }, (_, i) => `nightly-etcd-${29000100 - i}`);
    const active = [...names, names[0], `x${'y'.repeat(253)}`, { kind: 'Job' }].map((n) => (typeof n === 'string' ? { kind: 'Job', name: n } : n));
    const status = computeStatus({ metadata: { generation: 1 } }, child(active), { kind: 'InSync' }, T0);
    expect(status.active).toEqual([...names].sort().slice(0, MAX_ACTIVE_JOBS));
    const schedule = { ...scheduleManifest('team-a', 'nightly-etcd'), status };
    expect(validateBackupScheduleV1(schedule)).toEqual([]);
  });

  it(`keeps Ready and at most ${MAX_CONDITIONS - 1} conditions other writers set`, () => {
    const others = Array.from({ length: 20 }, (_, i) => ({ type: `Other${i}`, status: 'Unknown' as const, reason: 'Set', message: '', lastTransitionTime: formatTime(T0) }));
    const status = computeStatus({ metadata: { generation: 1 }, status: { conditions: others } }, child([]), { kind: 'InSync' }, T0);
    expect(status.conditions?.map((c) => c.type)).toEqual(['Ready', ...others.slice(0, MAX_CONDITIONS - 1).map((c) => c.type)]);
    expect(validateBackupScheduleV1({ ...scheduleManifest('team-a', 'nightly-etcd'), status })).toEqual([]);
  });
});
