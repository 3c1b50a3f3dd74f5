/**
 * R5, bad input: invalid BackupSchedules sent through the API (as kubectl does, fieldValidation=Strict)
 * and, with validation bypassed, written straight into storage (as a CRD schema change, a restore or
 * `etcdctl put` could leave them). Each must end as a 422 naming the field or as Ready=False naming
 * it, never a crash, never a child; valid names at the limits get valid children.
 */
import { ApiStatusError } from '../../src/kube/api-status-error.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import type { BackupScheduleObject } from '../../src/controller/resources.ts';
import { CONTROLLER_USER, sleep, waitFor } from '../e2e/harness.ts';
import { api, readyOf, scheduleManifest } from '../e2e/scenarios.ts';
import { BAD_INPUTS, LIMIT_NAMES, type BadInput } from './bad-inputs.ts';
import { createSchedules, withController } from './chaos-cluster.ts';
import { convergenceProblems, foreignWrites } from './invariants.ts';
import { finishRow, fmt, Verdict, type Scenario, type ScenarioContext, type ScenarioResult } from './scenario.ts';

/** The manifest of a case: the valid spec with the case's fields merged over it (null deletes). */
export function badManifest(namespace: string, input: BadInput): KubeObject {
  const manifest = scheduleManifest(namespace, input.name ?? `bad-${input.label}`) as KubeObject & { spec: Record<string, unknown> };
  for (const [key, value] of Object.entries(input.spec ?? {})) {
    if (value === null) delete manifest.spec[key];
    else manifest.spec[key] = value;
  }
  return manifest;
}

/**
 * On a server without validation ratcheting (Kubernetes 1.28/1.29) the status of an invalid stored
 * schedule cannot be written (unless only pruned fields are wrong): each must get Ready=False, a
 * Warning Event or (beyond the Event budget) a logged refusal naming the field, no child, and no retry loop (at most `maxStatusWrites` status
 * writes each). Returns the problems.
 */
async function withoutRatcheting(context: ScenarioContext, inputs: readonly BadInput[], maxStatusWrites = 2): Promise<string[]> {
  return withController(context.bundle, [], async (cluster, controller) => {
    const k = api(cluster.admin);
    await k.createNamespace('bad-store');
    await controller.waitForLog('workers to start', (r) => r['msg'] === 'starting workers');
    for (const input of inputs) cluster.server.storeUnvalidated('kubelings.dev', 'backupschedules', badManifest('bad-store', input));
    const unexplained = async (): Promise<string[]> => {
      const problems: string[] = [];
      for (const input of inputs) {
        // Where the status write is not validated (pruned unknown fields, kept by the status strategy), Ready=False says it.
        const ready = readyOf((await k.schedules.get({ namespace: 'bad-store', name: `bad-${input.label}` })) as BackupScheduleObject);
        if (ready?.status === 'False' && ready.message.includes(input.field)) continue;
        const events = await k.events('bad-store', `bad-${input.label}`);
        if (events.some((e) => e.type === 'Warning' && e.message.includes(input.field))) continue;
        // Beyond the global Event budget the Warning is dropped: the refusal is then in the controller's log.
        const logged = controller.lines.some((l) => l.includes('status write rejected') && l.includes(`"bad-${input.label}"`) && l.includes(input.field));
        if (!logged) problems.push(`${input.label}: neither Ready=False, a Warning Event nor a logged refusal naming ${input.field}`);
      }
      return problems;
    };
    let problems: string[] = [];
    await waitFor('a Warning Event for every invalid schedule', async () => (problems = await unexplained()).length === 0, 30_000, 500).catch(() => undefined);
    await sleep(3_000);
    const statusWrites = cluster.server.requestLog.entries().filter((e) => e.user === CONTROLLER_USER && e.subresource === 'status');
    const perObject = Math.max(0, ...[...Map.groupBy(statusWrites, (e) => e.name ?? '').values()].map((w) => w.length));
    if (perObject > maxStatusWrites) problems.push(`a status write was retried ${perObject} times (a retry loop)`);
    const children = (await k.cronJobs.list({ namespace: 'bad-store' })).items;
    if (children.length > 0) problems.push(`${children.length} CronJobs for invalid schedules`);
    if (controller.child.exitCode !== null) problems.push('the controller exited');
    return problems;
  }, { validationRatcheting: false });
}

/** Where a case ended: rejected with a message, or stored. */
type Outcome = { rejected: true; code: number; message: string } | { rejected: false };

