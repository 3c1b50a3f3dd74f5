/**
 * Command line of `migrate-storage` (the controller image's subcommand), parsed with `node:util`
 * `parseArgs` ({@link parseFlags}): a mistake is a {@link MigrateStorageUsageError} naming the flag and the value; exit 2.
 *
 *   migrate-storage [--kubeconfig <path>] [--crd <name>] [--concurrency <n>] [--page-size <n>] [--force]
 */
import { parseFlags } from '../runtime/parse-flags.ts';

/** The parsed flags. */
export interface MigrateStorageOptions {
  /** `--kubeconfig`: kubeconfig file. @default undefined (the in-cluster service account) */
  readonly kubeconfig: string | undefined;
  /** `--crd`: the CRD whose objects are rewritten. @default the `defaultCrd` given to the parser */
  readonly crdName: string;
  /** `--concurrency`: rewrites in flight, 1-256. @default 16 */
  readonly concurrency: number;
  /** `--page-size`: objects per LIST page, 1-10000. @default 500 */
  readonly pageSize: number;
  /** `--force`: rewrite even when status.storedVersions is already the storage version alone. @default false */
  readonly force: boolean;
}

/** What the command line asks for. */
export type MigrateStorageCommand = { readonly kind: 'run'; readonly options: MigrateStorageOptions } | { readonly kind: 'help' };

/** A command-line mistake; exit code 2. */
export class MigrateStorageUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrateStorageUsageError';
  }
}

/** The `--help` text, naming the default CRD. */
export function migrateStorageUsage(defaultCrd: string): string {
  return `Usage: migrate-storage [flags]

Rewrites every object of a custom resource in the CRD's storage version, then sets the CRD's
status.storedVersions to that version alone, so the old versions can be removed from the CRD.
Safe to run twice; a run that stops early leaves status.storedVersions alone: run it again.

Flags:
  --kubeconfig <path>     kubeconfig file (default: in-cluster service account)
  --crd <name>            the CustomResourceDefinition (default: ${defaultCrd})
  --concurrency <n>       rewrites in flight, 1-256 (default: 16)
  --page-size <n>         objects per LIST page, 1-10000 (default: 500)
  --force                 rewrite even if status.storedVersions is already the storage version alone
  --help                  print this help

Exit codes: 0 migrated (or nothing to migrate); 1 some objects not rewritten, interrupted, or an API
failure (status.storedVersions untouched); 2 usage, or a CRD that cannot be migrated; 3 incomplete:
every object rewritten but those the server refuses as they are (each logged with the server's message
and how to fix it; status.storedVersions untouched): fix or delete them and run again.
`;
}

/** A CRD name: `<plural>.<group>`, a DNS-1123 subdomain with at least one dot. */
const CRD_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;

function integer(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) throw new MigrateStorageUsageError(`--${flag}: expected an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

/** Parses the arguments after `migrate-storage`. Throws {@link MigrateStorageUsageError}. */
export function parseMigrateStorageArgs(argv: readonly string[], defaultCrd: string): MigrateStorageCommand {
  const values = parseFlags(argv, {
    kubeconfig: { type: 'string' },
    crd: { type: 'string' },
    concurrency: { type: 'string' },
    'page-size': { type: 'string' },
    force: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  }, MigrateStorageUsageError);
  if (values.help) return { kind: 'help' };
  if (values.kubeconfig === '') throw new MigrateStorageUsageError('--kubeconfig: must not be empty');
  const crdName = values.crd ?? defaultCrd;
  if (crdName.length > 253 || !CRD_NAME.test(crdName)) {
    throw new MigrateStorageUsageError(`--crd: ${JSON.stringify(crdName)} is not a CRD name (<plural>.<group>, lower case, e.g. ${defaultCrd})`);
  }
  return {
    kind: 'run',
    options: {
      kubeconfig: values.kubeconfig,
      crdName,
      concurrency: integer('concurrency', values.concurrency ?? '16', 1, 256),
      pageSize: integer('page-size', values['page-size'] ?? '500', 1, 10_000),
      force: values.force ?? false,
    },
  };
}
