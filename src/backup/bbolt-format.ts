/**
 * Just enough of bbolt's on-disk format (go.etcd.io/bbolt `page.go`, `db.go`) to check that an etcd
 * snapshot is a sound database and to read what `etcdutl snapshot status` prints: the revision (the
 * newest key of the `key` bucket) and the total key count (entries of every top-level bucket).
 *
 * Layout, little-endian: every page starts with a 16-byte header {id u64, flags u16, count u16,
 * overflow u32}; pages 0 and 1 are meta pages whose body (at offset 16) is {magic u32 = 0xED0CDAED,
 * version u32 = 2, pageSize u32, flags u32, root bucket {root u64, sequence u64}, freelist u64, pgid u64,
 * txid u64, checksum u64 = FNV-1a-64 of the 56 bytes before it}; the valid meta with the higher txid is
 * current. Branch elements are {pos u32, ksize u32, pgid u64}, leaf elements {flags u32, pos u32,
 * ksize u32, vsize u32}, `pos` counted from the element itself. A bucket value is {root u64, sequence
 * u64}, followed by an inline page when root is 0.
 */

/** Page header size. */
export const PAGE_HEADER_SIZE = 16;
const BRANCH = 0x01;
const LEAF = 0x02;
const META = 0x04;
const BUCKET_LEAF = 0x01;
const MAGIC = 0xed0cdaed;

/** The current meta page of a bbolt file. */
export interface BoltMeta {
  readonly pageSize: number;
  /** Root page of the root bucket (the tree of top-level bucket names). */
  readonly rootPage: bigint;
  /** High-water mark: pages at or beyond it are not part of the database. */
  readonly pageCount: bigint;
  readonly txid: bigint;
}

/** FNV-1a 64-bit, bbolt's meta checksum. */
function fnv64a(bytes: Uint8Array): bigint {
  let hash = 0xcbf29ce484222325n;
  for (const byte of bytes) hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * 0x100000001b3n);
  return hash;
}

function metaAt(buf: Buffer, offset: number): BoltMeta | undefined {
  if (buf.length < offset + PAGE_HEADER_SIZE + 64) return undefined;
  if ((buf.readUInt16LE(offset + 8) & META) === 0) return undefined;
  const body = offset + PAGE_HEADER_SIZE;
  if (buf.readUInt32LE(body) !== MAGIC || buf.readUInt32LE(body + 4) !== 2) return undefined;
  if (fnv64a(buf.subarray(body, body + 56)) !== buf.readBigUInt64LE(body + 56)) return undefined;
  return { pageSize: buf.readUInt32LE(body + 8), rootPage: buf.readBigUInt64LE(body + 16), pageCount: buf.readBigUInt64LE(body + 40), txid: buf.readBigUInt64LE(body + 48) };
}

/**
 * The current meta from the file's first bytes (at least two pages: pass 64 KiB, the largest page
 * size bbolt uses). `undefined` when neither meta page is valid: not a bbolt file, or a damaged one.
 */
export function readMeta(head: Buffer): BoltMeta | undefined {
  const first = metaAt(head, 0);
  const second = metaAt(head, first?.pageSize ?? (head.length >= 8192 ? head.readUInt32LE(PAGE_HEADER_SIZE + 8) : 4096));
  const metas = [first, second].filter((m): m is BoltMeta => m !== undefined && m.pageSize >= 512 && (m.pageSize & (m.pageSize - 1)) === 0);
  if (metas.length === 0) return undefined;
  return metas.reduce((a, b) => (b.txid > a.txid ? b : a));
}

/**
 * Reads a page by id: the whole page (header included, overflow pages appended), or only its 16-byte
 * header when `headerOnly` (counting the leaves of a large bucket needs nothing else).
 */
export type PageReader = (pgid: bigint, headerOnly: boolean) => Promise<Buffer>;

/** What the bucket walk found. */
export interface BoltStats {
  /** Newest revision in etcd's `key` bucket (0 when empty). */
  readonly revision: number;
  /** Entries over all top-level buckets, as `etcdutl snapshot status` counts them. */
  readonly totalKeys: number;
  /** Names of the top-level buckets. */
  readonly buckets: readonly string[];
}

/** A structural problem in the database. */
export class BoltFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BoltFormatError';
  }
}

