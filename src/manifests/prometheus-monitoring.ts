/**
 * Scraping and alerting for prometheus-operator (opt-in: `monitoring: 'prometheus-operator'` on the
 * chart; the CRDs PodMonitor and PrometheusRule must exist, so the default dist/ ships neither): a
 * PodMonitor scraping every controller replica's `metrics` port, and a PrometheusRule whose alerts
 * each link their runbook section in docs/runbooks.md. Typed with @kubernetes-models/prometheus-operator
 * (type-only imports, like kubeObject's kubernetes-models: nothing of it loads at synth time).
 *
 * Every replica serves /metrics but only the leader reconciles, so the per-schedule series of a
 * follower are those it last had as leader (older or absent): the expressions take `max by
 * (namespace, name)` over replicas, which is the leader's for timestamps that only grow.
 */
import { Construct } from 'constructs';
import type { IPodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import type { IPrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { kubeObject } from './kube-object.ts';

/** Where the runbooks are; each alert links `#<alert name in lower case>`. */
export const RUNBOOK_BASE_URL = 'https://github.com/kubelings/backupschedule-operator/blob/main/docs/runbooks.md';

/** The per-schedule series over replicas (see the module doc). */
const byScheduleMax = (metric: string): string => `max by (namespace, name) (${metric})`;

/** One alerting rule, as the PrometheusRule's `spec.groups[].rules[]` takes it. */
export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/** The alert rules for the controller whose PodMonitor is `namespace/podMonitorName` (its `job` label). */
export function backupAlertRules(namespace: string, podMonitorName: string): AlertRule[] {
  const job = `${namespace}/${podMonitorName}`;
  const runbook = (alert: string): string => `${RUNBOOK_BASE_URL}#${alert.toLowerCase()}`;
  const lastSuccess = byScheduleMax('backupschedule_last_success_timestamp_seconds');
  const lastFailure = byScheduleMax('backupschedule_last_failure_timestamp_seconds');
  return [
    {
      alert: 'BackupScheduleFailing',
      // The newest run failed: a failure later than the last success (or than nothing: 0).
      expr: `${lastFailure} > (${lastSuccess} or ${lastFailure} * 0)`,
      for: '0m',
      labels: { severity: 'warning' },
      annotations: {
        summary: 'The last backup of BackupSchedule {{ $labels.namespace }}/{{ $labels.name }} failed.',
        description: 'Its last backup Job failed and none succeeded since. `kubectl describe backupschedule -n {{ $labels.namespace }} {{ $labels.name }}` shows the LastBackupSucceeded condition (the Job, its reason and exit code) and the BackupFailed Events.',
        runbook_url: runbook('BackupScheduleFailing'),
      },
    },
    {
      alert: 'BackupScheduleMissedRuns',
      // No success within two expected intervals (the longest gap of its cron schedule).
      expr: `time() - ${lastSuccess} > 2 * ${byScheduleMax('backupschedule_expected_interval_seconds')}`,
      for: '0m',
      labels: { severity: 'critical' },
      annotations: {
        summary: 'BackupSchedule {{ $labels.namespace }}/{{ $labels.name }} has had no successful backup in two expected intervals.',
        description: 'The last successful backup is {{ $value | humanizeDuration }} older than two intervals of its schedule allow: runs fail, are not started (suspended, missed deadline, controller down) or never finish.',
        runbook_url: runbook('BackupScheduleMissedRuns'),
      },
    },
    {
      alert: 'BackupOperatorDown',
      // No replica scraped successfully: nothing reports on backups (and nothing heals the CronJobs).
      expr: `sum(up{job="${job}"}) == 0 or absent(up{job="${job}"})`,
      for: '10m',
      labels: { severity: 'critical' },
      annotations: {
        summary: 'No backupschedule-operator replica has been up for 10 minutes.',
        description: `Prometheus scraped no replica of ${job}: backups still run from their CronJobs, but no status, Event or metric reports them and no schedule change is applied.`,
        runbook_url: runbook('BackupOperatorDown'),
      },
    },
  ];
}

/** Options of {@link PrometheusMonitoring}. */
export interface PrometheusMonitoringProps {
  readonly name: string;
  readonly namespace: string;
  /** The controller Pods' labels (the Deployment's selector). */
  readonly podSelector: Readonly<Record<string, string>>;
  /** Name of the container port serving /metrics. */
  readonly metricsPortName: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** A PodMonitor and a PrometheusRule for prometheus-operator; see the module doc. */
export class PrometheusMonitoring extends Construct {
  constructor(scope: Construct, id: string, props: PrometheusMonitoringProps) {
    super(scope, id);
    const metadata = { name: props.name, namespace: props.namespace, labels: { ...props.labels } };
    kubeObject<IPodMonitor>(this, 'PodMonitor', {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PodMonitor',
      metadata,
      spec: {
        selector: { matchLabels: { ...props.podSelector } },
        podMetricsEndpoints: [{ port: props.metricsPortName, path: '/metrics', interval: '30s' }],
      },
    });
    kubeObject<IPrometheusRule>(this, 'PrometheusRule', {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata,
      spec: { groups: [{ name: 'backupschedule-operator', rules: backupAlertRules(props.namespace, props.name).map((r) => ({ ...r, labels: { ...r.labels }, annotations: { ...r.annotations } })) }] },
    });
  }
}
