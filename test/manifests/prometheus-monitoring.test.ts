/**
 * The opt-in prometheus-operator objects (`monitoring: 'prometheus-operator'`): absent by default, a
 * PodMonitor on the controller Pods' metrics port and a PrometheusRule, both valid for
 * @kubernetes-models/prometheus-operator; the rules' PromQL and templates checked by `promtool check
 * rules` and their firing by `promtool test rules` (Debian's `prometheus` package; a missing promtool
 * fails the suite, CI or not, never skips: .ci/run installs it).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Testing } from 'cdk8s';
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { afterAll, describe, expect, it } from 'vitest';
import { OperatorChart } from '../../src/manifests/index.ts';

const run = promisify(execFile);
type Doc = Record<string, any>;

const synth = (props: ConstructorParameters<typeof OperatorChart>[2] = {}): Doc[] => Testing.synth(new OperatorChart(Testing.app(), 'op', props)) as Doc[];
const monitored = synth({ monitoring: 'prometheus-operator' });
const rule = monitored.find((d) => d['kind'] === 'PrometheusRule')!;
const dir = mkdtempSync(join(tmpdir(), 'bks-promtool-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function promtool(...args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run('promtool', args, { cwd: dir });
    return stdout + stderr;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
    if (e.code === 'ENOENT') throw new Error('promtool is missing: apt-get install -y prometheus (Debian), as .ci/run does');
    throw new Error(`promtool ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

describe('monitoring: prometheus-operator', () => {
  it('ships nothing of prometheus-operator by default, and refuses an unknown value naming the prop', () => {
    expect(synth().filter((d) => String(d['apiVersion']).startsWith('monitoring.coreos.com/'))).toEqual([]);
    expect(() => synth({ monitoring: 'datadog' as never })).toThrow(/monitoring: expected "none" or "prometheus-operator", got "datadog"/);
  });

  it('scrapes the controller Pods\' metrics port with a PodMonitor, and both objects are valid prometheus-operator objects', () => {
    const monitor = monitored.find((d) => d['kind'] === 'PodMonitor')!;
    const deployment = monitored.find((d) => d['kind'] === 'Deployment')!;
    expect(monitor['metadata']['namespace']).toBe(deployment['metadata']['namespace']);
    for (const [key, value] of Object.entries(monitor['spec']['selector']['matchLabels'])) expect(deployment['spec']['template']['metadata']['labels'][key]).toBe(value);
    const ports = deployment['spec']['template']['spec']['containers'][0]['ports'].map((p: { name: string }) => p.name);
    expect(ports).toContain(monitor['spec']['podMetricsEndpoints'][0]['port']);
    expect(() => new PodMonitor(monitor as never).validate()).not.toThrow();
    expect(() => new PrometheusRule(rule as never).validate()).not.toThrow();
    expect(rule['spec']['groups'][0]['rules'].map((r: { alert: string }) => r.alert)).toEqual(['BackupScheduleFailing', 'BackupScheduleMissedRuns', 'BackupOperatorDown']);
    for (const r of rule['spec']['groups'][0]['rules']) expect(r.annotations.runbook_url).toMatch(/docs\/runbooks\.md#backup/);
  });

  it('passes promtool check rules (PromQL and annotation templates) and fires as promtool test rules expects', async () => {
    writeFileSync(join(dir, 'rules.yaml'), JSON.stringify({ groups: rule['spec']['groups'] }));
    expect(await promtool('check', 'rules', 'rules.yaml')).toMatch(/SUCCESS: 3 rules found/);
    // Annotations aside (their templates are checked above): the test compares the alerts' labels.
    const bare = { groups: rule['spec']['groups'].map((g: { rules: Doc[] }) => ({ ...g, rules: g.rules.map(({ annotations: _, ...r }) => r) })) };
    writeFileSync(join(dir, 'bare.yaml'), JSON.stringify(bare));
    const job = 'backupschedule-system/backupschedule-operator';
    const series = (metric: string, labels: string, values: string) => ({ series: `${metric}{${labels}}`, values });
    const tests = {
      rule_files: ['bare.yaml'],
      evaluation_interval: '1m',
      tests: [
        {
          // a/failing: failed after its last success; a/recovered: succeeded after failing; a/never: failed, never succeeded.
          // Two replicas report a/failing: the follower's older values do not matter (max by schedule).
          interval: '1m',
          input_series: [
            series('backupschedule_last_failure_timestamp_seconds', 'namespace="a",name="failing",pod="p1"', '2000x10'),
            series('backupschedule_last_success_timestamp_seconds', 'namespace="a",name="failing",pod="p1"', '1000x10'),
            series('backupschedule_last_success_timestamp_seconds', 'namespace="a",name="failing",pod="p2"', '500x10'),
            series('backupschedule_last_failure_timestamp_seconds', 'namespace="a",name="recovered",pod="p1"', '1000x10'),
            series('backupschedule_last_success_timestamp_seconds', 'namespace="a",name="recovered",pod="p1"', '2000x10'),
            series('backupschedule_last_failure_timestamp_seconds', 'namespace="a",name="never",pod="p1"', '1000x10'),
            series('up', `job="${job}",pod="p1"`, '1x10'),
          ],
          alert_rule_test: [
            { eval_time: '5m', alertname: 'BackupScheduleFailing', exp_alerts: [{ exp_labels: { severity: 'warning', namespace: 'a', name: 'failing' } }, { exp_labels: { severity: 'warning', namespace: 'a', name: 'never' } }] },
            { eval_time: '5m', alertname: 'BackupOperatorDown', exp_alerts: [] },
          ],
        },
        {
          // Hourly schedules at t = 3 h (10,800 s): a/stale last succeeded at 0 (3 h > 2 intervals), a/fresh at 9,000 s.
          interval: '10m',
          input_series: [
            series('backupschedule_expected_interval_seconds', 'namespace="a",name="stale",pod="p1"', '3600x20'),
            series('backupschedule_last_success_timestamp_seconds', 'namespace="a",name="stale",pod="p1"', '0x20'),
            series('backupschedule_expected_interval_seconds', 'namespace="a",name="fresh",pod="p1"', '3600x20'),
            series('backupschedule_last_success_timestamp_seconds', 'namespace="a",name="fresh",pod="p1"', '9000x20'),
          ],
          alert_rule_test: [
            { eval_time: '1h', alertname: 'BackupScheduleMissedRuns', exp_alerts: [] },
            { eval_time: '3h', alertname: 'BackupScheduleMissedRuns', exp_alerts: [{ exp_labels: { severity: 'critical', namespace: 'a', name: 'stale' } }] },
          ],
        },
        {
          // Both replicas down from minute 5, then no series at all: pending for 10 minutes, then firing.
          interval: '1m',
          input_series: [series('up', `job="${job}",pod="p1"`, '1x4 0x10'), series('up', `job="${job}",pod="p2"`, '1x4 0x10')],
          alert_rule_test: [
            { eval_time: '10m', alertname: 'BackupOperatorDown', exp_alerts: [] },
            { eval_time: '16m', alertname: 'BackupOperatorDown', exp_alerts: [{ exp_labels: { severity: 'critical' } }] },
            { eval_time: '40m', alertname: 'BackupOperatorDown', exp_alerts: [{ exp_labels: { severity: 'critical', job } }] },
          ],
        },
      ],
    };
    writeFileSync(join(dir, 'tests.yaml'), JSON.stringify(tests));
    expect(await promtool('test', 'rules', 'tests.yaml')).toMatch(/SUCCESS/);
  }, 60_000);
});
