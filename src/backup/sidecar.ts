/**
 * The `.sha256` sidecar in `sha256sum` format (`<hex>  <file name>\n`), so `sha256sum -c` works in the
 * destination directory.
 */

/** The sidecar's content for `fileName` with digest `sha256`. */
export function formatSidecar(sha256: string, fileName: string): string {
  return `${sha256}  ${fileName}\n`;
}

/** The digest a sidecar records for `fileName`; `undefined` when the content is not a line for it. */
export function parseSidecar(content: string, fileName: string): string | undefined {
  const match = /^([0-9a-f]{64}) [ *](.+)\n?$/.exec(content);
  return match && match[2] === fileName ? match[1] : undefined;
}
