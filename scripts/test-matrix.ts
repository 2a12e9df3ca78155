// test/database-matrix, read: the test files the default-db row runs (scripts/test.sh) and those it
// leaves out with the reason (test/database-matrix.test.ts checks that every file that starts a
// server is one or the other). Lines are paths or globs from the repository's root; `!<path or
// glob>  <reason>` excludes, and needs its reason; `#` starts a comment. A line that matches no
// file is an error, never dropped.
// Usage: node scripts/test-matrix.ts <matrix file>   (prints the files to run, one a line; exit 1 with the reason)
import { existsSync, globSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Matrix {
  /** The files the default-db row runs, relative to the root, in the matrix's order. */
  run: string[];
  /** The files it leaves out, each with its reason. */
  excluded: Map<string, string>;
}

export function readMatrix(file: string, root = process.cwd()): Matrix {
  if (!existsSync(file)) throw new Error(`${file} does not exist`);
  const included: string[] = [];
  const excluded = new Map<string, string>();
  /** Files named by a line of their own (not a glob), with the line: both run and left out is a contradiction. */
  const named = new Map<string, number>();
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      const text = line.replace(/#.*/, '').trim();
      if (!text) return;
      const [first, ...rest] = text.split(/\s+/);
      const exclude = first!.startsWith('!');
      const pattern = exclude ? first!.slice(1) : first!;
      const reason = rest.join(' ');
      if (exclude && !reason) throw new Error(`${file} line ${i + 1}: the exclusion of ${pattern} gives no reason`);
      const files = globSync(pattern, { cwd: root }).sort();
      if (!files.length) throw new Error(`${file} line ${i + 1} (${first}) matches no file`);
      for (const f of files) {
        if (exclude) excluded.set(f, reason);
        else if (!included.includes(f)) included.push(f);
        if (!exclude && !/[*?[{]/.test(pattern)) named.set(f, i + 1);
      }
    });
  for (const [f, line] of named) if (excluded.has(f)) throw new Error(`${file} line ${line} runs ${f}, which another line leaves out: keep one of the two`);
  return { run: included.filter(f => !excluded.has(f)), excluded };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    console.log(readMatrix(process.argv[2] ?? 'test/database-matrix').run.join('\n'));
  } catch (e) {
    console.log((e as Error).message);
    process.exit(1);
  }
}
