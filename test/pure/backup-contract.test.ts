/**
 * The contract between buildCronJob and the runner (src/pure/backup-contract.ts): every golden input's
 * container arguments and environment, as the kubelet would hand them to the `backup` subcommand, parse
 * into the run the spec asks for. A renamed or dropped flag on either side fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { isV1, type AnyBackupSchedule } from '../../src/api/index.ts';
import { parseBackupArgs } from '../../src/backup/backup-args.ts';
import { toV1 } from '../../src/conversion/index.ts';
import { buildCronJob } from '../../src/pure/index.ts';

const INPUTS = new URL('../golden/inputs/', import.meta.url).pathname;
const all = readdirSync(INPUTS).filter((f) => f.endsWith('.yaml')).sort().map((file) => [file, parse(readFileSync(INPUTS + file, 'utf8')) as AnyBackupSchedule] as const);
/** Encryption to a claim (`--destination-dir` with `--age-recipient`) must be among the inputs. */
const toClaimEncrypted = (input: AnyBackupSchedule): boolean => {
  const spec = (isV1(input) ? input : toV1(input)).spec;
  return spec.encryption !== undefined && spec.destination.objectStore === undefined;
};
const cases = all;

describe('buildCronJob and the backup runner agree on the command line', () => {
  it('the golden inputs include encryption to a claim', () => {
    expect(all.some(([, input]) => toClaimEncrypted(input))).toBe(true);
  });

  it.each(cases)('%s: the runner parses the container\'s arguments into the spec\'s run', (_file, input) => {
    const container = buildCronJob(input).spec!.jobTemplate.spec!.template.spec!.containers[0]!;
    const [subcommand, ...args] = container.args ?? [];
    expect(subcommand).toBe('backup');
    // The plain env values (secretKeyRef ones are the kubelet's to fill); the runner reads the name from it.
    const env = Object.fromEntries((container.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));
    const command = parseBackupArgs(args, env);
    const spec = (isV1(input) ? input : toV1(input)).spec;
    const store = spec.destination.objectStore;
    if (store === undefined) {
      const recipients = spec.encryption?.ageRecipients ?? [];
      // Encrypted to a claim: the bucket's pipeline (zstd, then age) into the directory.
      expect(command.kind).toBe('run');
      expect(command.kind === 'run' ? command.encryption : 'not a run').toEqual(recipients.length > 0 ? { ageRecipients: recipients, compression: 'zstd' } : undefined);
      return;
    }
    expect(command).toMatchObject({
      kind: 'upload',
      target: {
        location: { bucket: store.bucket, prefix: store.prefix ?? '' },
        ageRecipients: spec.encryption?.ageRecipients ?? [],
        s3: { endpoint: store.endpoint, region: store.region, forcePathStyle: store.forcePathStyle === true, allowHttp: store.allowHttp === true, caFile: store.caSecretName === undefined ? undefined : '/etc/backup/s3-ca/ca.crt' },
      },
    });
  });
});
