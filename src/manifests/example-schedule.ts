import { Construct } from 'constructs';
import type { INamespace } from 'kubernetes-models/v1/Namespace';
import { GROUP_VERSION_V1, KIND } from '../api/constants.ts';
import type { v1 } from '../api/index.ts';
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

/**
 * The example: back up etcd at 02:00 every night, keep one backup a day for a week, one a week for a
 * month and one a month for half a year. Written in `kubelings.dev/v1`, the storage version a new user
 * should start with; typed by the generated v1 API.
 */
export function nightlyEtcd(namespace: string): v1.BackupSchedule {
  return {
    apiVersion: GROUP_VERSION_V1,
    kind: KIND,
    metadata: { name: 'nightly-etcd', namespace },
    spec: {
      schedule: '0 2 * * *',
      timeZone: 'Etc/UTC',
      source: { type: 'Etcd', etcd: { endpoints: ['https://etcd-0.etcd:2379'], tlsSecretName: 'etcd-client-tls' } },
      destination: { persistentVolumeClaim: { claimName: 'etcd-backups', path: 'nightly' } },
      retention: { keepDaily: 7, keepWeekly: 4, keepMonthly: 6 },
    },
  };
}

/**
 * The lesson's example, `kubelings/nightly-etcd`, with its Namespace. Applied last (Argo CD wave 2,
 * and SkipDryRunOnMissingResource so the first sync does not fail before the CRD exists).
 */
export class ExampleSchedule extends Construct {
  /** The BackupSchedule, through the construct users import (validated at synth). */
  public readonly schedule: BackupScheduleConstruct<typeof GROUP_VERSION_V1>;

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
      apiVersion: GROUP_VERSION_V1,
      metadata: {
        ...example.metadata,
        labels,
        annotations: { ...syncWave(SyncWave.example), 'argocd.argoproj.io/sync-options': 'SkipDryRunOnMissingResource=true' },
      },
      spec: example.spec,
    });
  }
}
