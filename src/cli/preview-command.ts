import { Document } from 'yaml';
import type { Restore } from '../../imports/restore.ts';
import { GROUP_VERSION, isV1, type AnyBackupSchedule } from '../api/index.ts';
import { toV1 } from '../conversion/backupschedule-conversion.ts';
import type { CronJob } from '../pure/cron-job.ts';
import { PREVIEW_UID, previewCronJob, previewRestoreJob } from '../pure/preview.ts';
import type { Job, ResolvedSource } from '../pure/restore-job.ts';
import { serverDefaultsOf, withServerDefaults } from '../pure/server-defaults.ts';
import { EXIT_INVALID, EXIT_OK, outputFormat, parseCommandLine, UsageError, type CliIo } from './io.ts';
import { checkManifest, formatError, isBackupSchedule, isRestore } from './check-manifest.ts';
import { readInputs, type Manifest } from './inputs.ts';
import { KUBECTL_WRITE_OPTIONS } from './kubectl-yaml.ts';

/** `backupschedule preview --help`. */
export const PREVIEW_USAGE = `Usage: backupschedule preview [options] <file|dir|->...

Prints the CronJob the controller creates for each BackupSchedule in the input (kubelings.dev/v1alpha1
or kubelings.dev/v1, mixed as you like; each checked in its own version first), and the Job it creates
for each Restore, built by the controller's own code. A Restore from spec.from.backupScheduleName
needs that BackupSchedule (same namespace and name) in the input too: its destination is read there. Fields the controller does not send but the API server adds by default are
shown too, each marked "# default: set by the API server" (in JSON: listed under serverDefaults).
Input is read as validate reads it, like kubectl (YAML 1.1); the output is YAML 1.1 too, so strings
such as "on" or "010" are quoted and kubectl applies what is printed.

Options:
  -o, --output yaml|json  yaml: the CronJobs as YAML documents (default); json: a report object
      --image <image>     backup image when a spec sets none (the controller's --backup-image)
                          (default: the operator's image)
  -n, --namespace <ns>    namespace of BackupSchedules without one (default: default)
  -h, --help              show this help

Exit status:
  0  every BackupSchedule and Restore previewed
  1  an invalid BackupSchedule or Restore (its errors as validate reports them), a Restore whose
     BackupSchedule is not in the input, none found, or an input that
     cannot be read, is too large, is not text or not YAML
  2  bad command line (unknown flag, missing argument, no such file or folder)
`;

/** One restore Job of the `--output json` report. */
export interface PreviewRestoreItem {
  readonly file: string;
  readonly line: number;
  /** `namespace/name` of the Restore. */
  readonly restore: string;
  /** The Job exactly as the controller sends it. */
  readonly job: Job;
}

/** One CronJob of the `--output json` report. */
export interface PreviewItem {
  readonly file: string;
  readonly line: number;
  /** `namespace/name` of the BackupSchedule. */
  readonly backupSchedule: string;
  /** The CronJob exactly as the controller sends it. */
  readonly cronJob: CronJob;
  /** The fields the API server adds to it by default: dotted path and value. */
  readonly serverDefaults: { readonly field: string; readonly value: unknown }[];
}

const dotted = (path: readonly string[]): string => path.map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`)).join('').slice(1);

function toYaml(item: PreviewItem, assumedNamespace: boolean): string {
  // Written as YAML 1.1, so what kubectl reads back is what was printed (a claim named "on" stays a string).
  const doc = new Document(withServerDefaults(item.cronJob), KUBECTL_WRITE_OPTIONS);
  for (const { field } of item.serverDefaults) {
    const node = doc.getIn(field.split(/\.|\[|\]/).filter((s) => s !== '').map((s) => (/^\d+$/.test(s) ? Number(s) : s)), true) as { comment?: string } | undefined;
    if (node !== undefined) node.comment = ' default: set by the API server';
  }
  const notes = [
    ` CronJob of BackupSchedule ${item.backupSchedule} (${item.file}:${item.line}), as the controller creates it.`,
    ` ownerReferences[0].uid is a placeholder: the API server assigns the BackupSchedule's uid.`,
  ];
  if (assumedNamespace) notes.push(` The BackupSchedule has no namespace: previewed in ${item.cronJob.metadata?.namespace ?? ''}.`);
  doc.commentBefore = notes.join('\n');
  return doc.toString({ lineWidth: 0 });
}

