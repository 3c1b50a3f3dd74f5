/**
 * A strict, streaming reader of the tar the runner writes (POSIX pax; GNU long names and base-256
 * numbers accepted too), for `verify`: every header's checksum, every numeric field octal (or base-256)
 * and not saturated without a pax record overriding it (a saturated field is what an overflowing
 * writer leaves: tar-stream wrote 2039 mtimes as 77777777777, year 2242), every pax record well
 * formed, every sparse map consistent with its entry's size, no entry cut short, the end-of-archive
 * blocks present. It hashes each entry's restored metadata ({@link metadataLine}) so the runner can
 * compare it with what it read from the volume. Memory: one header, and one pax or sparse map block.
 */
import { createHash } from 'node:crypto';
import { decodeSparseMap, type Segment } from './sparse-map.ts';
import { BLOCK, metadataLine, type EntryMetadata, type TarType } from './tar-header.ts';

/**
 * Hears of each entry as the reader decodes it (`backup restore` extracts through it; `verify` has
 * none): {@link TarSink.entry} with the metadata the digest hashes, then {@link TarSink.data} with the
 * entry's data bytes in order (a sparse file's segments back to back, its map not included).
 */
export interface TarSink {
  /** `dataBytes`: what {@link TarSink.data} will bring (a sparse file's: its segments', maybe 0). */
  entry(metadata: EntryMetadata, dataBytes: number): void;
  data(chunk: Buffer): void;
}

/** Largest pax extended header or sparse map accepted (the runner writes at most ~3 MiB of map). */
const MAX_META_BYTES = 8 << 20;
const TYPES: Readonly<Record<string, TarType>> = { '0': 'file', '\0': 'file', '7': 'file', '1': 'link', '2': 'symlink', '5': 'directory' };

/** The tar stream is damaged or holds metadata that would not extract as written. */
export class TarFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TarFormatError';
  }
}

const text = (block: Buffer, offset: number, length: number): string => {
  const field = block.subarray(offset, offset + length);
  const nul = field.indexOf(0);
  return field.subarray(0, nul === -1 ? length : nul).toString('utf8');
};

/** A numeric field: octal digits (leading spaces/zeros, NUL or space terminated) or base-256. */
function numeric(block: Buffer, offset: number, length: number, field: string, entry: string): { value: number; saturated: boolean } {
  const raw = block.subarray(offset, offset + length);
  if (raw[0]! & 0x80) {
    if (raw[0] === 0xff) throw new TarFormatError(`${entry}: ${field} is negative (base-256)`);
    let value = raw[0]! & 0x7f;
    for (let i = 1; i < length; i++) value = value * 256 + raw[i]!;
    return { value, saturated: false };
  }
  const digits = raw.toString('latin1').replace(/[\0 ]+$/, '').replace(/^ +/, '');
  if (!/^[0-7]*$/.test(digits)) throw new TarFormatError(`${entry}: ${field} field ${JSON.stringify(raw.toString('latin1'))} is not an octal number`);
  // Saturated: all the digits the writer had were 7s. 8-byte fields count from 6 digits (262143), what
  // writers with 6-digit uid/gid fields (tar-stream) leave; 12-byte ones need all 11.
  const fullWidth = length === 8 ? 6 : length - 1;
  return { value: digits === '' ? 0 : parseInt(digits, 8), saturated: digits.length >= fullWidth && /^7+$/.test(digits) };
}

/** Parses pax records; throws on a malformed one. */
function parsePax(data: Buffer, entry: string): Map<string, string> {
  const records = new Map<string, string>();
  let at = 0;
  while (at < data.length) {
    if (data[at] === 0) break;
    const space = data.indexOf(0x20, at);
    const length = space === -1 ? NaN : Number(data.subarray(at, space).toString('ascii'));
    if (!Number.isInteger(length) || length <= 0 || at + length > data.length || data[at + length - 1] !== 0x0a) throw new TarFormatError(`${entry}: malformed pax record at byte ${at}`);
    const record = data.subarray(space + 1, at + length - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq <= 0) throw new TarFormatError(`${entry}: malformed pax record ${JSON.stringify(record.slice(0, 40))}`);
    records.set(record.slice(0, eq), record.slice(eq + 1));
    at += length;
  }
  return records;
}

function paxNumber(pax: Map<string, string>, key: string, entry: string): number | undefined {
  const value = pax.get(key);
  if (value === undefined) return undefined;
  if (!/^-?[0-9]+(\.[0-9]+)?$/.test(value)) throw new TarFormatError(`${entry}: pax ${key}=${JSON.stringify(value)} is not a number`);
  return Math.floor(Number(value));
}

type State =
  | { kind: 'header' }
  | { kind: 'meta'; purpose: 'pax' | 'longname' | 'longlink' | 'global' | 'sparse'; need: number; skipAfter: number }
  /** `remaining` bytes to pass over, the first `data` of them the entry's data (for the sink). */
  | { kind: 'skip'; remaining: number; data: number }
  | { kind: 'end'; zeroBlocks: number };

