/** The runner's multipart upload against a recording stand-in for the S3 client (no network). */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import { DeleteObjectsCommand, UploadPartCommand } from '@aws-sdk/client-s3';
import { createS3Client } from '../../src/backup/object-store/s3-client.ts';
import { MultipartUpload } from '../../src/backup/object-store/s3-multipart.ts';

interface Sent {
  readonly name: string;
  readonly input: Record<string, unknown>;
}

/** Records every command; UploadPart answers with the body's MD5 as S3 does; `failPart` refuses one. */
function recordingClient(failPart?: number): { client: S3Client; sent: Sent[] } {
  const sent: Sent[] = [];
  const client = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      // A copy of the body as it was sent: the upload reuses a part's buffer once its request is over.
      const body = command.input['Body'];
      sent.push({ name: command.constructor.name, input: Buffer.isBuffer(body) ? { ...command.input, Body: Buffer.from(body) } : command.input });
      await Promise.resolve();
      switch (command.constructor.name) {
        case 'CreateMultipartUploadCommand':
          return { UploadId: 'u-1' };
        case 'UploadPartCommand':
          if (command.input['PartNumber'] === failPart) throw Object.assign(new Error('refused'), { name: 'InvalidDigest' });
          return { ETag: `"${createHash('md5').update(command.input['Body'] as Buffer).digest('hex')}"` };
        default:
          return {};
      }
    },
  } as unknown as S3Client;
  return { client, sent };
}

describe('MultipartUpload', () => {
  it('cuts parts of the size asked, doubles it every 1,000 parts, and computes the ETag S3 gives a multipart object', async () => {
    const { client, sent } = recordingClient();
    const upload = await MultipartUpload.start({ client, bucket: 'b', key: 'k', partSize: 16, concurrency: 2 });
    const data = Buffer.alloc(1000 * 16 + 40);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7) % 251;
    // Uneven pieces, so parts span several writes.
    for (let offset = 0; offset < data.length; offset += 7) await upload.write(data.subarray(offset, offset + 7));
    const result = await upload.finish();
    await upload.complete();
    const parts = sent.filter((s) => s.name === 'UploadPartCommand').sort((a, b) => (a.input['PartNumber'] as number) - (b.input['PartNumber'] as number));
    expect(parts.map((p) => (p.input['Body'] as Buffer).length)).toEqual([...Array<number>(1000).fill(16), 32, 8]);
    expect(Buffer.concat(parts.map((p) => p.input['Body'] as Buffer)).equals(data)).toBe(true);
    const md5s = parts.map((p) => createHash('md5').update(p.input['Body'] as Buffer).digest());
    expect(result).toEqual({ size: data.length, sha256: createHash('sha256').update(data).digest('hex'), expectedEtag: `"${createHash('md5').update(Buffer.concat(md5s)).digest('hex')}-1002"`, parts: 1002 });
    for (const part of parts) expect(part.input['ContentMD5']).toBe(createHash('md5').update(part.input['Body'] as Buffer).digest('base64'));
    const complete = sent.at(-1)!;
    expect(complete.name).toBe('CompleteMultipartUploadCommand');
    expect((complete.input['MultipartUpload'] as { Parts: { PartNumber: number }[] }).Parts.map((p) => p.PartNumber)).toEqual(parts.map((p) => p.input['PartNumber']));
  });

  it('an empty object is one empty part; nothing is visible before complete()', async () => {
    const { client, sent } = recordingClient();
    const upload = await MultipartUpload.start({ client, bucket: 'b', key: 'k' });
    expect((await upload.finish()).parts).toBe(1);
    expect(sent.map((s) => s.name)).toEqual(['CreateMultipartUploadCommand', 'UploadPartCommand']);
  });

  it('a refused part fails the next write or finish; abort waits for parts in flight, then aborts', async () => {
    const { client, sent } = recordingClient(2);
    const upload = await MultipartUpload.start({ client, bucket: 'b', key: 'k', partSize: 4, concurrency: 2 });
    await expect((async () => {
      for (let i = 0; i < 20; i++) await upload.write(Buffer.alloc(4, i));
      await upload.finish();
    })()).rejects.toThrow('refused');
    await upload.abort();
    expect(sent.at(-1)).toEqual({ name: 'AbortMultipartUploadCommand', input: { Bucket: 'b', Key: 'k', UploadId: 'u-1' } });
  });

  it('the client signs parts as UNSIGNED-PAYLOAD (Content-MD5 guards them) and gives DeleteObjects a Content-MD5', async () => {
    const client = createS3Client({ endpoint: 'https://s3.example', region: 'us-east-1', forcePathStyle: true, caFile: undefined, allowHttp: false }, { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret' });
    const seen: Record<string, string>[] = [];
    // Innermost, after signing: records the request and stops it before the network.
    client.middlewareStack.add((() => async (args: { request: unknown }) => {
      seen.push({ ...(args.request as { headers: Record<string, string> }).headers });
      throw new Error('recorded');
    }) as never, { step: 'deserialize', priority: 'low' });
    const body = Buffer.alloc(1024, 1);
    await expect(client.send(new UploadPartCommand({ Bucket: 'b', Key: 'k', UploadId: 'u', PartNumber: 1, Body: body, ContentMD5: createHash('md5').update(body).digest('base64') }))).rejects.toThrow('recorded');
    await expect(client.send(new DeleteObjectsCommand({ Bucket: 'b', Delete: { Objects: [{ Key: 'k' }] } }))).rejects.toThrow('recorded');
    client.destroy();
    const [part, deletion] = seen as [Record<string, string>, Record<string, string>];
    expect(part['x-amz-content-sha256']).toBe('UNSIGNED-PAYLOAD');
    expect(part['authorization']).toMatch(/SignedHeaders=[^,]*content-md5[^,]*x-amz-content-sha256/);
    expect(deletion['content-md5']).toMatch(/^[A-Za-z0-9+/]{22}==$/);
  });
});
