import type { Construct } from 'constructs';
import { Chart } from 'cdk8s';
import { ExampleSchedule, type ExampleScheduleProps } from './example-schedule.ts';

/**
 * The example `kubelings/nightly-etcd` BackupSchedule and its Namespace, as a chart of its own:
 * `synthesize` writes it into dist/examples/, applied after dist/ (kubectl cannot map a custom
 * resource in the same invocation that creates its CRD). Names are explicit; no cdk8s hash.
 */
export class ExampleChart extends Chart {
  /** The example BackupSchedule and its Namespace. */
  public readonly example: ExampleSchedule;

  public constructor(scope: Construct, id: string, props: ExampleScheduleProps = {}) {
    super(scope, id, { disableResourceNameHashes: true });
    this.example = new ExampleSchedule(this, 'Example', props);
  }
}