/** Feed it the uncompressed tar in chunks of any size, then call {@link TarReader.finish}. */
export class TarReader {
  #state: State = { kind: 'header' };
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #pax = new Map<string, string>();
  #longName: string | undefined;
  #longLink: string | undefined;
  /** The ustar header whose sparse map is being read. */
  #sparseEntry: { line: Omit<Parameters<typeof metadataLine>[0], 'segments'>; size: number; mapSoFar: Buffer } | undefined;
  readonly #metadata = createHash('sha256');
  /** Entries (files, links, symlinks, directories). */
  entries = 0;

  /** @param sink hears of every entry and its data; none for a plain verification. */
  constructor(private readonly sink?: TarSink) {}

  /** Consumes a chunk; throws {@link TarFormatError}. */
  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      const state = this.#state;
      if (state.kind === 'skip') {
        const n = Math.min(state.remaining, chunk.length - at);
        if (state.data > 0 && this.sink) this.sink.data(chunk.subarray(at, at + Math.min(n, state.data)));
        state.data = Math.max(0, state.data - n);
        state.remaining -= n;
        at += n;
        if (state.remaining === 0) this.#state = { kind: 'header' };
        continue;
      }
      const need = state.kind === 'meta' ? state.need : BLOCK;
      const n = Math.min(need - this.#pendingBytes, chunk.length - at);
      this.#pending.push(chunk.subarray(at, at + n));
      this.#pendingBytes += n;
      at += n;
      if (this.#pendingBytes < need) continue;
      const data = Buffer.concat(this.#pending, this.#pendingBytes);
      this.#pending = [];
      this.#pendingBytes = 0;
      if (state.kind === 'meta') this.#meta(state, data);
      else if (state.kind === 'end') this.#endBlock(state, data);
      else this.#header(data);
    }
  }

  /** Checks the archive ended properly; returns the metadata digest. */
  finish(): { metadataSha256: string } {
    const state = this.#state;
    if (state.kind === 'skip' || state.kind === 'meta' || this.#pendingBytes > 0) throw new TarFormatError('the archive is truncated: an entry is cut short');
    if (state.kind !== 'end' || state.zeroBlocks < 2) throw new TarFormatError('the archive is truncated: no end-of-archive blocks');
    return { metadataSha256: this.#metadata.digest('hex') };
  }

  #endBlock(state: Extract<State, { kind: 'end' }>, block: Buffer): void {
    // After the two zero blocks only zero padding may follow (GNU tar pads to its record size).
    if (block.some((b) => b !== 0)) {
      if (state.zeroBlocks < 2) throw new TarFormatError('a lone zero block in the middle of the archive');
      throw new TarFormatError('data after the end-of-archive blocks');
    }
    state.zeroBlocks++;
  }

  #header(block: Buffer): void {
    if (block.every((b) => b === 0)) {
      this.#state = { kind: 'end', zeroBlocks: 1 };
      return;
    }
    const entryName = this.#longName ?? this.#pax.get('path') ?? (text(block, 345, 155) ? `${text(block, 345, 155)}/${text(block, 0, 100)}` : text(block, 0, 100));
    const where = `entry ${this.entries + 1} (${JSON.stringify(entryName)})`;
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
    if (numeric(block, 148, 8, 'checksum', where).value !== sum) throw new TarFormatError(`${where}: header checksum mismatch (damaged tar)`);
    const magic = block.subarray(257, 263).toString('latin1');
    if (magic !== 'ustar\0' && magic !== 'ustar ') throw new TarFormatError(`${where}: not a ustar header`);
    const flag = String.fromCharCode(block[156]!);
    const size = this.#field(block, 124, 12, 'size', where);
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    const metaPurpose = ({ x: 'pax', g: 'global', L: 'longname', K: 'longlink' } as const)[flag as 'x' | 'g' | 'L' | 'K'];
    if (metaPurpose) {
      if (size > MAX_META_BYTES) throw new TarFormatError(`${where}: extended header of ${size} bytes`);
      this.#state = size === 0 ? { kind: 'header' } : { kind: 'meta', purpose: metaPurpose, need: size, skipAfter: padded - size };
      return;
    }
    const type = TYPES[flag];
    if (type === undefined) throw new TarFormatError(`${where}: entry type ${JSON.stringify(flag)} is not one the runner writes (file, link, symlink, directory)`);
    const pax = this.#pax;
    const line = {
      name: entryName,
      type,
      mode: this.#field(block, 100, 8, 'mode', where),
      uid: this.#field(block, 108, 8, 'uid', where),
      gid: this.#field(block, 116, 8, 'gid', where),
      mtime: this.#field(block, 136, 12, 'mtime', where),
      size: type === 'file' ? size : 0,
      linkname: type === 'link' || type === 'symlink' ? (this.#longLink ?? pax.get('linkpath') ?? text(block, 157, 100)) : undefined,
    };
    this.#pax = new Map();
    this.#longName = undefined;
    this.#longLink = undefined;
    this.entries++;
    const dataBytes = type === 'file' ? size : 0;
    if (pax.get('GNU.sparse.major') !== undefined || pax.get('GNU.sparse.minor') !== undefined) {
      if (pax.get('GNU.sparse.major') !== '1' || pax.get('GNU.sparse.minor') !== '0' || type !== 'file') throw new TarFormatError(`${where}: unsupported sparse format ${pax.get('GNU.sparse.major')}.${pax.get('GNU.sparse.minor')}`);
      const realName = pax.get('GNU.sparse.name');
      const realSize = paxNumber(pax, 'GNU.sparse.realsize', where);
      if (!realName || realSize === undefined) throw new TarFormatError(`${where}: sparse entry without GNU.sparse.name and GNU.sparse.realsize`);
      if (size < BLOCK) throw new TarFormatError(`${where}: sparse entry too short for its map`);
      this.#sparseEntry = { line: { ...line, name: realName, size: realSize }, size, mapSoFar: Buffer.alloc(0) };
      // The map is read a block at a time until it is complete: its length is not in any header.
      this.#state = { kind: 'meta', purpose: 'sparse', need: BLOCK, skipAfter: 0 };
      return;
    }
    this.#emit({ ...line, segments: [] }, dataBytes);
    this.#state = dataBytes === 0 ? { kind: 'header' } : { kind: 'skip', remaining: Math.ceil(dataBytes / BLOCK) * BLOCK, data: dataBytes };
  }

  /** A numeric ustar field, a pax record overriding it; a saturated field without one is an overflow. */
  #field(block: Buffer, offset: number, length: number, field: 'size' | 'mode' | 'uid' | 'gid' | 'mtime' | 'checksum', where: string): number {
    const parsed = numeric(block, offset, length, field, where);
    const override = field === 'mode' ? undefined : paxNumber(this.#pax, field, where);
    if (override !== undefined) return override;
    if (parsed.saturated && field !== 'mode') throw new TarFormatError(`${where}: ${field} field is saturated (all 7s) with no pax record: the value overflowed the header and would not extract as it was`);
    return parsed.value;
  }

  #emit(metadata: EntryMetadata, dataBytes: number): void {
    this.#metadata.update(metadataLine(metadata));
    this.sink?.entry(metadata, dataBytes);
  }

  #meta(state: Extract<State, { kind: 'meta' }>, data: Buffer): void {
    const where = `entry ${this.entries + 1}`;
    switch (state.purpose) {
      case 'pax':
        for (const [key, value] of parsePax(data, where)) this.#pax.set(key, value);
        break;
      case 'global':
        parsePax(data, where);
        break;
      case 'longname':
        this.#longName = text(data, 0, data.length);
        break;
      case 'longlink':
        this.#longLink = text(data, 0, data.length);
        break;
      case 'sparse':
        this.#sparse(data);
        return;
    }
    this.#state = state.skipAfter === 0 ? { kind: 'header' } : { kind: 'skip', remaining: state.skipAfter, data: 0 };
  }

