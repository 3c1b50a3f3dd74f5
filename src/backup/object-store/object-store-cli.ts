/**
 * `backup list|verify|fetch s3://…`: the object-store tools' output and exit codes, as for a directory
 * (src/backup/main.ts): verify and fetch print one JSON line (0 valid, 1 not), list prints a table
 * (1 when an object lacks its sidecar). Errors are one line on stderr.
 */
import type { BackupCommand } from '../backup-args.ts';
import { createS3Client } from './s3-client.ts';
import { fetchObject, listObjectsTable, readIdentities, verifyObject } from './s3-tools.ts';

type ToolCommand = Extract<BackupCommand, { kind: 's3-list' | 's3-verify' | 's3-fetch' }>;

/** Runs one tool; resolves with the exit code. */
export async function runObjectStoreTool(command: ToolCommand, env: Readonly<Record<string, string | undefined>>): Promise<number> {
  const client = (() => {
    try {
      return createS3Client(command.s3, env);
    } catch (err) {
      process.stderr.write(`error: ${(err as Error).message}\n`);
      return undefined;
    }
  })();
  if (!client) return 1;
  try {
    if (command.kind === 's3-list') {
      const { text, allOk } = await listObjectsTable(client, command.url);
      process.stdout.write(text);
      return allOk ? 0 : 1;
    }
    const identities = command.identityFile === undefined ? undefined : await readIdentities(command.identityFile);
    const result = command.kind === 's3-verify' ? await verifyObject(client, command.url, identities) : await fetchObject(client, command.url, identities, command.output);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    if (!result.ok) process.stderr.write(`INVALID: ${result.problem ?? ''}\n`);
    return result.ok ? 0 : 1;
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  } finally {
    client.destroy();
  }
}
