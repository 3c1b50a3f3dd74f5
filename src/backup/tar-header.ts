/**
 * POSIX tar (pax) headers, both ways: a ustar header block plus, when a value does not fit ustar, a pax
 * extended header ('x') before it, as GNU tar's `--format=posix` writes them; and a strict decoder for
 * `backup verify`. Why not tar-stream's encoder: it writes the mtime as `(ms / 1000) | 0` (an int32: a
 * 2039 mtime becomes 2242, a 2100 one negative) and saturates uid/gid above 2097151 (OpenShift's
 * uids are ~10⁹) without a pax record; a ustar block is 60 lines, so the runner owns its encoding.
 */

/** Size of a tar block. */
export const BLOCK = 512;

/** Entry types the runner writes (ustar typeflags). */
export type TarType = 'file' | 'link' | 'symlink' | 'directory';
const TYPEFLAG: Readonly<Record<TarType, string>> = { file: '0', link: '1', symlink: '2', directory: '5' };

/** One entry's metadata, as the runner means it to be extracted. */
export interface TarEntry {
  /** Path inside the archive (directories end with '/'). */
  readonly name: string;
  readonly type: TarType;
  /** Permission bits with setuid/setgid/sticky (st_mode & 0o7777). */
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  /** Seconds since the epoch, whole (negative before 1970). */
  readonly mtime: number;
  /** Bytes of data that follow the header (0 for links, symlinks and directories). */
  readonly size: number;
  /** Target of a hard link (an earlier entry's name) or a symlink. */
  readonly linkname?: string;
  /** Further pax records (the GNU sparse 1.0 keys). */
  readonly pax?: Readonly<Record<string, string>>;
}

/** Largest value of an n-byte octal field (n - 1 digits and a terminator). */
const maxOctal = (bytes: number): number => 8 ** (bytes - 1) - 1;
const isAscii = (s: string): boolean => /^[\x01-\x7f]*$/.test(s);

/** `<len> key=value\n`, the length counting itself (pax, IEEE 1003.1 "pax Extended Header"). */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const bodyBytes = Buffer.byteLength(body);
  let digits = String(bodyBytes).length;
  while (String(bodyBytes + digits).length !== digits) digits++;
  return `${bodyBytes + digits}${body}`;
}

/** Splits a name into ustar's prefix (≤ 155) and name (≤ 100) at a '/', or undefined if it cannot. */
function splitName(name: string): { prefix: string; name: string } | undefined {
  if (!isAscii(name)) return undefined;
  if (name.length <= 100) return { prefix: '', name };
  for (let i = name.indexOf('/'); i !== -1; i = name.indexOf('/', i + 1)) {
    if (i <= 155 && name.length - i - 1 <= 100 && name.length - i - 1 > 0) return { prefix: name.slice(0, i), name: name.slice(i + 1) };
  }
  return undefined;
}

function writeOctal(block: Buffer, offset: number, bytes: number, value: number): void {
  block.write(value.toString(8).padStart(bytes - 1, '0') + '\0', offset, bytes, 'ascii');
}

/** The pax records `entry` needs, and the values its ustar fields can hold. */
function paxFor(entry: TarEntry): { records: string; fields: Fields } {
  let records = '';
  const fields: Fields = { uid: entry.uid, gid: entry.gid, mtime: entry.mtime, size: entry.size };
  if (!splitName(entry.name)) records += paxRecord('path', entry.name);
  if (entry.linkname !== undefined && (entry.linkname.length > 100 || !isAscii(entry.linkname))) records += paxRecord('linkpath', entry.linkname);
  for (const [key, bytes] of [['uid', 8], ['gid', 8], ['mtime', 12], ['size', 12]] as const) {
    const value = entry[key];
    if (value >= 0 && value <= maxOctal(bytes)) continue;
    records += paxRecord(key, String(value));
    // The ustar field gets the nearest value it can hold; pax-aware readers take the record.
    fields[key] = Math.min(Math.max(value, 0), maxOctal(bytes));
  }
  for (const [key, value] of Object.entries(entry.pax ?? {})) records += paxRecord(key, value);
  return { records, fields };
}

type Fields = { uid: number; gid: number; mtime: number; size: number };

function ustarBlock(name: string, type: string, mode: number, fields: Fields, linkname: string | undefined): Buffer {
  const block = Buffer.alloc(BLOCK);
  // A name ustar cannot hold went to a pax 'path' record: the ustar field keeps a recognisable tail.
  const split = splitName(name) ?? { prefix: '', name: Buffer.from(name).subarray(-100).toString('latin1').replace(/[^\x01-\x7f]/g, '_') };
  block.write(split.name, 0, 100, 'latin1');
  writeOctal(block, 100, 8, mode & 0o7777);
  writeOctal(block, 108, 8, fields.uid);
  writeOctal(block, 116, 8, fields.gid);
  writeOctal(block, 124, 12, fields.size);
  writeOctal(block, 136, 12, fields.mtime);
  block.write(type, 156, 1, 'ascii');
  if (linkname !== undefined && linkname.length <= 100 && isAscii(linkname)) block.write(linkname, 157, 100, 'latin1');
  block.write('ustar\u000000', 257, 8, 'latin1');
  writeOctal(block, 329, 8, 0);
  writeOctal(block, 337, 8, 0);
  block.write(split.prefix, 345, 155, 'latin1');
  block.fill(' ', 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'ascii');
  return block;
}

/** Zero bytes that pad `size` bytes of data to a whole block. */
export function padding(size: number): Buffer {
  const rest = size % BLOCK;
  return Buffer.alloc(rest === 0 ? 0 : BLOCK - rest);
}

/**
 * The header blocks of `entry`: a pax extended header (named `PaxHeaders/<base>` like GNU tar's) when
 * the name, link target, uid, gid, mtime or size does not fit ustar or extra records were given, then
 * the ustar block.
 */
export function encodeHeader(entry: TarEntry): Buffer {
  const { records, fields } = paxFor(entry);
  const ustar = ustarBlock(entry.name, TYPEFLAG[entry.type], entry.mode, fields, entry.linkname);
  if (records === '') return ustar;
  const data = Buffer.from(records, 'utf8');
  const base = entry.name.replace(/\/$/, '').split('/').at(-1) ?? '';
  const paxHeader = ustarBlock(`PaxHeaders/${base}`, 'x', entry.mode, { ...fields, size: data.length }, undefined);
  return Buffer.concat([paxHeader, data, padding(data.length), ustar]);
}

/** Two zero blocks: the end of a tar archive. */
export const END_OF_ARCHIVE = Buffer.alloc(2 * BLOCK);

/** The metadata of one entry that a restore reproduces, in the form writer and verifier both hash. */
export interface EntryMetadata extends Pick<TarEntry, 'type' | 'mode' | 'uid' | 'gid' | 'mtime'> {
  /** The path the entry extracts to (a sparse file's real name, not its `GNUSparseFile.0/` name). */
  readonly name: string;
  /** The extracted size (a sparse file's real size). */
  readonly size: number;
  readonly linkname: string | undefined;
  /** A sparse file's data segments as `offset+length` pairs; empty for a dense file. */
  readonly segments: readonly { readonly offset: number; readonly length: number }[];
}

/** One line per entry for the metadata digest: the same bytes on both sides iff the metadata round-trips. */
export function metadataLine(m: EntryMetadata): string {
  return JSON.stringify([m.name, m.type, m.mode & 0o7777, m.uid, m.gid, m.mtime, m.size, m.linkname ?? null, m.segments.map((s) => [s.offset, s.length])]) + '\n';
}