  #sparse(block: Buffer): void {
    const entry = this.#sparseEntry!;
    const where = `entry ${this.entries} (${JSON.stringify(entry.line.name)})`;
    const data = entry.mapSoFar.length === 0 ? block : Buffer.concat([entry.mapSoFar, block]);
    const map = decodeSparseMap(data);
    if (map === undefined && data.length + BLOCK <= Math.min(entry.size, MAX_META_BYTES)) {
      entry.mapSoFar = data;
      this.#state = { kind: 'meta', purpose: 'sparse', need: BLOCK, skipAfter: 0 };
      return;
    }
    if (!map) throw new TarFormatError(`${where}: sparse map is malformed, cut short or larger than ${MAX_META_BYTES} bytes`);
    let end = 0;
    let stored = 0;
    const segments: Segment[] = [];
    for (const segment of map.segments) {
      if (segment.offset < end || segment.offset + segment.length > entry.line.size) throw new TarFormatError(`${where}: sparse map segment ${segment.offset}+${segment.length} overlaps or lies beyond the real size ${entry.line.size}`);
      end = segment.offset + segment.length;
      stored += segment.length;
      if (segment.length > 0) segments.push(segment);
    }
    if (map.mapBytes + stored !== entry.size) throw new TarFormatError(`${where}: sparse map promises ${stored} data bytes but the entry holds ${entry.size - map.mapBytes}`);
    this.#emit({ ...entry.line, segments }, stored);
    this.#sparseEntry = undefined;
    const rest = Math.ceil(entry.size / BLOCK) * BLOCK - data.length;
    this.#state = rest === 0 ? { kind: 'header' } : { kind: 'skip', remaining: rest, data: stored };
  }
}
