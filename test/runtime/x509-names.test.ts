/**
 * Go's x509 refuses a certificate whose issuer or subject holds a string it cannot parse (issue 41: 0.2.0's
 * CA name, a PrintableString with '@'); goX509NameProblem applies Go's rules (crypto/x509 parser.go,
 * parseASN1String) to the names of certificates built here as raw DER, unsigned: only the names are read.
 */
import { describe, expect, it } from 'vitest';
import { goX509NameProblem } from '../../src/runtime/x509-names.ts';

/** A DER element: identifier octet, length (short or long form), contents. */
function tlv(identifier: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  const length = body.length < 0x80 ? Buffer.from([body.length]) : Buffer.from([0x82, body.length >> 8, body.length & 0xff]);
  return Buffer.concat([Buffer.from([identifier]), length, body]);
}
const SEQUENCE = 0x30;
const SET = 0x31;
const COMMON_NAME = Buffer.from([0x55, 0x04, 0x03]);

/** A Name of one commonName attribute: `bytes` (a binary string) under the ASN.1 universal `tag`. */
const name = (tag: number, bytes: string): Buffer => tlv(SEQUENCE, tlv(SET, tlv(SEQUENCE, tlv(0x06, COMMON_NAME), tlv(tag, Buffer.from(bytes, 'binary')))));

/** A certificate's PEM with these names (and, unless `v1`, the version field before the serial number), unsigned. */
function certificate(issuer: Buffer, subject: Buffer, v1 = false): string {
  const version = tlv(0xa0, tlv(0x02, Buffer.from([2])));
  const tbs = tlv(SEQUENCE, ...(v1 ? [] : [version]), tlv(0x02, Buffer.from([1])), tlv(SEQUENCE), issuer, tlv(SEQUENCE), subject);
  const der = tlv(SEQUENCE, tbs, tlv(SEQUENCE), tlv(0x03, Buffer.from([0])));
  return `-----BEGIN CERTIFICATE-----\n${der.toString('base64')}\n-----END CERTIFICATE-----\n`;
}

/** ASN.1 universal tags of the string types. */
const T = { UTF8: 12, NUMERIC: 18, PRINTABLE: 19, T61: 20, IA5: 22, VISIBLE: 26, BMP: 30 };
const utf8 = (text: string): string => Buffer.from(text, 'utf8').toString('binary');
const ok = name(T.UTF8, utf8('hook'));

describe("goX509NameProblem: Go's rules for the strings of a certificate's names", () => {
  it.each([
    ['a PrintableString with an @ (0.2.0\'s CA name)', T.PRINTABLE, 'hook-ca@1712345678', `its subject's commonName is a PrintableString holding "hook-ca@1712345678", which Go's x509 (kube-apiserver) refuses`],
    ['a PrintableString with an underscore', T.PRINTABLE, 'my_ca', `its subject's commonName is a PrintableString holding "my_ca", which Go's x509 (kube-apiserver) refuses`],
    ['a UTF8String that is not UTF-8', T.UTF8, 'hook\xff', `its subject's commonName is a UTF8String holding "hook\u00ff", which Go's x509 (kube-apiserver) refuses`],
    ['an IA5String with a byte past ASCII', T.IA5, 'caf\xe9', `its subject's commonName is an IA5String holding "caf\u00e9", which Go's x509 (kube-apiserver) refuses`],
    ['a NumericString with a letter', T.NUMERIC, '12a', `its subject's commonName is a NumericString holding "12a", which Go's x509 (kube-apiserver) refuses`],
    ['a BMPString of an odd length', T.BMP, '\x00h\x00', `its subject's commonName is a BMPString holding "\\u0000h\\u0000", which Go's x509 (kube-apiserver) refuses`],
    ['a VisibleString (a type Go does not read in a name)', T.VISIBLE, 'hook', `its subject's commonName is of ASN.1 type 26, not a string type Go's x509 reads`],
  ])('refuses %s', (_, tag, bytes, problem) => {
    expect(goX509NameProblem(certificate(ok, name(tag, bytes)))).toBe(problem);
  });

  it.each([
    ['a PrintableString within its set, with the * and & Go lets through', T.PRINTABLE, "Let's (go) +,-./:=? *.example & co"],
    ['a UTF8String with an @ and non-ASCII letters', T.UTF8, utf8('hook-ca@1712345678 Zürich')],
    ['an IA5String with an @', T.IA5, 'ca@example.com'],
    ['a NumericString', T.NUMERIC, '0123 456'],
    ['a BMPString', T.BMP, '\x00h\x00i'],
    ['a T61String of any bytes', T.T61, 'caf\xe9'],
  ])('reads %s', (_, tag, bytes) => {
    expect(goX509NameProblem(certificate(name(tag, bytes), name(tag, bytes)))).toBeUndefined();
  });

  it('checks the issuer too, in certificates with and without the version field', () => {
    const bad = name(T.PRINTABLE, 'ca@1');
    expect(goX509NameProblem(certificate(bad, ok))).toBe(`its issuer's commonName is a PrintableString holding "ca@1", which Go's x509 (kube-apiserver) refuses`);
    expect(goX509NameProblem(certificate(bad, ok, true))).toBe(`its issuer's commonName is a PrintableString holding "ca@1", which Go's x509 (kube-apiserver) refuses`);
    expect(goX509NameProblem(certificate(ok, ok, true))).toBeUndefined();
  });

  it('leaves what is not a certificate to readCertificate', () => {
    expect(goX509NameProblem('junk')).toBeUndefined();
  });
});
