/**
 * age streams: what the runner encrypts, the stock `age` CLI decrypts, and the reverse; the reference
 * implementation (age-encryption) decrypts it too; damage, truncation and a wrong identity fail.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { Decrypter, generateIdentity, identityToRecipient } from 'age-encryption';
import { AGE_CHUNK, ageDecryptStream, ageEncryptStream, newAgeHeader } from '../../src/backup/pipeline/age-stream.ts';

async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function encrypt(plain: Buffer, recipients: string[], pieces = 7): Promise<Buffer> {
  const header = await newAgeHeader(recipients);
  const parts = Array.from({ length: pieces }, (_, i) => plain.subarray(Math.floor((i * plain.length) / pieces), Math.floor(((i + 1) * plain.length) / pieces)));
  return collect(Readable.from(parts).pipe(ageEncryptStream(header)));
}

const decrypt = (sealed: Buffer, identities: string[]): Promise<Buffer> => collect(Readable.from([sealed.subarray(0, 100), sealed.subarray(100)]).pipe(ageDecryptStream(identities)));

describe('age streams', () => {
  const dir = mkdtempSync(join(process.env['BKS_TEST_TMP'] ?? tmpdir(), 'age-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // Sizes around the 64 KiB chunk edges, where the last-chunk flag is easiest to get wrong.
  const sizes = [0, 1, AGE_CHUNK - 1, AGE_CHUNK, AGE_CHUNK + 1, 2 * AGE_CHUNK, 3 * AGE_CHUNK + 12345];

  it.each(sizes)('the age CLI decrypts what the runner encrypted (%i bytes), for each of two recipients', async (size) => {
    const plain = randomBytes(size);
    const [a, b] = [join(dir, `a-${size}.txt`), join(dir, `b-${size}.txt`)];
    for (const key of [a, b]) execFileSync('age-keygen', ['-o', key], { stdio: 'ignore' });
    const recipients = [a, b].map((key) => execFileSync('age-keygen', ['-y', key], { encoding: 'utf8' }).trim());
    const sealed = await encrypt(plain, recipients);
    writeFileSync(join(dir, 'sealed.age'), sealed);
    for (const key of [a, b]) expect(execFileSync('age', ['-d', '-i', key, join(dir, 'sealed.age')]).equals(plain)).toBe(true);
  });

  it.each(sizes)('decrypts what the age CLI encrypted (%i bytes), and age-encryption agrees with the runner', async (size) => {
    const plain = randomBytes(size);
    const identity = await generateIdentity();
    const recipient = await identityToRecipient(identity);
    writeFileSync(join(dir, 'plain'), plain);
    const sealed = execFileSync('age', ['-r', recipient, join(dir, 'plain')]);
    expect((await decrypt(sealed, [identity])).equals(plain)).toBe(true);
    const ours = await encrypt(plain, [recipient]);
    const reference = new Decrypter();
    reference.addIdentity(identity);
    expect(Buffer.from(await reference.decrypt(ours)).equals(plain)).toBe(true);
  });

  it('fails on a flipped byte, a truncation, a dropped chunk and a wrong identity', async () => {
    const identity = await generateIdentity();
    const plain = randomBytes(3 * AGE_CHUNK);
    const sealed = await encrypt(plain, [await identityToRecipient(identity)]);
    const flipped = Buffer.from(sealed);
    flipped.writeUInt8(flipped.readUInt8(sealed.length - 1000) ^ 1, sealed.length - 1000);
    await expect(decrypt(flipped, [identity])).rejects.toThrow(/failed authentication/);
    // Cut at a chunk boundary: every remaining chunk authenticates, but none carries the last-chunk flag.
    const headerLength = sealed.length - (plain.length + 3 * 16);
    await expect(decrypt(sealed.subarray(0, headerLength + 2 * (AGE_CHUNK + 16)), [identity])).rejects.toThrow(/failed authentication/);
    await expect(decrypt(Buffer.concat([sealed.subarray(0, headerLength + AGE_CHUNK + 16), sealed.subarray(headerLength + 2 * (AGE_CHUNK + 16))]), [identity])).rejects.toThrow(/failed authentication/);
    await expect(decrypt(sealed.subarray(0, 40), [identity])).rejects.toThrow(/ends inside its header/);
    await expect(decrypt(sealed, [await generateIdentity()])).rejects.toThrow(/no identity matched .*wrong --identity/);
    await expect(decrypt(Buffer.from('not age at all\n--- x\n'.padEnd(200, 'y')), [identity])).rejects.toThrow(/not an age file/);
  });

  it('refuses a recipient that is not one, naming the flag', async () => {
    await expect(newAgeHeader(['age1notarecipient'])).rejects.toThrow(/--age-recipient: "age1notarecipient" is not an age recipient/);
  });

  it('each file gets a fresh key and nonce', async () => {
    const recipient = await identityToRecipient(await generateIdentity());
    const [x, y] = await Promise.all([newAgeHeader([recipient]), newAgeHeader([recipient])]);
    expect(x.key.equals(y.key)).toBe(false);
  });
});
