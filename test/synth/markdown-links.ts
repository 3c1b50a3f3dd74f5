/**
 * Test support: the relative links of a Markdown file and the anchors GitHub gives its headings, so that
 * a test can show every link of the README and docs/ lands on a file and a heading that exist (issue 33
 * moved sections between them, and a moved section's old `#anchor` would otherwise dangle silently).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/** A relative link found in a Markdown file: the file it names (resolved) and its `#anchor`, if any. */
export interface MarkdownLink {
  readonly from: string;
  readonly target: string;
  readonly file: string;
  readonly anchor: string | undefined;
}

/** The lines of `text` outside fenced code blocks (a `](…)` inside one is code, not a link). */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (line.trimStart().startsWith('```')) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/**
 * GitHub's anchor of a heading: lower case, every character that is not a letter, digit, space, `-` or
 * `_` removed, spaces turned into `-`; a repeated anchor gets `-1`, `-2` … in document order.
 */
export function headingAnchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${String(count)}`);
  }
  return anchors;
}

/** The relative links (not `http:`, `https:` or `mailto:`) of the Markdown file at `path`, resolved against its folder. */
export function relativeLinks(path: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const line of proseLines(readFileSync(path, 'utf8'))) {
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1] ?? '';
      if (/^(https?|mailto):/.test(target)) continue;
      const [file = '', anchor] = target.split('#');
      links.push({ from: path, target, file: file === '' ? path : normalize(join(dirname(path), file)), anchor });
    }
  }
  return links;
}