/** `backupschedule preview …`; returns the exit code. */
export function previewCommand(args: readonly string[], io: CliIo): number {
  const { values, positionals } = parseCommandLine(args, {
    output: { type: 'string', short: 'o' },
    image: { type: 'string' },
    namespace: { type: 'string', short: 'n' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values['help'] === true) {
    io.stdout(PREVIEW_USAGE);
    return EXIT_OK;
  }
  const format = outputFormat(values['output'], ['yaml', 'json'] as const);
  if (positionals.length === 0) throw new UsageError('preview needs at least one file, folder or - (standard input)');
  const image = typeof values['image'] === 'string' ? values['image'] : undefined;
  const namespace = typeof values['namespace'] === 'string' ? values['namespace'] : 'default';

  let failed = false;
  const rendered: string[] = [];
  const items: PreviewItem[] = [];
  const restoreItems: PreviewRestoreItem[] = [];
  // Read everything first: a Restore may come before the BackupSchedule whose destination it reads.
  const valid: Manifest[] = [];
  readInputs(positionals, io.stdin, {
    problem: (problem) => {
      failed = true;
      io.stderr(`${formatError(problem)}\n`);
    },
    skipped: ({ path, reason }) => io.stderr(`skipped ${path}: ${reason}\n`),
    manifest: (manifest) => {
      // The errors validate reports, in the same order and words.
      const errors = checkManifest(manifest);
      for (const error of errors) io.stderr(`${formatError(error)}\n`);
      if (errors.length > 0) failed = true;
      else if (isBackupSchedule(manifest.object) || isRestore(manifest.object)) valid.push(manifest);
    },
  });
  const namespaceOf = (object: { metadata?: { namespace?: string } }): string => object.metadata?.namespace ?? namespace;
  const schedules = valid.map((m) => m.object).filter(isBackupSchedule) as AnyBackupSchedule[];
  for (const manifest of valid) {
    if (isRestore(manifest.object)) {
      const restore = manifest.object as Restore;
      const where = `${namespaceOf(restore)}/${restore.metadata?.name ?? ''}`;
      const scheduleName = restore.spec.from.backupScheduleName;
      let resolved: ResolvedSource | undefined;
      if (scheduleName !== undefined) {
        const schedule = schedules.find((s) => s.metadata?.name === scheduleName && namespaceOf(s) === namespaceOf(restore));
        if (schedule === undefined) {
          failed = true;
          io.stderr(`${manifest.file}:${manifest.lineOf('spec.from.backupScheduleName')}: ${where}: spec.from.backupScheduleName: BackupSchedule ${namespaceOf(restore)}/${scheduleName} is not in the input; give its manifest too\n`);
          continue;
        }
        // The controller reads the schedule as v1 (its storage version): the destination in that shape.
        resolved = (isV1(schedule) ? schedule : toV1({ ...schedule, apiVersion: GROUP_VERSION })).spec.destination;
      }
      const job = previewRestoreJob(restore, resolved, { namespace, ...(image === undefined ? {} : { image }) });
      restoreItems.push({ file: manifest.file, line: manifest.line, restore: where, job });
      if (format === 'yaml') rendered.push(restoreToYaml(restoreItems.at(-1)!));
      continue;
    }
    const schedule = manifest.object as AnyBackupSchedule;
    const cronJob = previewCronJob(schedule, { namespace, ...(image === undefined ? {} : { image }) });
    const item: PreviewItem = {
      file: manifest.file,
      line: manifest.line,
      backupSchedule: `${cronJob.metadata?.namespace ?? ''}/${schedule.metadata?.name ?? ''}`,
      cronJob,
      serverDefaults: serverDefaultsOf(cronJob).map(({ path, value }) => ({ field: dotted(path), value })),
    };
    items.push(item);
    if (format === 'yaml') rendered.push(toYaml(item, schedule.metadata?.namespace === undefined));
  }
  if (items.length === 0 && restoreItems.length === 0 && !failed) {
    io.stderr(`no BackupSchedule in ${positionals.join(', ')}\n`);
    return EXIT_INVALID;
  }
  if (format === 'json') io.stdout(`${JSON.stringify({ uidPlaceholder: PREVIEW_UID, items, ...(restoreItems.length === 0 ? {} : { restoreJobs: restoreItems }) }, null, 2)}\n`);
  else io.stdout(rendered.join('---\n'));
  return failed ? EXIT_INVALID : EXIT_OK;
}

/** A restore Job as a YAML document with a comment saying whose it is. */
function restoreToYaml(item: PreviewRestoreItem): string {
  const doc = new Document(item.job, KUBECTL_WRITE_OPTIONS);
  doc.commentBefore = [
    ` Job of Restore ${item.restore} (${item.file}:${item.line}), as the controller creates it.`,
    ` ownerReferences[0].uid is a placeholder: the API server assigns the Restore's uid.`,
  ].join('\n');
  return doc.toString({ lineWidth: 0 });
}
