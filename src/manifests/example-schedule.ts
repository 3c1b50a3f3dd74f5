import { Construct } from 'constructs';
import type { INamespace } from 'kubernetes-models/v1/Namespace';
import { GROUP_VERSION, KIND } from '../api/constants.ts';
import type { BackupSchedule } from '../api/index.ts';
import { BackupSchedule as BackupScheduleConstruct } from '../constructs/backup-schedule.ts';
import { kubeObject } from './kube-object.ts';
import { SyncWave, syncWave } from './sync-wave.ts';

/** Props of ExampleSchedule. */
export interface ExampleScheduleProps {
  /**
   * Namespace of the example (created too).
   * @default 'kubelings'
   */
  readonly namespace?: string;
  /**
   * Labels on the example objects.
   * @default {}
   */
  readonly labels?: Readonly<Record<string, string>>;
}

/** The example spec: back up etcd at 02:00 every night, keep the last 7. Typed by the generated API. */
export function nightlyEtcd(namespace: string): BackupSchedule {
  return {
    apiVersion: GROUP_VERSION,
    kind: KIND,
    metadata: { name: 'nightly-etcd', namespace },
    spec: {
      schedule: '0 2 * * *',
      timeZone: 'Etc/UTC',
      source: { etcd: { endpoints: ['https://etcd-0.etcd:2379'], tlsSecretName: 'etcd-client-tls' } },
      destination: { persistentVolumeClaim: { claimName: 'etcd-backups', path: 'nightly' } },
      retention: { keepLast: 7 },
    },
  };
}

/**
 * The lesson's example, `kubelings/nightly-etcd`, with its Namespace. Applied last (Argo CD wave 2,
 * and SkipDryRunOnMissingResource so the first sync does not fail before the CRD exists).
 */
export class ExampleSchedule extends Construct {
  /** The BackupSchedule, through the construct users import (validated at synth). */
  public readonly schedule: BackupScheduleConstruct;

  public constructor(scope: Construct, id: string, props: ExampleScheduleProps = {}) {
    super(scope, id);
    const namespace = props.namespace ?? 'kubelings';
    const labels = { ...(props.labels ?? {}) };
    kubeObject<INamespace>(this, 'Namespace', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace, labels, annotations: syncWave(SyncWave.namespace) },
    });
    const example = nightlyEtcd(namespace);
    this.schedule = new BackupScheduleConstruct(this, 'Resource', {
      metadata: {
        ...example.metadata,
        labels,
        annotations: { ...syncWave(SyncWave.example), 'argocd.argoproj.io/sync-options': 'SkipDryRunOnMissingResource=true' },
      },
      spec: example.spec,
    });
  }
}