interface Tree {
  /** Sum of leaf element counts. */
  count: number;
  /** The last (largest) key of the tree, if any. */
  lastKey: Buffer | undefined;
}

/**
 * Walks one B+tree from `page`, counting leaf entries; reads the last key only when `wantLastKey` (the
 * rightmost path), so other leaves cost a header read each.
 */
async function walk(page: Buffer, read: PageReader, meta: BoltMeta, depth: number, wantLastKey: boolean, onLeaf?: (page: Buffer) => void): Promise<Tree> {
  if (depth > 64) throw new BoltFormatError('tree deeper than 64 levels: the page graph has a cycle');
  const flags = page.readUInt16LE(8);
  const count = page.readUInt16LE(10);
  if (flags & LEAF) {
    onLeaf?.(page);
    if (count === 0 || !wantLastKey) return { count, lastKey: undefined };
    const elem = PAGE_HEADER_SIZE + (count - 1) * 16;
    const pos = elem + page.readUInt32LE(elem + 4);
    return { count, lastKey: page.subarray(pos, pos + page.readUInt32LE(elem + 8)) };
  }
  if ((flags & BRANCH) === 0) throw new BoltFormatError(`page ${page.readBigUInt64LE(0)}: expected a branch or leaf page, found flags 0x${flags.toString(16)}`);
  const tree: Tree = { count: 0, lastKey: undefined };
  for (let i = 0; i < count; i++) {
    const elem = PAGE_HEADER_SIZE + i * 16;
    const child = page.readBigUInt64LE(elem + 8);
    if (child < 2n || child >= meta.pageCount) throw new BoltFormatError(`branch page ${page.readBigUInt64LE(0)} points at page ${child}, outside 2..${meta.pageCount - 1n}`);
    const last = wantLastKey && i === count - 1;
    const header = await read(child, true);
    const childFlags = header.readUInt16LE(8);
    const needed = (childFlags & BRANCH) !== 0 || last || onLeaf !== undefined;
    const sub = await walk(needed ? await read(child, false) : header, read, meta, depth + 1, last, onLeaf);
    tree.count += sub.count;
    if (sub.lastKey !== undefined) tree.lastKey = sub.lastKey;
  }
  return tree;
}

/** The root page of a bucket from its leaf value: a page read by id, or the inline page after the header. */
async function bucketRoot(value: Buffer, read: PageReader): Promise<Buffer> {
  const root = value.readBigUInt64LE(0);
  return root === 0n ? value.subarray(16) : read(root, false);
}

/**
 * Walks the root bucket and every top-level bucket: counts keys the way `etcdutl snapshot status` does
 * and reads the revision from the last key of `key` (8-byte big-endian main revision, `_`, sub revision).
 */
export async function readBoltStats(meta: BoltMeta, read: PageReader): Promise<BoltStats> {
  const buckets: { name: string; value: Buffer }[] = [];
  await walk(await read(meta.rootPage, false), read, meta, 0, false, (leaf) => {
    const count = leaf.readUInt16LE(10);
    for (let i = 0; i < count; i++) {
      const elem = PAGE_HEADER_SIZE + i * 16;
      if ((leaf.readUInt32LE(elem) & BUCKET_LEAF) === 0) continue;
      const pos = elem + leaf.readUInt32LE(elem + 4);
      const ksize = leaf.readUInt32LE(elem + 8);
      const vsize = leaf.readUInt32LE(elem + 12);
      buckets.push({ name: leaf.subarray(pos, pos + ksize).toString('latin1'), value: Buffer.from(leaf.subarray(pos + ksize, pos + ksize + vsize)) });
    }
  });
  let totalKeys = 0;
  let revision = 0;
  for (const { name, value } of buckets) {
    const tree = await walk(await bucketRoot(value, read), read, meta, 1, name === 'key');
    totalKeys += tree.count;
    if (name === 'key' && tree.lastKey !== undefined) {
      if (tree.lastKey.length < 17) throw new BoltFormatError(`bucket "key": last key is ${tree.lastKey.length} bytes, an etcd revision takes 17`);
      revision = Number(tree.lastKey.readBigUInt64BE(0));
    }
  }
  return { revision, totalKeys, buckets: buckets.map((b) => b.name) };
}
