/**
 * The base layer from unpacked packages, without apt or dpkg: a path two packages ship differently stops
 * the build naming both, a folder they share is one entry, every parent folder exists, the CA bundle is
 * every shipped certificate in path order, and each package gets a dpkg status stanza.
 */
import { describe, expect, it } from 'vitest';
import { baseLayer, caBundle, LayerConflictError, type UnpackedDeb } from '../../scripts/image/image-layers.ts';
import type { LayerEntry } from '../../scripts/image/tar-layer.ts';

const dir = (path: string, mode = 0o755): LayerEntry => ({ path, type: 'directory', mode, uid: 0, gid: 0 });
const file = (path: string, text: string): LayerEntry => ({ path, type: 'file', mode: 0o644, uid: 0, gid: 0, data: { bytes: Buffer.from(text) } });
const deb = (name: string, entries: LayerEntry[]): UnpackedDeb => ({ name, contents: { entries, control: `Package: ${name}\nVersion: 1.0\nArchitecture: all\n` } });
const certs = deb('ca-certificates', [file('usr/share/ca-certificates/mozilla/B.crt', 'B\n'), file('usr/share/ca-certificates/mozilla/A.crt', 'A')]);
const text = (entries: LayerEntry[], path: string): string => {
  const data = entries.find((e) => e.path === path)?.data;
  return data !== undefined && 'bytes' in data ? data.bytes.toString() : '';
};

describe('baseLayer', () => {
  it('names both packages when they ship one path differently', () => {
    const a = deb('pkg-a', [file('etc/thing', 'a')]);
    const b = deb('pkg-b', [file('etc/thing', 'b')]);
    expect(() => baseLayer([certs, a, b])).toThrow(new LayerConflictError('etc/thing', 'package pkg-a', 'package pkg-b'));
    expect(() => baseLayer([certs, deb('pkg-c', [dir('var/local', 0o2775)]), deb('pkg-d', [dir('var/local')])])).toThrow('/var/local comes from both package pkg-c and package pkg-d, differently');
  });

  it('keeps one entry for a folder two packages ship alike, and makes every missing parent folder', () => {
    const entries = baseLayer([certs, deb('pkg-a', [dir('usr'), dir('usr/lib')]), deb('pkg-b', [dir('usr'), file('usr/lib/x86_64-linux-gnu/libz.so.1', 'z')])]);
    expect(entries.filter((e) => e.path === 'usr')).toHaveLength(1);
    for (const entry of entries) {
      const parts = entry.path.split('/');
      for (let i = 1; i < parts.length; i++) expect(entries.some((e) => e.path === parts.slice(0, i).join('/') && e.type === 'directory'), entry.path).toBe(true);
    }
    expect(entries.find((e) => e.path === 'home/nonroot')).toMatchObject({ type: 'directory', mode: 0o700, uid: 65532, gid: 65532 });
    expect(entries.find((e) => e.path === 'tmp')).toMatchObject({ type: 'directory', mode: 0o1777 });
  });

  it('writes the CA bundle, passwd with nonroot, and a dpkg status stanza per package', () => {
    const entries = baseLayer([certs, deb('netbase', [file('etc/services', 'http 80/tcp\n')])]);
    expect(text(entries, 'etc/ssl/certs/ca-certificates.crt')).toBe('A\nB\n');
    expect(text(entries, 'etc/passwd')).toContain('nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n');
    expect(text(entries, 'var/lib/dpkg/status.d/netbase')).toBe('Package: netbase\nStatus: install ok installed\nVersion: 1.0\nArchitecture: all\n');
  });

  it('refuses to build a CA bundle from no certificates', () => {
    expect(() => caBundle([deb('netbase', [])])).toThrow('no certificates under /usr/share/ca-certificates');
  });
});