async function run(context: ScenarioContext): Promise<ScenarioResult> {
  const started = Date.now();
  const verdict = new Verdict();
  return withController(context.bundle, [], async (cluster, controller) => {
    const k = api(cluster.admin);
    for (const ns of ['bad-api', 'bad-store', 'limits']) await k.createNamespace(ns);
    await controller.waitForLog('workers to start', (r) => r['msg'] === 'starting workers');
    // Through the API.
    const outcomes = new Map<string, Outcome>();
    for (const input of BAD_INPUTS) {
      const manifest = badManifest('bad-api', input);
      try {
        await cluster.admin.request('POST', k.schedules.collectionPath('bad-api'), { body: manifest, query: { fieldValidation: 'Strict' } });
        outcomes.set(input.label, { rejected: false });
      } catch (err) {
        if (!(err instanceof ApiStatusError)) throw err;
        outcomes.set(input.label, { rejected: true, code: err.code, message: err.message });
      }
    }
    // Straight into storage.
    const stored = BAD_INPUTS.filter((i) => i.apiOnly !== true);
    for (const input of stored) cluster.server.storeUnvalidated('kubelings.dev', 'backupschedules', badManifest('bad-store', input));
    await createSchedules(cluster, 'limits', LIMIT_NAMES);

    const accepted = BAD_INPUTS.filter((i) => outcomes.get(i.label)?.rejected === false);
    for (const input of BAD_INPUTS) {
      const outcome = outcomes.get(input.label);
      // An unknown field under fieldValidation=Strict fails decoding, before validation: 400, as in Kubernetes.
      const code = outcome?.rejected && /strict decoding error/.test(outcome.message) ? 400 : 422;
      if (outcome?.rejected) verdict.expect(outcome.code === code && outcome.message.includes(input.field), `API: ${input.label} got ${outcome.code} without naming ${input.field}: ${outcome.message}`);
    }
    // Every stored invalid object (accepted by the API or written into storage) ends Ready=False naming the field.
    const judged = [...accepted.map((i) => ({ ns: 'bad-api', input: i })), ...stored.map((i) => ({ ns: 'bad-store', input: i }))];
    const notJudged = async (): Promise<string[]> => {
      const problems: string[] = [];
      for (const { ns, input } of judged) {
        const s = (await k.schedules.get({ namespace: ns, name: input.name ?? `bad-${input.label}` })) as BackupScheduleObject;
        const ready = readyOf(s);
        if (ready?.status !== 'False' || !ready.message.includes(input.field)) problems.push(`${ns}/${input.label}: Ready=${ready?.status ?? 'none'} ${ready?.reason ?? ''} "${ready?.message ?? ''}" does not name ${input.field}`);
      }
      return problems;
    };
    let problems: string[] = [];
    await waitFor('every invalid schedule to be judged', async () => (problems = await notJudged()).length === 0, context.scale === 'full' ? 60_000 : 30_000, 500).catch(() => undefined);
    verdict.expectNone(problems, 'not Ready=False naming the field');
    for (const ns of ['bad-api', 'bad-store']) {
      const children = (await k.cronJobs.list({ namespace: ns })).items;
      verdict.expect(children.length === 0, `${children.length} CronJobs for invalid schedules in ${ns}: ${children.map((c) => c.metadata.name).join(', ')}`);
    }
    const limits = await waitFor('the schedules with names at the limits to converge', async () => {
      const p = await convergenceProblems(cluster.admin, { namespace: 'limits', schedules: new Map(LIMIT_NAMES.map((n) => [n, { schedule: '0 2 * * *' }])) });
      return p.length === 0 ? p : undefined;
    }, 30_000, 500).catch(async () => convergenceProblems(cluster.admin, { namespace: 'limits', schedules: new Map(LIMIT_NAMES.map((n) => [n, { schedule: '0 2 * * *' }])) }));
    verdict.expectNone(limits, 'names at the limits');
    const users = new Set([CONTROLLER_USER]);
    const entries = cluster.server.requestLog.entries();
    for (const ns of ['bad-api', 'bad-store']) verdict.expectNone(foreignWrites(entries, users, ns).filter((w) => w.includes(` ${ns}/`)), `wrote to other objects in ${ns}`);
    verdict.expect(controller.child.exitCode === null && controller.child.signalCode === null, 'the controller exited');
    verdict.expectNone(await withoutRatcheting(context, stored), 'storage, server without ratcheting (1.28/1.29)');
    const crashes = controller.lines.filter((l) => /uncaught|unhandled|fatal/i.test(l));
    verdict.expectNone(crashes, 'crash lines in the controller log');
    const rejected = BAD_INPUTS.length - accepted.length;
    return finishRow(context, started, verdict, {
      id: 'R5',
      done: `${BAD_INPUTS.length} invalid schedules through the API (fieldValidation=Strict), ${stored.length} written straight into storage (on servers with and without validation ratcheting), ${LIMIT_NAMES.length} valid names at the limits`,
      invariants: ['422 (400 for unknown fields) naming the field, or Ready=False naming it (without ratcheting: or a Warning Event naming it, no retry loop)', 'no child for an invalid spec', 'valid children for names at the limits', 'never a crash'],
      writes: `${fmt(entries.filter((e) => e.user === CONTROLLER_USER && e.verb !== 'get' && e.verb !== 'list' && e.verb !== 'watch' && e.resource !== 'events').length)} (status only for invalid)`,
      figures: {
        'API: 422 / accepted → Ready=False': `${rejected} / ${accepted.length}${accepted.length > 0 ? ` (${accepted.map((a) => a.label).join(', ')})` : ''}`,
        'storage: Ready=False': `${stored.length}`,
      },
    });
  });
}

/** R5: bad input. */
export const badInput: Scenario = { id: 'R5', title: 'bad input', run };
