// The link check of the documents (test/docs.test.ts): every relative link and every `#anchor` of
// README.md and docs/*.md must lead somewhere. Anchors are GitHub's: a heading's text, inline
// markup removed, lower-cased, punctuation stripped, spaces turned into `-`; a repeated heading
// gets `-1`, `-2`… Headings and links inside fenced code blocks and inline code do not count.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** A markdown file's text without its fenced code blocks (their lines kept, blank, so line numbers hold) and without inline code. */
function prose(markdown: string): string[] {
  let fence: string | null = null;
  return markdown.split('\n').map(line => {
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (opening && opening[1]![0] === fence[0] && opening[1]!.length >= fence.length && line.trim() === opening[1]) fence = null;
      return '';
    }
    if (opening) {
      fence = opening[1]!;
      return '';
    }
    return line.replace(/(`+)[\s\S]*?\1/g, '');
  });
}

/** GitHub's anchor of a heading's text (github-slugger: lower case, punctuation but `-` and `_` stripped, each space a `-`). */
export function slug(heading: string): string {
  const text = heading
    .replace(/`([^`]*)`/g, '$1') // inline code: its text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // html tags
    .replace(/(\*\*|__|\*|~~)/g, ''); // emphasis markers
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a markdown file defines: one per heading outside code, repeated ones numbered as GitHub numbers them. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (opening && opening[1]![0] === fence[0] && opening[1]!.length >= fence.length && line.trim() === opening[1]) fence = null;
      continue;
    }
    if (opening) {
      fence = opening[1]!;
      continue;
    }
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

export type BrokenLink = { file: string; line: number; target: string; reason: string };

/** Every relative link and anchor of `files` (paths relative to `root`) that does not resolve. */
export function brokenLinks(root: string, files: string[]): BrokenLink[] {
  const anchorsOf = new Map<string, Set<string>>();
  const anchorsIn = (file: string) => {
    if (!anchorsOf.has(file)) anchorsOf.set(file, anchors(readFileSync(file, 'utf8')));
    return anchorsOf.get(file)!;
  };
  const broken: BrokenLink[] = [];
  for (const file of files) {
    const full = path.join(root, file);
    prose(readFileSync(full, 'utf8')).forEach((line, i) => {
      for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        const target = m[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: … — not relative
        const report = (reason: string) => broken.push({ file, line: i + 1, target, reason });
        const hash = target.indexOf('#');
        const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
        const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
        const dest = pathPart === '' ? full : path.resolve(path.dirname(full), pathPart);
        if (!existsSync(dest)) {
          report(`no file ${path.relative(root, dest)}`);
          continue;
        }
        if (anchor === null) continue;
        if (statSync(dest).isDirectory() || !dest.endsWith('.md')) {
          report('an anchor into a file that is not markdown');
          continue;
        }
        if (!anchorsIn(dest).has(anchor)) report(`no heading #${anchor} in ${path.relative(root, dest)}`);
      }
    });
  }
  return broken;
}
