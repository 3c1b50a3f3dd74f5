/** The age identities (secret keys) the operator tools decrypt with: `--identity FILE`. */
import { readFile } from 'node:fs/promises';

/** Reads an age identity file (`AGE-SECRET-KEY-1…` lines; `#` comments as `age-keygen` writes them). */
export async function readIdentities(file: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`--identity: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err });
  }
  const keys = text.split('\n').map((l) => l.trim()).filter((l) => l.startsWith('AGE-SECRET-KEY-'));
  if (keys.length === 0) throw new Error(`--identity: ${file} holds no age identity (AGE-SECRET-KEY-1… line)`);
  return keys;
}
