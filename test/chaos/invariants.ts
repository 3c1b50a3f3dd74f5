/**
 * The shared invariant checker of the chaos scenarios: what "converged, nothing lost, nothing
 * duplicated, nothing else touched" means, checked against the API server's objects and request log.
 */
import { buildCronJob } from '../../src/pure/cron-job.ts';
import { cronJobDrift } from '../../src/pure/cronjob-diff.ts';
import { childNameFor } from '../../src/pure/names.ts';
import type { BackupScheduleObject } from '../../src/controller/resources.ts';
import type { KubeClient } from '../../src/kube/kube-client.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import type { RequestLogEntry } from '../apiserver/index.ts';
import { CRD_NAME } from '../../src/api/constants.ts';
import { WEBHOOK_SECRET_NAME } from '../../src/manifests/operator-chart.ts';
import { CONTROLLER_SA, sleep } from '../e2e/harness.ts';
import { api, listAll, readyOf } from '../e2e/scenarios.ts';

/** What the user last asked for, per schedule name, in one namespace. */
export interface ExpectedState {
  readonly namespace: string;
  /** name → the spec fields the scenario sets (`schedule`, `suspend`). */
  readonly schedules: ReadonlyMap<string, { readonly schedule: string; readonly suspend?: boolean }>;
}

type CronJobObject = KubeObject & { spec: Record<string, unknown> };

/**
 * Every way the namespace differs from the converged state of `expected`: the set of schedules, each
 * Ready=True at its generation, exactly one child each, named as the controller names it, controlled
 * by its schedule and in sync with the spec (no drift in any field the controller owns), and no
 * CronJob without its schedule (a duplicate, an orphan, a child of a deleted schedule not collected).
 */
export async function convergenceProblems(admin: KubeClient, expected: ExpectedState): Promise<string[]> {
  const k = api(admin);
  const { namespace } = expected;
  const [schedules, cronJobs] = await Promise.all([
    listAll<BackupScheduleObject>((o) => k.schedules.list(o) as never, namespace),
    listAll<CronJobObject>((o) => k.cronJobs.list(o) as never, namespace),
  ]);
  const problems: string[] = [];
  const byName = new Map(schedules.map((s) => [s.metadata?.name ?? '', s]));
  for (const name of expected.schedules.keys()) if (!byName.has(name)) problems.push(`schedule ${name} is missing`);
  const childrenByOwner = new Map<string, CronJobObject[]>();
  for (const c of cronJobs) {
    const owner = c.metadata.ownerReferences?.find((r) => r.controller === true);
    if (!owner || owner.kind !== 'BackupSchedule') {
      problems.push(`CronJob ${c.metadata.name} has no BackupSchedule controller`);
      continue;
    }
    childrenByOwner.set(owner.uid, [...(childrenByOwner.get(owner.uid) ?? []), c]);
  }
  const uids = new Set(schedules.map((s) => s.metadata?.uid ?? ''));
  for (const [uid, children] of childrenByOwner) {
    if (!uids.has(uid)) problems.push(`CronJob ${children.map((c) => c.metadata.name).join(',')} outlived its schedule (uid ${uid})`);
  }
  for (const s of schedules) {
    const name = s.metadata?.name ?? '';
    const want = expected.schedules.get(name);
    if (!want) {
      problems.push(`schedule ${name} exists but should not`);
      continue;
    }
    if (s.spec.schedule !== want.schedule) problems.push(`schedule ${name} has spec.schedule ${s.spec.schedule}, expected ${want.schedule}`);
    const ready = readyOf(s);
    const generation = s.metadata?.generation;
    if (ready?.status !== 'True') problems.push(`schedule ${name} is not Ready (${ready?.reason ?? 'no condition'}: ${ready?.message ?? ''})`);
    if (s.status?.observedGeneration !== generation || ready?.observedGeneration !== generation) {
      problems.push(`schedule ${name} observedGeneration ${s.status?.observedGeneration}/${ready?.observedGeneration} != generation ${generation}`);
    }
    const children = childrenByOwner.get(s.metadata?.uid ?? '') ?? [];
    if (children.length !== 1) {
      problems.push(`schedule ${name} has ${children.length} children`);
      continue;
    }
    const child = children[0] as CronJobObject;
    if (child.metadata.name !== childNameFor(name) || s.status?.cronJobName !== child.metadata.name) {
      problems.push(`schedule ${name}'s child is ${child.metadata.name} (status says ${s.status?.cronJobName}, expected ${childNameFor(name)})`);
    }
    const drift = cronJobDrift(child, buildCronJob(s as never) as KubeObject);
    if (drift.length > 0) problems.push(`child of ${name} drifted in ${drift.join(', ')}`);
  }
  return problems;
}

/** Polls {@link convergenceProblems} until there are none (resolves with the time it took) or `timeoutMs` passes. */
export async function waitConverged(admin: KubeClient, expected: ExpectedState, timeoutMs: number, everyMs = 500): Promise<{ ms: number; problems: string[] }> {
  const start = Date.now();
  let problems: string[] = [];
  for (;;) {
    try {
      problems = await convergenceProblems(admin, expected);
    } catch (err) {
      problems = [`cannot list: ${(err as Error).message}`];
    }
    if (problems.length === 0 || Date.now() - start > timeoutMs) return { ms: Date.now() - start, problems };
    await sleep(everyMs);
  }
}

/** True for requests that change something (not get/list/watch). */
export const isWrite = (e: RequestLogEntry): boolean => !['get', 'list', 'watch'].includes(e.verb);

/**
 * A write of the conversion webhook's certificates: its Secret, or the CRD's caBundle. Conditional
 * writes the leader makes, and a follower too while the Secret holds nothing servable
 * (src/runtime/certificate-manager.ts), so they are not reconcile writes to fence.
 */
export function isWebhookCertificateWrite(e: RequestLogEntry): boolean {
  return (
    isWrite(e) &&
    ((e.resource === 'secrets' && e.namespace === CONTROLLER_SA.namespace && e.name === WEBHOOK_SECRET_NAME) ||
      (e.resource === 'customresourcedefinitions' && e.name === CRD_NAME && e.verb === 'patch'))
  );
}

/** The writes of `users`, Events and Lease renewals optional. */
export function writesBy(entries: readonly RequestLogEntry[], users: ReadonlySet<string>, options: { events?: boolean; leases?: boolean } = {}): RequestLogEntry[] {
  return entries.filter((e) => users.has(e.user) && isWrite(e) && (options.events === true || e.resource !== 'events') && (options.leases === true || e.resource !== 'leases'));
}

/**
 * Writes of `users` to anything but their own objects: CronJobs and BackupSchedule status in
 * `namespace`, Events, the Lease, and the conversion webhook's certificate Secret and the CRD's caBundle.
 */
export function foreignWrites(entries: readonly RequestLogEntry[], users: ReadonlySet<string>, namespace: string): string[] {
  return writesBy(entries, users, { events: true, leases: true })
    .filter((e) => {
      if (e.resource === 'events' || e.resource === 'leases') return false;
      if (isWebhookCertificateWrite(e)) return false;
      if (e.namespace !== namespace) return true;
      if (e.resource === 'cronjobs') return e.subresource !== undefined && e.subresource !== '';
      return !(e.resource === 'backupschedules' && e.subresource === 'status');
    })
    .map((e) => `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ''} ${e.namespace ?? ''}/${e.name ?? ''}`);
}

/** Writes of `users` (Events and Leases included) during `ms` of idle time, from now. */
export async function idleWrites(server: { requestLog: { entries(): RequestLogEntry[] } }, users: ReadonlySet<string>, ms: number): Promise<RequestLogEntry[]> {
  const from = Date.now();
  await sleep(ms);
  return writesBy(server.requestLog.entries(), users, { events: true }).filter((e) => Date.parse(e.time) >= from);
}

/**
 * Waits until `users` have written nothing (Events included, Lease renewals not) for `quietMs`: the
 * Events that trail a convergence (a low-priority lane, sent after the reconciles' writes) belong to
 * it, not to the idle window that follows. Gives up after `timeoutMs`; the idle check then fails.
 */
export async function settled(server: { requestLog: { entries(): RequestLogEntry[] } }, users: ReadonlySet<string>, quietMs = 2_000, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const writes = writesBy(server.requestLog.entries(), users, { events: true });
    const last = writes.length > 0 ? Date.parse((writes[writes.length - 1] as RequestLogEntry).time) : 0;
    if (Date.now() - last >= quietMs) return;
    await sleep(250);
  }
}
